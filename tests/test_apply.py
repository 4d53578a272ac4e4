"""Server-side apply over HTTP: create, update, conflicts, force, managedFields, bad bodies."""

from __future__ import annotations

import yaml

from tests.builders import DEPLOYMENTS, deployment

APPLY = "application/apply-patch+yaml"


async def apply(api, body, manager: str | None = "tester", **params: str):
    query = {**params, **({"fieldManager": manager} if manager else {})}
    return await api.request("PATCH", f"{DEPLOYMENTS}/web", raw=yaml.safe_dump(body).encode(), content_type=APPLY, params=query)


async def test_apply_creates_then_updates(api):
    created = await apply(api, deployment())
    assert created.status == 201, created
    (entry,) = created.body["metadata"]["managedFields"]
    assert (entry["manager"], entry["operation"], entry["apiVersion"]) == ("tester", "Apply", "apps/v1")
    assert entry["fieldsV1"]["f:spec"]["f:replicas"] == {}
    updated = await apply(api, deployment(replicas=4))
    assert updated.status == 200 and updated.body["spec"]["replicas"] == 4
    assert updated.body["metadata"]["generation"] == 2
    same = await apply(api, deployment(replicas=4))
    assert same.body["metadata"]["resourceVersion"] == updated.body["metadata"]["resourceVersion"]


async def test_conflicts_and_force(api):
    await apply(api, deployment())
    patched = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 7}}, params={"fieldManager": "editor"})
    managers = {(m["manager"], m["operation"]) for m in patched.body["metadata"]["managedFields"]}
    assert managers == {("tester", "Apply"), ("editor", "Update")}
    conflict = await apply(api, deployment(replicas=3))
    assert conflict.status == 409 and conflict.body["reason"] == "Conflict"
    assert conflict.body["message"] == 'Apply failed with 1 conflict: conflict with "editor" using apps/v1: .spec.replicas'
    assert conflict.body["details"]["causes"] == [
        {"reason": "FieldManagerConflict", "message": 'conflict with "editor" using apps/v1', "field": ".spec.replicas"}]
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["replicas"] == 7
    forced = await apply(api, deployment(replicas=3), force="true")
    assert forced.status == 200 and forced.body["spec"]["replicas"] == 3


async def test_a_field_no_longer_applied_is_removed(api):
    with_paused = deployment()
    with_paused["spec"]["paused"] = True
    await apply(api, with_paused)
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["paused"] is True
    removed = await apply(api, deployment())
    assert "paused" not in removed.body["spec"]


async def test_bad_apply_requests(api):
    missing_kind = deployment()
    del missing_kind["kind"]
    reply = await apply(api, missing_kind)
    assert reply.status == 400 and reply.body["message"] == "invalid object type: apps/v1, Kind="
    no_manager = await apply(api, deployment(), manager=None)
    assert no_manager.status == 422 and "fieldManager: Required value: is required for apply patch" in no_manager.body["message"]
    with_managed = deployment()
    with_managed["metadata"]["managedFields"] = [{"manager": "x", "operation": "Apply"}]
    assert (await apply(api, with_managed)).status == 400
    not_an_object = await api.request("PATCH", f"{DEPLOYMENTS}/web", raw=b"- 1\n- 2\n", content_type=APPLY,
                                      params={"fieldManager": "tester"})
    assert not_an_object.status == 400
    renamed = await apply(api, deployment(name="other"))
    assert renamed.status == 400
    assert (await api.get(DEPLOYMENTS)).body["items"] == []
    await api.post(DEPLOYMENTS, deployment())
    forced_merge = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 1}}, params={"force": "true"})
    assert forced_merge.status == 422 and "force: Forbidden: may not be specified for non-apply patch" in forced_merge.body["message"]


async def test_reapplying_a_port_without_protocol_keeps_one_port(api):
    """Defaulting stores ``protocol: TCP``; apply must key the client's port by that default too."""
    config = deployment()
    config["spec"]["template"]["spec"]["containers"][0]["ports"] = [{"containerPort": 80}]
    first = await apply(api, config)
    assert first.body["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    again = await apply(api, config)
    assert again.status == 200, again
    assert again.body["spec"]["template"]["spec"]["containers"][0]["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    (entry,) = again.body["metadata"]["managedFields"]
    ports = entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']["f:ports"]
    assert list(ports) == ['k:{"containerPort":80,"protocol":"TCP"}']


def owned_keys(fields_v1: dict) -> set[str]:
    return {key[2:] for key in fields_v1 if key.startswith("f:")}


async def test_a_write_owns_the_defaults_it_brought_and_an_apply_only_what_it_applied(api):
    """kube-apiserver records an Update on the decoded, defaulted object; an Apply records its
    configuration (the object is defaulted after)."""
    created = await api.post(DEPLOYMENTS, deployment(), params={"fieldManager": "kubectl-create"})
    assert created.status == 201, created
    (entry,) = created.body["metadata"]["managedFields"]
    spec, owned = created.body["spec"], entry["fieldsV1"]["f:spec"]
    assert spec["strategy"]["type"] == "RollingUpdate" and spec["progressDeadlineSeconds"] == 600
    assert owned_keys(owned) == set(spec)  # progressDeadlineSeconds, revisionHistoryLimit, strategy...
    assert owned["f:strategy"]["f:rollingUpdate"].keys() >= {"f:maxSurge", "f:maxUnavailable"}
    pod_spec, pod_owned = spec["template"]["spec"], owned["f:template"]["f:spec"]
    assert owned_keys(pod_owned) == set(pod_spec)  # dnsPolicy, restartPolicy, schedulerName...: what defaulting set
    (container,) = pod_spec["containers"]
    assert owned_keys(pod_owned["f:containers"]['k:{"name":"nginx"}']) == set(container)  # imagePullPolicy...

    applied = await api.request("PATCH", f"{DEPLOYMENTS}/applied", raw=yaml.safe_dump(deployment(name="applied")).encode(),
                                content_type=APPLY, params={"fieldManager": "kubectl"})
    (entry,) = applied.body["metadata"]["managedFields"]
    assert applied.body["spec"]["progressDeadlineSeconds"] == 600  # defaulted, owned by nobody
    assert owned_keys(entry["fieldsV1"]["f:spec"]) == {"replicas", "selector", "template"}
    (container,) = applied.body["spec"]["template"]["spec"]["containers"]
    assert "imagePullPolicy" in container
    assert owned_keys(entry["fieldsV1"]["f:spec"]["f:template"]["f:spec"]["f:containers"]['k:{"name":"nginx"}']) == {"name", "image"}


async def test_fields_the_decoder_drops_are_owned_by_nobody(api):
    body = deployment()
    body["spec"]["bogus"] = {"deep": [1, 2, 3]}
    created = await api.post(DEPLOYMENTS, body, params={"fieldManager": "m", "fieldValidation": "Ignore"})
    assert created.status == 201 and "bogus" not in created.body["spec"]
    assert "f:bogus" not in created.body["metadata"]["managedFields"][0]["fieldsV1"]["f:spec"]
    patched = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"bogus2": 1, "paused": True}},
                              params={"fieldManager": "p", "fieldValidation": "Ignore"})
    assert patched.status == 200
    assert entry_of(patched.body, "p")["fieldsV1"] == {"f:spec": {"f:paused": {}}}


def entry_of(obj: dict, manager: str) -> dict:
    (found,) = [m for m in obj["metadata"]["managedFields"] if m["manager"] == manager]
    return found
