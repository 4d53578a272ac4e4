"""flowcontrol.apiserver.k8s.io/v1 against one `kplane serve`: the bootstrap configuration as a
cluster shows it, kept by its annotations; the Dangling condition; kube's defaults and validation;
through kubectl, the Python client and plain HTTP."""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import pytest
from kubernetes import client, config

from tests.kubectl_cli import Kubectl
from tests.servers import serving
from tests.waiting import wait_until

FC = "/apis/flowcontrol.apiserver.k8s.io/v1"
AUTO = "apf.kubernetes.io/autoupdate-spec"


@dataclass
class Cluster:
    url: str
    kubectl: Kubectl
    api: client.FlowcontrolApiserverV1Api

    def call(self, method: str, path: str, body: Any = None, content_type: str = "application/json") -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={"Content-Type": content_type})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    workdir = tmp_path_factory.mktemp("flowcontrol")
    with serving(workdir / "data", "--flowcontrol-ensure-interval", "200ms") as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir)}
        api = client.FlowcontrolApiserverV1Api(config.new_client_from_config(config_file=str(served.kubeconfig)))
        yield Cluster(served.url, Kubectl(env, workdir), api)


def _rows(kubectl: Kubectl, resource: str) -> dict[str, list[str]]:
    lines = kubectl.run("get", resource).stdout.splitlines()
    return {line.split()[0]: line.split()[1:] for line in lines[1:]}


def test_the_bootstrap_configuration_as_a_cluster_shows_it(cluster: Cluster) -> None:
    levels = _rows(cluster.kubectl, "prioritylevelconfigurations")
    assert {name: row[:5] for name, row in levels.items()} == {
        "catch-all": ["Limited", "5", "<none>", "<none>", "<none>"], "exempt": ["Exempt", "<none>", "<none>", "<none>", "<none>"],
        "global-default": ["Limited", "20", "128", "6", "50"], "leader-election": ["Limited", "10", "16", "4", "50"],
        "node-high": ["Limited", "40", "64", "6", "50"], "system": ["Limited", "30", "64", "6", "50"],
        "workload-high": ["Limited", "40", "128", "6", "50"], "workload-low": ["Limited", "100", "128", "6", "50"]}
    header = cluster.kubectl.run("get", "flowschemas").stdout.splitlines()[0].split()
    assert header == ["NAME", "PRIORITYLEVEL", "MATCHINGPRECEDENCE", "DISTINGUISHERMETHOD", "AGE", "MISSINGPL"]
    schemas = wait_until(lambda: (rows := _rows(cluster.kubectl, "flowschemas")) and all(r[-1] == "False" for r in rows.values()) and rows,
                         what="every FlowSchema's Dangling condition")
    assert {name: row[:3] for name, row in schemas.items()} == {
        "exempt": ["exempt", "1", "<none>"], "probes": ["exempt", "2", "<none>"],
        "system-leader-election": ["leader-election", "100", "ByUser"], "endpoint-controller": ["workload-high", "150", "ByUser"],
        "workload-leader-election": ["leader-election", "200", "ByUser"], "system-node-high": ["node-high", "400", "ByUser"],
        "system-nodes": ["system", "500", "ByUser"], "kube-controller-manager": ["workload-high", "800", "ByNamespace"],
        "kube-scheduler": ["workload-high", "800", "ByNamespace"], "kube-system-service-accounts": ["workload-high", "900", "ByNamespace"],
        "service-accounts": ["workload-low", "9000", "ByUser"], "global-default": ["global-default", "9900", "ByUser"],
        "catch-all": ["catch-all", "10000", "ByUser"]}
    probes = cluster.api.read_flow_schema("probes")  # the typed client reads every field
    assert probes.metadata.annotations == {AUTO: "true"} and probes.metadata.generation == 1
    assert probes.spec.rules[0].non_resource_rules[0].non_resource_urls == ["/healthz", "/readyz", "/livez"]
    [dangling] = probes.status.conditions
    assert (dangling.type, dangling.status, dangling.reason) == ("Dangling", "False", "Found")
    assert dangling.message == "This FlowSchema references an existing PriorityLevelConfiguration object"
    exempt = cluster.api.read_priority_level_configuration("exempt").spec.exempt
    assert (exempt.nominal_concurrency_shares, exempt.lendable_percent) == (0, 0)
    assert cluster.api.read_priority_level_configuration("system").spec.limited.lendable_percent == 33
    assert "Priority Level Configuration:" in cluster.kubectl.run("describe", "flowschema", "exempt").stdout


