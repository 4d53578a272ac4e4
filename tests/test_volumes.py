"""PersistentVolumes, PersistentVolumeClaims and storage.k8s.io: validation, the default
StorageClass, binding, the simulated provisioner, reclaiming and in-use protection."""

from __future__ import annotations

import pytest

from tests.waiting import eventually, wait_until

NS = "/api/v1/namespaces/default"
PVS = "/api/v1/persistentvolumes"
SC = "/apis/storage.k8s.io/v1"
TABLE = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}


def claim(name: str, storage: str = "1Gi", **spec: object) -> dict:
    return {"metadata": {"name": name}, "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": storage}}, **spec}}


def volume(name: str, storage: str, labels: dict | None = None, **spec: object) -> dict:
    return {"metadata": {"name": name, "labels": labels or {}},
            "spec": {"capacity": {"storage": storage}, "accessModes": ["ReadWriteOnce", "ReadOnlyMany"],
                     "hostPath": {"path": f"/data/{name}"}, "storageClassName": "", **spec}}


async def phase(api, path: str) -> str | None:
    reply = await api.get(path)
    return reply.body.get("status", {}).get("phase") if reply.status == 200 else None


@pytest.mark.controllers
async def test_a_claim_gets_a_provisioned_volume_and_gives_it_back(api):
    classes = (await api.get(f"{SC}/storageclasses")).body["items"]
    assert [(c["metadata"]["name"], c["provisioner"], c["reclaimPolicy"], c["volumeBindingMode"]) for c in classes] == [
        ("standard", "kplane.io/simulated", "Delete", "Immediate")]
    made = (await api.post(f"{NS}/persistentvolumeclaims", claim("data"))).body
    assert made["spec"]["storageClassName"] == "standard" and made["spec"]["volumeMode"] == "Filesystem"  # DefaultStorageClass
    assert made["metadata"]["finalizers"] == ["kubernetes.io/pvc-protection"]
    async def bound() -> dict | None:
        reply = (await api.get(f"{NS}/persistentvolumeclaims/data")).body
        return reply if reply["status"].get("phase") == "Bound" else None
    got = await eventually(bound, what="the claim to be bound")
    name = f"pvc-{made['metadata']['uid']}"
    assert got["spec"]["volumeName"] == name
    assert got["status"] == {"phase": "Bound", "accessModes": ["ReadWriteOnce"], "capacity": {"storage": "1Gi"}}
    assert got["metadata"]["annotations"] == {"pv.kubernetes.io/bind-completed": "yes", "pv.kubernetes.io/bound-by-controller": "yes",
                                              "volume.kubernetes.io/storage-provisioner": "kplane.io/simulated",
                                              "volume.beta.kubernetes.io/storage-provisioner": "kplane.io/simulated"}
    pv = (await api.get(f"{PVS}/{name}")).body
    assert pv["status"]["phase"] == "Bound" and pv["spec"]["claimRef"]["uid"] == made["metadata"]["uid"]
    assert pv["spec"]["persistentVolumeReclaimPolicy"] == "Delete" and pv["metadata"]["finalizers"] == ["kubernetes.io/pv-protection"]
    assert pv["metadata"]["annotations"] == {"pv.kubernetes.io/provisioned-by": "kplane.io/simulated"}
    events = (await api.get(f"{NS}/events", params={"fieldSelector": "involvedObject.name=data"})).body["items"]
    assert any(e["reason"] == "ProvisioningSucceeded" and e["message"] == f"Successfully provisioned volume {name} using kplane.io/simulated"
               for e in events)

    pod = {"metadata": {"name": "user"}, "spec": {"schedulerName": "nobody", "containers": [{"name": "c", "image": "nginx"}],
                                                  "volumes": [{"name": "d", "persistentVolumeClaim": {"claimName": "data"}}]}}
    await api.post(f"{NS}/pods", pod)
    await api.delete(f"{NS}/persistentvolumeclaims/data")  # in use: it waits, Terminating
    table = (await api.get(f"{NS}/persistentvolumeclaims", headers=TABLE)).body
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Status", "Volume", "Capacity", "Access Modes", "StorageClass",
                                                               "VolumeAttributesClass", "Age", "VolumeMode"]
    assert table["rows"][0]["cells"][:7] == ["data", "Terminating", name, "1Gi", "RWO", "standard", "<unset>"]
    assert (await api.get(f"{NS}/persistentvolumeclaims/data")).status == 200
    await api.delete(f"{NS}/pods/user", params={"gracePeriodSeconds": "0"})

    async def gone() -> bool:
        return (await api.get(f"{NS}/persistentvolumeclaims/data")).status == 404 and (await api.get(f"{PVS}/{name}")).status == 404
    await eventually(gone, what="the claim, then its volume (reclaim policy Delete), to go")


