"""Fields that are Go int32 in the Kubernetes types refuse what int32 cannot hold, as kube's
decoder does: 400 "cannot be handled as" for a body, 422 on ``patch`` for a merge patch (the
patched object does not decode). Nothing of it is stored: an unbounded replica count would have
the controllers create pods without end."""

from __future__ import annotations

from tests.builders import DEPLOYMENTS, PODSPEC, deployment

PODS = "/api/v1/namespaces/default/pods"
TOO_LARGE = 99999999999999
NOT_INT32 = "Invalid value: cannot unmarshal number {} into Go value of type int32"


async def test_a_scale_beyond_int32_is_refused(api):
    await api.post(DEPLOYMENTS, deployment(replicas=3))
    reply = await api.put(f"{DEPLOYMENTS}/web/scale", {"metadata": {"name": "web"}, "spec": {"replicas": TOO_LARGE}})
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest")
    assert reply.body["message"] == f'Scale in version "v1" cannot be handled as a Scale: spec.replicas: {NOT_INT32.format(TOO_LARGE)}'
    assert reply.body["details"]["causes"] == [
        {"reason": "FieldValueTypeInvalid", "message": NOT_INT32.format(TOO_LARGE), "field": "spec.replicas"}]
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["replicas"] == 3


async def test_replicas_beyond_int32_are_refused_in_a_merge_patch_and_a_create(api):
    await api.post(DEPLOYMENTS, deployment(replicas=3))
    patched = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": TOO_LARGE}})
    assert (patched.status, patched.body["reason"]) == (422, "Invalid")
    [cause] = patched.body["details"]["causes"]
    assert cause["field"] == "patch" and cause["message"].endswith(f"spec.replicas: {NOT_INT32.format(TOO_LARGE)}")
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["replicas"] == 3
    for replicas in (2**31, -(2**31) - 1):
        created = await api.post(DEPLOYMENTS, deployment(name="big", replicas=replicas))
        assert (created.status, created.body["details"]["causes"][0]["message"]) == (400, NOT_INT32.format(replicas))
    assert (await api.get(f"{DEPLOYMENTS}/big")).status == 404


async def test_a_container_port_beyond_int32_is_refused(api):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {**PODSPEC, "containers": [{"name": "c", "image": "nginx", "ports": [{"containerPort": 2**31}]}]}}
    reply = await api.post(PODS, pod)
    assert (reply.status, reply.body["details"]["causes"]) == (400, [
        {"reason": "FieldValueTypeInvalid", "message": NOT_INT32.format(2**31), "field": "spec.containers[0].ports[0].containerPort"}])
    assert (await api.get(f"{PODS}/p")).status == 404


async def test_int32_bounds_are_inclusive(api):
    """The largest and smallest int32 decode (a Lease: no controller acts on it; a negative
    duration then fails validation, not decoding)."""
    leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases"

    async def lease(name: str, seconds: int):
        return await api.post(leases, {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name},
                                       "spec": {"leaseDurationSeconds": seconds}})

    largest = await lease("max", 2**31 - 1)
    assert largest.status == 201 and largest.body["spec"]["leaseDurationSeconds"] == 2**31 - 1
    smallest = await lease("min", -(2**31))
    assert (smallest.status, smallest.body["details"]["causes"][0]["message"]) == (422, f"Invalid value: {-(2**31)}: must be greater than 0")
    assert (await lease("over", 2**31)).status == 400


async def test_an_int_or_string_beyond_int32_is_refused(api):
    """``intstr.IntOrString`` holds an int32: a maxSurge beyond it is refused like replicas are."""
    def surge(value):
        return {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": value}}

    created = await api.post(DEPLOYMENTS, deployment(name="big", strategy=surge(TOO_LARGE)))
    assert (created.status, created.body["details"]["causes"][0]["message"]) == (400, NOT_INT32.format(TOO_LARGE))
    assert created.body["details"]["causes"][0]["field"] == "spec.strategy.rollingUpdate.maxSurge"
    assert (await api.get(f"{DEPLOYMENTS}/big")).status == 404
    assert (await api.post(DEPLOYMENTS, deployment(strategy=surge(2**31 - 1)))).status == 201
    patched = await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"strategy": surge(-(2**31) - 1)}})
    assert (patched.status, patched.body["reason"]) == (422, "Invalid")
    [cause] = patched.body["details"]["causes"]
    assert cause["message"].endswith(f"spec.strategy.rollingUpdate.maxSurge: {NOT_INT32.format(-(2**31) - 1)}")
    assert (await api.get(f"{DEPLOYMENTS}/web")).body["spec"]["strategy"]["rollingUpdate"]["maxSurge"] == 2**31 - 1
    assert (await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"strategy": surge("25%")}})).status == 200