def test_dangling_follows_the_priority_level(cluster: Cluster) -> None:
    schema = {"metadata": {"name": "batch"}, "spec": {"priorityLevelConfiguration": {"name": "batch-level"},
              "rules": [{"subjects": [{"kind": "User", "user": {"name": "alice"}}],
                         "resourceRules": [{"verbs": ["list"], "apiGroups": [""], "resources": ["pods"], "namespaces": ["*"]}]}]}}
    status, made = cluster.call("POST", f"{FC}/flowschemas", schema)
    assert status == 201 and made["spec"]["matchingPrecedence"] == 1000 and made["metadata"]["generation"] == 1
    assert "annotations" not in made["metadata"]

    def dangling() -> dict[str, Any] | None:
        conditions = cluster.kubectl.json("get", "flowschema", "batch").get("status", {}).get("conditions", [])
        return next((c for c in conditions if c["type"] == "Dangling"), None)

    missing = wait_until(lambda: (c := dangling()) and c["status"] == "True" and c, what="Dangling True")
    assert missing["reason"] == "NotFound"
    assert missing["message"] == 'This FlowSchema references the PriorityLevelConfiguration object named "batch-level" but there is no such object'
    assert _rows(cluster.kubectl, "flowschemas")["batch"][-1] == "True"
    cluster.kubectl.apply_file("create", """
apiVersion: flowcontrol.apiserver.k8s.io/v1
kind: PriorityLevelConfiguration
metadata: {name: batch-level}
spec:
  type: Limited
  limited:
    limitResponse: {type: Queue, queuing: {}}
""")
    level = cluster.kubectl.json("get", "prioritylevelconfiguration", "batch-level")["spec"]["limited"]
    assert level == {"nominalConcurrencyShares": 30, "lendablePercent": 0,
                     "limitResponse": {"type": "Queue", "queuing": {"queues": 64, "handSize": 8, "queueLengthLimit": 50}}}
    found = wait_until(lambda: (c := dangling()) and c["status"] == "False" and c, what="Dangling False")
    assert found["reason"] == "Found"
    status, kept = cluster.call("PATCH", f"{FC}/flowschemas/batch/status", {"spec": {"matchingPrecedence": 5}},
                                "application/merge-patch+json")
    assert status == 200 and kept["spec"]["matchingPrecedence"] == 1000 and kept["metadata"]["generation"] == 1
    status, changed = cluster.call("PATCH", f"{FC}/flowschemas/batch", {"spec": {"matchingPrecedence": 5}}, "application/merge-patch+json")
    assert status == 200 and changed["metadata"]["generation"] == 2 and changed["status"]["conditions"]


def _causes(reply: tuple[int, Any]) -> dict[str, str]:
    status, body = reply
    assert status == 422, body
    return {c["field"]: c["message"] for c in body["details"]["causes"]}


