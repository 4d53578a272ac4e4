"""Field selectors per kind, as kube-apiserver 1.32 takes them: each kind's own field labels (its Go
field label conversion function), the values Go's field sets read (a bool the wire omits is
"false"; a Pod's ``status.podIP`` is its first ``status.podIPs``), and the two 400 messages."""

from __future__ import annotations

from typing import Any

import pytest

from tests.conftest import Client

PODS = "/api/v1/namespaces/default/pods"


async def _names(api: Client, path: str, selector: str) -> list[str]:
    reply = await api.get(path, params={"fieldSelector": selector})
    assert reply.status == 200, reply
    return sorted(item["metadata"]["name"] for item in reply.body["items"])


async def _refused(api: Client, path: str, selector: str) -> str:
    reply = await api.get(path, params={"fieldSelector": selector})
    assert (reply.status, reply.body["reason"]) == (400, "BadRequest"), reply
    return reply.body["message"]


def _pod(name: str, **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}], **spec}}


async def test_pod_field_labels(api: Client) -> None:
    for pod in (_pod("plain"), _pod("host", hostNetwork=True), _pod("placed", nodeName="n1")):
        assert (await api.post(PODS, pod)).status == 201
    status = {"status": {"podIP": "10.0.0.7", "podIPs": [{"ip": "10.0.0.7"}, {"ip": "fd00::7"}]}}
    assert (await api.patch(f"{PODS}/placed/status", status)).status == 200
    # spec.hostNetwork reads "false" where the wire omits it
    assert await _names(api, PODS, "spec.hostNetwork=false") == ["placed", "plain"]
    assert await _names(api, PODS, "spec.hostNetwork=true") == ["host"]
    # spec.host is the old name of spec.nodeName
    assert await _names(api, PODS, "spec.host=n1") == ["placed"]
    assert await _names(api, PODS, "status.podIP=10.0.0.7") == ["placed"]
    # accepted, but Go's field set has no status.podIPs: it always reads ""
    assert await _names(api, PODS, "status.podIPs=10.0.0.7") == []
    assert await _names(api, PODS, "status.podIPs=") == ["host", "placed", "plain"]
    assert await _refused(api, PODS, "spec.containers=x") == "field label not supported: spec.containers"


async def test_node_and_namespace_labels(api: Client) -> None:
    for name, spec in (("ready", {}), ("cordoned", {"unschedulable": True})):
        reply = await api.post("/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": name}, "spec": spec})
        assert reply.status == 201, reply
    assert await _names(api, "/api/v1/nodes", "spec.unschedulable=false") == ["ready"]
    assert await _names(api, "/api/v1/nodes", "spec.unschedulable!=false") == ["cordoned"]
    assert await _names(api, "/api/v1/nodes", "metadata.name=ready") == ["ready"]
    # Node's and Namespace's conversion functions list no metadata.namespace
    assert await _refused(api, "/api/v1/nodes", "metadata.namespace=") == "field label not supported: metadata.namespace"
    assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "going"}})).status == 201
    assert (await api.delete("/api/v1/namespaces/going")).status == 200  # Terminating: it has the finalizer
    assert await _names(api, "/api/v1/namespaces", "status.phase=Terminating") == ["going"]
    assert "default" in await _names(api, "/api/v1/namespaces", "status.phase=Active")
    assert await _refused(api, "/api/v1/namespaces", "metadata.namespace=x") == "field label not supported: metadata.namespace"


async def test_service_labels(api: Client) -> None:
    services = "/api/v1/namespaces/default/services"
    for name, spec in (("web", {}), ("headless", {"clusterIP": "None"}), ("edge", {"type": "NodePort"})):
        reply = await api.post(services, {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name},
                                          "spec": {"ports": [{"port": 80}], **spec}})
        assert reply.status == 201, reply
    # default/kubernetes (the API server's own Service) is there too
    assert await _names(api, services, "spec.clusterIP!=None") == ["edge", "kubernetes", "web"]  # as the kubelet watches them
    assert await _names(api, services, "spec.type=NodePort") == ["edge"]
    assert await _names(api, services, "spec.type=ClusterIP,metadata.name!=web") == ["headless", "kubernetes"]


async def test_event_source_falls_back_to_the_reporting_controller(api: Client) -> None:
    events = "/api/v1/namespaces/default/events"
    involved = {"kind": "Pod", "namespace": "default", "name": "p"}
    old = {"metadata": {"name": "old"}, "involvedObject": involved, "source": {"component": "kubelet"}, "reason": "r"}
    new = {"metadata": {"name": "new"}, "involvedObject": involved, "reportingComponent": "kubelet", "reason": "r",
           "reportingInstance": "n1", "action": "a", "eventTime": "2026-01-01T00:00:00.000000Z"}
    for event in (old, new):
        reply = await api.post(events, {"apiVersion": "v1", "kind": "Event", **event})
        assert reply.status == 201, reply
    assert await _names(api, events, "source=kubelet") == ["new", "old"]
    assert await _names(api, events, "reportingComponent=kubelet") == ["new"]


@pytest.mark.parametrize("path", ["/api/v1/namespaces/default/configmaps", "/apis/apps/v1/namespaces/default/deployments",
                                  "/apis/apps/v1/replicasets", "/apis/coordination.k8s.io/v1/leases",
                                  "/apis/apiregistration.k8s.io/v1/apiservices"])
async def test_kinds_without_labels_of_their_own(api: Client, path: str) -> None:
    assert await _refused(api, path, "status.replicas=1") == (
        '"status.replicas" is not a known field selector: only "metadata.name", "metadata.namespace"')
    assert (await api.get(path, params={"fieldSelector": "metadata.namespace=default,metadata.name=x"})).status == 200