@pytest.mark.controllers
async def test_static_volumes_bind_by_fit_and_are_retained(api):
    for name, size, labels in (("big", "10Gi", {"tier": "gold"}), ("small", "2Gi", {"tier": "gold"}), ("tiny", "1Gi", {"tier": "gold"}),
                               ("other", "2Gi", {"tier": "tin"})):
        created = await api.post(PVS, volume(name, size, labels))
        assert created.status == 201 and created.body["spec"]["persistentVolumeReclaimPolicy"] == "Retain"
    wanted = claim("static", "1500Mi", storageClassName="", selector={"matchLabels": {"tier": "gold"}})
    await api.post(f"{NS}/persistentvolumeclaims", wanted)

    async def bound_to() -> str | None:
        body = (await api.get(f"{NS}/persistentvolumeclaims/static")).body
        return body["spec"].get("volumeName") if body["status"].get("phase") == "Bound" else None
    assert await eventually(bound_to, what="the claim to bind") == "small"  # the smallest gold volume of 1500Mi or more
    assert await eventually(lambda: _is(api, f"{PVS}/tiny", "Available"), what="the others to be Available")
    pvs = (await api.get(PVS, headers=TABLE)).body
    assert [c["name"] for c in pvs["columnDefinitions"]][:10] == ["Name", "Capacity", "Access Modes", "Reclaim Policy", "Status", "Claim",
                                                                  "StorageClass", "VolumeAttributesClass", "Reason", "Age"]
    row = next(r["cells"] for r in pvs["rows"] if r["cells"][0] == "small")
    assert row[:8] == ["small", "2Gi", "RWO,ROX", "Retain", "Bound", "default/static", "", "<unset>"]
    await api.delete(f"{NS}/persistentvolumeclaims/static")
    assert await eventually(lambda: _is(api, f"{PVS}/small", "Released"), what="the volume to be Released")
    await api.delete(f"{PVS}/tiny")  # not bound: its protection goes at once
    await eventually(lambda: _gone(api, f"{PVS}/tiny"), what="an unbound volume to be deleted")


async def _is(api, path: str, wanted: str) -> bool:
    return await phase(api, path) == wanted


async def _gone(api, path: str) -> bool:
    return (await api.get(path)).status == 404


async def test_volume_and_claim_validation(api):
    bad = {"metadata": {"name": "bad"}, "spec": {"capacity": {"storage": "0", "cpu": "1"}, "accessModes": ["ReadWriteAll"],
                                                   "persistentVolumeReclaimPolicy": "Keep", "hostPath": {"path": "/a/../b"},
                                                   "nfs": {"server": "x", "path": "relative"}}}
    reply = await api.post(PVS, bad)
    assert reply.status == 422
    causes = {(c["field"], c["message"]) for c in reply.body["details"]["causes"]}
    assert ("spec.accessModes", 'Unsupported value: "ReadWriteAll": supported values: "ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"') in causes
    assert ("spec.persistentVolumeReclaimPolicy", 'Unsupported value: "Keep": supported values: "Delete", "Recycle", "Retain"') in causes
    assert ("spec.nfs", "Forbidden: may not specify more than 1 volume type") in causes
    assert ("spec.hostPath.path", "Invalid value: \"/a/../b\": must not contain '..'") in causes
    assert any(field == "spec.capacity" for field, _ in causes)
    none = await api.post(PVS, {"metadata": {"name": "none"}, "spec": {"capacity": {"storage": "1Gi"}, "accessModes": ["ReadWriteOnce"]}})
    assert none.status == 422 and none.body["details"]["causes"] == [{"reason": "FieldValueRequired", "message": "Required value: must specify a volume type", "field": "spec"}]
    no_storage = await api.post(f"{NS}/persistentvolumeclaims", {"metadata": {"name": "c"}, "spec": {"accessModes": []}})
    assert {c["field"] for c in no_storage.body["details"]["causes"]} == {"spec.accessModes", "spec.resources[storage]"}
    await api.post(f"{NS}/persistentvolumeclaims", claim("fixed", storageClassName="none-such"))
    changed = await api.patch(f"{NS}/persistentvolumeclaims/fixed", {"spec": {"accessModes": ["ReadWriteMany"]}})
    assert changed.status == 422 and "spec: Forbidden: spec is immutable after creation except resources.requests" in changed.body["message"]
    assert (await api.get(f"{PVS}/bad")).status == 404


