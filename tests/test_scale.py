"""The /scale subresource: autoscaling/v1 Scale over Deployments and ReplicaSets."""

from __future__ import annotations

from tests.builders import DEPLOYMENTS, deployment

SCALE = f"{DEPLOYMENTS}/web/scale"


async def test_get_scale(api):
    created = (await api.post(DEPLOYMENTS, deployment(replicas=3))).body
    scale = (await api.get(SCALE)).body
    assert scale == {
        "kind": "Scale", "apiVersion": "autoscaling/v1",
        "metadata": {k: created["metadata"][k] for k in ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")},
        "spec": {"replicas": 3}, "status": {"replicas": 0, "selector": "app=web"},
    }


async def test_put_scale_changes_replicas_and_generation(api):
    await api.post(DEPLOYMENTS, deployment(replicas=3))
    scale = (await api.get(SCALE)).body
    scale["spec"]["replicas"] = 5
    reply = await api.put(SCALE, scale)
    assert reply.status == 200 and reply.body["spec"]["replicas"] == 5
    parent = (await api.get(f"{DEPLOYMENTS}/web")).body
    assert parent["spec"]["replicas"] == 5 and parent["metadata"]["generation"] == 2
    stale = await api.put(SCALE, scale)  # the resourceVersion it carries is gone now
    assert stale.status == 409
    unconditional = await api.put(SCALE, {"metadata": {"name": "web"}, "spec": {"replicas": 1}}, content_type=None)  # kubectl scale sends no Content-Type
    assert unconditional.status == 200 and unconditional.body["spec"]["replicas"] == 1
    unnamed = await api.put(SCALE, {"spec": {"replicas": 2}})  # as any update, the body names the object of the URL
    assert unnamed.status == 400 and unnamed.body["message"] == "the name of the object () does not match the name on the URL (web)"


async def test_patch_scale(api):
    await api.post(DEPLOYMENTS, deployment(replicas=3))
    merged = await api.patch(SCALE, {"spec": {"replicas": 7}})
    assert merged.status == 200 and merged.body["spec"]["replicas"] == 7
    json_patched = await api.patch(SCALE, [{"op": "replace", "path": "/spec/replicas", "value": 4}],
                                   content_type="application/json-patch+json")
    assert json_patched.body["spec"]["replicas"] == 4
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["replicas"] == 4


async def test_bad_scales(api):
    await api.post(DEPLOYMENTS, deployment(replicas=3))
    negative = await api.patch(SCALE, {"spec": {"replicas": -1}})
    assert negative.status == 422 and negative.body["reason"] == "Invalid"
    assert negative.body["message"] == 'Scale.autoscaling "web" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0'
    wrong_type = await api.patch(SCALE, {"spec": {"replicas": "two"}})
    assert wrong_type.status == 400
    wrong_kind = await api.put(SCALE, {"apiVersion": "apps/v1", "kind": "Deployment", "spec": {"replicas": 1}})
    assert wrong_kind.status == 400
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["replicas"] == 3
    assert (await api.get(f"{DEPLOYMENTS}/nope/scale")).status == 404
    assert (await api.get("/api/v1/namespaces/default/configmaps/x/scale")).status == 404
    assert (await api.delete(SCALE)).status == 405


async def test_replica_set_scale_and_discovery(api):
    rs = deployment("rs") | {"kind": "ReplicaSet"}
    await api.post("/apis/apps/v1/namespaces/default/replicasets", rs)
    scaled = await api.patch("/apis/apps/v1/namespaces/default/replicasets/rs/scale", {"spec": {"replicas": 6}})
    assert scaled.status == 200 and scaled.body["status"]["selector"] == "app=rs"
    resources = {r["name"]: r for r in (await api.get("/apis/apps/v1")).body["resources"]}
    assert resources["deployments/scale"]["kind"] == "Scale" and resources["deployments/scale"]["group"] == "autoscaling"