def test_validation_as_kube(cluster: Cluster) -> None:
    bad_schema = {"metadata": {"name": "bad"}, "spec": {
        "priorityLevelConfiguration": {"name": ""}, "matchingPrecedence": 1, "distinguisherMethod": {"type": "ByColour"},
        "rules": [{"subjects": [{"kind": "ServiceAccount", "user": {"name": "x"}, "serviceAccount": {"name": "a"}}, {"kind": "Robot"}],
                   "resourceRules": [{"verbs": ["get", "*"], "apiGroups": [], "resources": ["*", "pods"]}],
                   "nonResourceRules": [{"verbs": ["fly"], "nonResourceURLs": ["healthz", "/a/*/b"]}]}, {"subjects": []}]}}
    assert _causes(cluster.call("POST", f"{FC}/flowschemas", bad_schema)) == {
        "spec.matchingPrecedence": "Invalid value: 1: only the schema named 'exempt' may have matchingPrecedence 1",
        "spec.distinguisherMethod.type": 'Unsupported value: "ByColour": supported values: "ByNamespace", "ByUser"',
        "spec.priorityLevelConfiguration.name": "Required value: must reference a priority level",
        "spec.rules[0].subjects[0].serviceAccount.namespace": "Required value: must specify namespace for service account",
        "spec.rules[0].subjects[0].user": "Forbidden: user is forbidden when subject kind is not 'User'",
        "spec.rules[0].subjects[1].kind": 'Unsupported value: "Robot": supported values: "Group", "ServiceAccount", "User"',
        "spec.rules[0].resourceRules[0].verbs": "Invalid value: [\"get\",\"*\"]: if '*' is present, must not specify other verbs",
        "spec.rules[0].resourceRules[0].apiGroups": "Required value: resource rules must supply at least one api group",
        "spec.rules[0].resourceRules[0].resources": "Invalid value: [\"*\",\"pods\"]: if '*' is present, must not specify other resources",
        "spec.rules[0].resourceRules[0].namespaces": "Required value: resource rules that are not cluster scoped must supply at least one namespace",
        "spec.rules[0].nonResourceRules[0].verbs": 'Unsupported value: ["fly"]: supported values: "create", "delete", "deletecollection", '
                                                   '"get", "list", "patch", "proxy", "update", "watch"',
        "spec.rules[0].nonResourceRules[0].nonResourceURLs[0]": 'Invalid value: "healthz": must start with slash',
        "spec.rules[0].nonResourceRules[0].nonResourceURLs[1]": 'Invalid value: "/a/*/b": wildcard can only do suffix matching',
        "spec.rules[1].subjects": "Required value: subjects must contain at least one value",
        "spec.rules[1]": "Required value: at least one of resourceRules and nonResourceRules has to be non-empty",
    }
    bad_level = {"metadata": {"name": "bad"}, "spec": {"type": "Limited", "exempt": {}, "limited": {
        "nominalConcurrencyShares": -1, "lendablePercent": 101, "borrowingLimitPercent": -2,
        "limitResponse": {"type": "Queue", "queuing": {"queues": 128, "handSize": 10, "queueLengthLimit": -1}}}}}
    assert _causes(cluster.call("POST", f"{FC}/prioritylevelconfigurations", bad_level)) == {
        "spec.exempt": "Forbidden: must be nil if the type is Limited",
        "spec.limited.nominalConcurrencyShares": "Invalid value: -1: must be a non-negative integer",
        "spec.limited.limitResponse.queuing.queueLengthLimit": "Invalid value: -1: must be positive",
        "spec.limited.limitResponse.queuing.handSize": "Invalid value: 10: required entropy bits of deckSize 128 and handSize 10 "
                                                       "should not be greater than 60",
        "spec.limited.lendablePercent": "Invalid value: 101: must be between 0 and 100, inclusive",
        "spec.limited.borrowingLimitPercent": "Invalid value: -2: if specified, must be a non-negative integer",
    }
    assert _causes(cluster.call("POST", f"{FC}/prioritylevelconfigurations", {"metadata": {"name": "x"}, "spec": {"type": "Exempt"}})) == {
        "spec.type": "Invalid value: \"Exempt\": type must be 'Exempt' if and only if name is 'exempt'"}
    fixed = _causes(cluster.call("PATCH", f"{FC}/flowschemas/exempt", {"spec": {"matchingPrecedence": 3}}, "application/merge-patch+json"))
    assert fixed["spec"].endswith("spec of 'exempt' must equal the fixed value")
    fixed = _causes(cluster.call("PATCH", f"{FC}/prioritylevelconfigurations/catch-all", {"spec": {"limited": {"nominalConcurrencyShares": 9}}},
                                 "application/merge-patch+json"))
    assert fixed["spec"].endswith("spec of 'catch-all' must equal the fixed value")
    status, exempt = cluster.call("PATCH", f"{FC}/prioritylevelconfigurations/exempt", {"spec": {"exempt": {"nominalConcurrencyShares": 7}}},
                                  "application/merge-patch+json")
    assert status == 200 and exempt["spec"]["exempt"] == {"nominalConcurrencyShares": 7, "lendablePercent": 0}
    assert cluster.call("GET", f"{FC}/flowschemas/bad")[0] == 404  # nothing stored by a rejected request