async def test_storage_kinds(api):
    sc = {"metadata": {"name": "fast"}, "provisioner": "example.com/fast", "parameters": {"type": "ssd"}}
    created = (await api.post(f"{SC}/storageclasses", sc)).body
    assert (created["reclaimPolicy"], created["volumeBindingMode"]) == ("Delete", "Immediate")
    changed = await api.patch(f"{SC}/storageclasses/fast", {"parameters": {"type": "hdd"}, "reclaimPolicy": "Retain"})
    assert changed.status == 422 and {c["message"] for c in changed.body["details"]["causes"]} == {
        "Forbidden: updates to parameters are forbidden.", "Forbidden: updates to reclaimPolicy are forbidden."}
    assert (await api.post(f"{SC}/storageclasses", {"metadata": {"name": "x"}})).status == 422  # no provisioner
    driver = (await api.post(f"{SC}/csidrivers", {"metadata": {"name": "hostpath.csi.k8s.io"}, "spec": {}})).body
    assert driver["spec"] == {"attachRequired": True, "podInfoOnMount": False, "volumeLifecycleModes": ["Persistent"], "storageCapacity": False,
                              "fsGroupPolicy": "ReadWriteOnceWithFSType", "requiresRepublish": False, "seLinuxMount": False}
    node = {"metadata": {"name": "kplane-node-1"}, "spec": {"drivers": [{"name": "hostpath.csi.k8s.io", "nodeID": "n1"}]}}
    assert (await api.post(f"{SC}/csinodes", node)).status == 201
    attachment = {"metadata": {"name": "a"}, "spec": {"attacher": "hostpath.csi.k8s.io", "nodeName": "kplane-node-1",
                                                      "source": {"persistentVolumeName": "pv1"}}}
    made = (await api.post(f"{SC}/volumeattachments", {**attachment, "status": {"attached": True}})).body
    assert made["status"] == {"attached": False}
    attached = await api.patch(f"{SC}/volumeattachments/a/status", {"status": {"attached": True}})
    assert attached.body["status"]["attached"] is True
    table = (await api.get(f"{SC}/volumeattachments", headers=TABLE)).body
    assert table["rows"][0]["cells"][1:5] == ["hostpath.csi.k8s.io", "pv1", "kplane-node-1", True]
    capacity = {"metadata": {"name": "cap"}, "storageClassName": "fast", "capacity": "100Gi"}
    assert (await api.post(f"{SC}/namespaces/default/csistoragecapacities", capacity)).status == 201


def test_kubectl_storage(kubectl):
    wait_until(lambda: "standard (default)" in kubectl.run("get", "storageclass").stdout, what="the default class")
    kubectl.apply_file("apply", """
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: kubectl-claim}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 2Gi}}
""")
    wait_until(lambda: kubectl.run("get", "pvc", "kubectl-claim", "-o", "jsonpath={.status.phase}").stdout == "Bound", what="Bound")
    row = kubectl.run("get", "pvc", "kubectl-claim").stdout.splitlines()[1].split()
    assert row[:2] == ["kubectl-claim", "Bound"] and row[2].startswith("pvc-") and row[3:6] == ["2Gi", "RWO", "standard"]
    assert "standard" in kubectl.run("get", "pv").stdout
    described = kubectl.run("describe", "pvc", "kubectl-claim").stdout
    assert "ProvisioningSucceeded" in described and "Status:        Bound" in described
    kubectl.run("delete", "pvc", "kubectl-claim")
