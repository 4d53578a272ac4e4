"""A patched object that does not decode is 422 Invalid on field ``patch``, as kube-apiserver's
patchers answer (Kubernetes' test/cmd run_pod_tests expects kubectl to print "cannot restore map
from string"): the strategic merge patcher quotes the patch as Go prints it, the JSON patchers
the patched object; nothing is stored."""

from __future__ import annotations

import json

from tests.conftest import Client
from tests.kubectl_cli import Kubectl

POD = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"name": "p"}},
       "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}
PODS = "/api/v1/namespaces/default/pods"
SMP = "application/strategic-merge-patch+json"


def test_kubectl_patch_with_a_string_for_labels(kubectl: Kubectl) -> None:
    kubectl.run("create", "-f", "-", stdin=json.dumps({**POD, "metadata": {"name": "wrong-type"}}))
    failed = kubectl.run("patch", "pod", "wrong-type", "-p", '{"metadata":{"labels":"invalid"}}', check=False)
    assert failed.returncode == 1
    assert failed.stderr.strip() == ('The request is invalid: patch: Invalid value: "map[metadata:map[labels:invalid]]": '
                                     "cannot restore map from string")


async def test_strategic_merge_patches_quote_the_patch_and_the_converter(api: Client) -> None:
    assert (await api.post(PODS, POD)).status == 201
    for body, why in [({"metadata": {"labels": "invalid"}}, "cannot restore map from string"),
                      ({"spec": {"containers": "x"}}, "cannot restore slice from string"),
                      ({"spec": {"containers": [{"name": "c", "ports": 7}]}}, "cannot restore slice from int64"),
                      ({"spec": {"containers": [{"name": "c", "resources": [True]}]}}, "cannot restore struct from: slice")]:
        reply = await api.patch(f"{PODS}/p", body, content_type=SMP)
        assert reply.status == 422, reply
        assert reply.body["reason"] == "Invalid" and reply.body["details"]["causes"][0]["field"] == "patch"
        assert reply.body["message"].endswith(f": {why}"), reply
    unknown = await api.patch(f"{PODS}/p", {"spec": {"bogus": 1}}, content_type=SMP, params={"fieldValidation": "Strict"})
    assert unknown.status == 422
    assert unknown.body["message"] == (' "" is invalid: patch: Invalid value: "map[spec:map[bogus:1]]": '
                                       'strict decoding error: unknown field "spec.bogus"')
    assert (await api.get(f"{PODS}/p")).body["metadata"]["labels"] == {"name": "p"}


async def test_json_and_merge_patches_quote_the_patched_object(api: Client) -> None:
    assert (await api.post(PODS, POD)).status == 201
    merge = await api.patch(f"{PODS}/p", {"metadata": {"labels": "invalid"}})
    json_patch = await api.patch(f"{PODS}/p", [{"op": "add", "path": "/spec/bogus", "value": 1}],
                                 content_type="application/json-patch+json", params={"fieldValidation": "Strict"})
    for reply in (merge, json_patch):
        assert reply.status == 422 and reply.body["details"]["causes"][0]["field"] == "patch", reply
        assert reply.body["message"].startswith(' "" is invalid: patch: Invalid value: "{\\"apiVersion\\":\\"v1\\",\\"kind\\":\\"Pod\\"'), reply
    assert json_patch.body["message"].endswith('strict decoding error: unknown field "spec.bogus"')
    assert (await api.get(f"{PODS}/p")).body["metadata"]["labels"] == {"name": "p"}