def test_the_ensurer_keeps_what_the_annotations_say(cluster: Cluster) -> None:
    patch = "application/merge-patch+json"
    assert cluster.call("DELETE", f"{FC}/flowschemas/catch-all")[0] == 200  # mandatory: made again
    assert cluster.call("DELETE", f"{FC}/flowschemas/global-default")[0] == 200  # suggested: made again too
    for name in ("catch-all", "global-default"):
        wait_until(lambda: cluster.call("GET", f"{FC}/flowschemas/{name}")[0] == 200, what=f"{name} made again")
    # a suggestion an operator opted out of stays as changed; opted in again, it is put back
    off = {"metadata": {"annotations": {AUTO: "false"}}, "spec": {"limited": {"nominalConcurrencyShares": 7}}}
    assert cluster.call("PATCH", f"{FC}/prioritylevelconfigurations/workload-low", off, patch)[0] == 200
    cluster.call("PATCH", f"{FC}/prioritylevelconfigurations/workload-low", {"metadata": {"annotations": {"x": "1"}}}, patch)
    assert cluster.api.read_priority_level_configuration("workload-low").spec.limited.nominal_concurrency_shares == 7
    cluster.call("PATCH", f"{FC}/prioritylevelconfigurations/workload-low", {"metadata": {"annotations": {AUTO: "true"}}}, patch)
    wait_until(lambda: cluster.api.read_priority_level_configuration("workload-low").spec.limited.nominal_concurrency_shares == 100,
               what="workload-low put back")
    # no annotation: changed (generation 2), it is left alone and said to be so
    edited = {"metadata": {"annotations": {AUTO: None}}, "spec": {"matchingPrecedence": 9500}}
    assert cluster.call("PATCH", f"{FC}/flowschemas/service-accounts", edited, patch)[0] == 200
    kept = wait_until(lambda: (fs := cluster.api.read_flow_schema("service-accounts")).metadata.annotations and fs, what="annotation written")
    assert kept.metadata.annotations[AUTO] == "false" and kept.spec.matching_precedence == 9500
    # the mandatory annotation is always true again
    cluster.call("PATCH", f"{FC}/flowschemas/exempt", {"metadata": {"annotations": {AUTO: "false"}}}, patch)
    wait_until(lambda: cluster.api.read_flow_schema("exempt").metadata.annotations[AUTO] == "true", what="exempt annotated true")
    # an object of nobody's suggestion, annotated true, goes; one without the annotation stays
    rule = [{"subjects": [{"kind": "Group", "group": {"name": "ops"}}], "nonResourceRules": [{"verbs": ["get"], "nonResourceURLs": ["/metrics"]}]}]
    for name, annotations in (("stale", {AUTO: "true"}), ("mine", {})):
        fs = {"metadata": {"name": name, "annotations": annotations}, "spec": {"priorityLevelConfiguration": {"name": "system"}, "rules": rule}}
        assert cluster.call("POST", f"{FC}/flowschemas", fs)[0] == 201
    wait_until(lambda: cluster.call("GET", f"{FC}/flowschemas/stale")[0] == 404, what="the stale FlowSchema deleted")
    assert cluster.call("GET", f"{FC}/flowschemas/mine")[0] == 200
