"""An update's ``metadata.resourceVersion`` "0" is no resourceVersion, as kube-apiserver's
versioner parses it: unconditional where the kind allows that, else 422 (found by Kubernetes'
``test/cmd`` run_pod_tests, which replaces a Node with ``resourceVersion: "0"``)."""

from __future__ import annotations

import json

from tests.conftest import Client
from tests.kubectl_cli import Kubectl


def test_kubectl_replace_with_resource_version_zero_is_unconditional(kubectl: Kubectl) -> None:
    kubectl.run("create", "-f", "-", stdin=json.dumps({"kind": "Node", "apiVersion": "v1", "metadata": {"name": "node-rv0"}}))
    node = {"kind": "Node", "apiVersion": "v1", "metadata": {"name": "node-rv0", "annotations": {"a": "b"}, "resourceVersion": "0"}}
    dry = kubectl.run("replace", "--dry-run=server", "-f", "-", stdin=json.dumps(node))
    assert "replaced (server dry run)" in dry.stdout
    assert "a" not in (kubectl.json("get", "node", "node-rv0")["metadata"].get("annotations") or {})
    kubectl.run("replace", "-f", "-", stdin=json.dumps(node))
    assert kubectl.json("get", "node", "node-rv0")["metadata"]["annotations"] == {"a": "b"}


async def test_zero_is_no_precondition_for_merge_patches_either(api: Client) -> None:
    body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "c"}, "data": {"k": "1"}}
    assert (await api.post("/api/v1/namespaces/default/configmaps", body)).status == 201
    patched = await api.patch("/api/v1/namespaces/default/configmaps/c", {"metadata": {"resourceVersion": "0"}, "data": {"k": "2"}})
    assert patched.status == 200 and patched.body["data"] == {"k": "2"}
    stale = await api.patch("/api/v1/namespaces/default/configmaps/c", {"metadata": {"resourceVersion": "1"}, "data": {"k": "3"}})
    assert stale.status == 409


async def test_kinds_without_unconditional_updates_answer_as_kube_apiserver(api: Client) -> None:
    lease = {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": "l"}, "spec": {"holderIdentity": "a"}}
    path = "/apis/coordination.k8s.io/v1/namespaces/default/leases"
    assert (await api.post(path, lease)).status == 201
    for version in ("0", None):
        metadata = {"name": "l", **({"resourceVersion": version} if version else {})}
        reply = await api.put(f"{path}/l", {**lease, "metadata": metadata, "spec": {"holderIdentity": "b"}})
        assert reply.status == 422, reply
        assert reply.body["message"] == ('leases.coordination.k8s.io "l" is invalid: '
                                         "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update")
        assert reply.body["details"]["causes"] == [{"reason": "FieldValueInvalid", "message": "Invalid value: 0x0: must be specified for an update",
                                                    "field": "metadata.resourceVersion"}]
    assert (await api.get(f"{path}/l")).body["spec"]["holderIdentity"] == "a"
