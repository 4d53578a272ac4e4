"""The admissionregistration.k8s.io kinds against one `kplane serve` (v1beta1 and v1alpha1 turned
on): created, applied, listed, explained and deleted with the real kubectl; kube's defaults,
table columns, generations and the policy's status subresource; invalid objects refused with
422s carrying kube's causes; the beta and alpha versions off by default."""

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

from tests.kubectl_cli import Kubectl
from tests.servers import serving
from tests.waiting import wait_until

GROUP = "/apis/admissionregistration.k8s.io"
V1 = f"{GROUP}/v1"

WEBHOOKS = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingWebhookConfiguration
metadata: {name: checks}
webhooks:
- name: pods.checks.example.com
  clientConfig: {service: {namespace: default, name: checker, path: /validate}}
  rules: [{operations: [CREATE, UPDATE], apiGroups: [""], apiVersions: [v1], resources: [pods, pods/status]}]
  sideEffects: None
  admissionReviewVersions: [v1]
  matchConditions: [{name: not-system, expression: "!request.userInfo.username.startsWith('system:')"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: MutatingWebhookConfiguration
metadata: {name: labels}
webhooks:
- name: one.labels.example.com
  clientConfig: {url: "https://127.0.0.1:9443/mutate", caBundle: "Y2VydGlmaWNhdGVz"}
  rules: [{operations: ["*"], apiGroups: [apps], apiVersions: ["*"], resources: ["*/scale"], scope: Namespaced}]
  sideEffects: NoneOnDryRun
  admissionReviewVersions: [v1, v1beta1]
- name: two.labels.example.com
  clientConfig: {url: "https://127.0.0.1:9443/again"}
  sideEffects: None
  admissionReviewVersions: [v1]
  reinvocationPolicy: IfNeeded
  timeoutSeconds: 3
"""

POLICY = """
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicy
metadata: {name: replicas}
spec:
  paramKind: {apiVersion: v1, kind: ConfigMap}
  matchConstraints:
    resourceRules: [{operations: [CREATE, UPDATE], apiGroups: [apps], apiVersions: [v1], resources: [deployments]}]
  variables: [{name: wanted, expression: "object.spec.replicas"}]
  validations:
  - expression: "variables.wanted <= int(params.data.max)"
    messageExpression: "'at most ' + params.data.max + ' replicas'"
    reason: Forbidden
  auditAnnotations: [{key: replicas, valueExpression: "string(object.spec.replicas)"}]
---
apiVersion: admissionregistration.k8s.io/v1
kind: ValidatingAdmissionPolicyBinding
metadata: {name: replicas-default}
spec:
  policyName: replicas
  validationActions: [Deny, Audit]
  paramRef: {name: limits, namespace: default, parameterNotFoundAction: Deny}
  matchResources: {namespaceSelector: {matchLabels: {team: a}}}
"""


@dataclass
class Cluster:
    url: str
    kubectl: Kubectl

    def call(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.url + path, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    workdir = tmp_path_factory.mktemp("admissionregistration")
    runtime = "admissionregistration.k8s.io/v1beta1=true,admissionregistration.k8s.io/v1alpha1=true"
    with serving(workdir / "data", "--runtime-config", runtime) as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir)}
        yield Cluster(served.url, Kubectl(env, workdir))


def _table(kubectl: Kubectl, resource: str) -> dict[str, list[str]]:
    lines = kubectl.run("get", resource).stdout.splitlines()
    return {line.split()[0]: line.split()[1:] for line in lines[1:]}


def _causes(body: dict[str, Any]) -> set[tuple[str, str, str]]:
    return {(c["reason"], c["field"], c["message"]) for c in body["details"]["causes"]}


def test_webhook_configurations_round_trip_through_kubectl_with_kube_defaults(cluster: Cluster) -> None:
    out = cluster.kubectl.apply_file("apply", WEBHOOKS)
    assert "validatingwebhookconfiguration.admissionregistration.k8s.io/checks created" in out
    assert _table(cluster.kubectl, "validatingwebhookconfigurations")["checks"][0] == "1"
    assert _table(cluster.kubectl, "mutatingwebhookconfigurations")["labels"][0] == "2"
    header = cluster.kubectl.run("get", "mutatingwebhookconfigurations").stdout.splitlines()[0].split()
    assert header == ["NAME", "WEBHOOKS", "AGE"]

    hook = cluster.kubectl.json("get", "validatingwebhookconfiguration", "checks")["webhooks"][0]
    assert hook["failurePolicy"] == "Fail" and hook["matchPolicy"] == "Equivalent" and hook["timeoutSeconds"] == 10
    assert hook["namespaceSelector"] == {} and hook["objectSelector"] == {}
    assert hook["clientConfig"]["service"]["port"] == 443 and hook["rules"][0]["scope"] == "*"
    assert "reinvocationPolicy" not in hook
    mutating = cluster.kubectl.json("get", "mutatingwebhookconfiguration", "labels")
    first, second = mutating["webhooks"]
    assert first["reinvocationPolicy"] == "Never" and first["rules"][0]["scope"] == "Namespaced"
    assert second["reinvocationPolicy"] == "IfNeeded" and second["timeoutSeconds"] == 3 and "rules" not in second
    assert mutating["metadata"]["generation"] == 1 and first["clientConfig"]["caBundle"] == "Y2VydGlmaWNhdGVz"

    explained = cluster.kubectl.run("explain", "mutatingwebhookconfigurations.webhooks.reinvocationPolicy").stdout
    assert "IfNeeded" in explained
    assert "validatingwebhookconfiguration.admissionregistration.k8s.io/checks" in cluster.kubectl.run(
        "get", "api-extensions", "-o", "name").stdout


def test_generation_counts_changes_of_the_webhooks_only(cluster: Cluster) -> None:
    cluster.kubectl.apply_file("apply", WEBHOOKS)
    cluster.kubectl.run("label", "validatingwebhookconfiguration", "checks", "tier=one")
    assert cluster.kubectl.json("get", "validatingwebhookconfiguration", "checks")["metadata"]["generation"] == 1
    cluster.kubectl.run("patch", "validatingwebhookconfiguration", "checks", "--type=json",
                        "-p", '[{"op": "replace", "path": "/webhooks/0/timeoutSeconds", "value": 5}]')
    assert cluster.kubectl.json("get", "validatingwebhookconfiguration", "checks")["metadata"]["generation"] == 2


def test_a_policy_and_its_binding_with_their_columns_and_defaults(cluster: Cluster) -> None:
    cluster.kubectl.apply_file("apply", POLICY)
    assert _table(cluster.kubectl, "validatingadmissionpolicies")["replicas"][:2] == ["1", "v1/ConfigMap"]
    assert _table(cluster.kubectl, "validatingadmissionpolicybindings")["replicas-default"][:2] == ["replicas", "default/limits"]
    header = cluster.kubectl.run("get", "validatingadmissionpolicybindings").stdout.splitlines()[0].split()
    assert header == ["NAME", "POLICYNAME", "PARAMREF", "AGE"]
    policy = cluster.kubectl.json("get", "validatingadmissionpolicy", "replicas")
    assert policy["spec"]["failurePolicy"] == "Fail"
    assert policy["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    assert policy["spec"]["matchConstraints"]["objectSelector"] == {}
    binding = cluster.kubectl.json("get", "validatingadmissionpolicybinding", "replicas-default")
    assert binding["spec"]["matchResources"]["objectSelector"] == {} and binding["metadata"]["generation"] == 1
    explained = cluster.kubectl.run("explain", "validatingadmissionpolicy.spec.validations").stdout
    assert "messageExpression" in explained and "reason" in explained


def test_the_status_subresource_is_kept_apart_from_the_spec(cluster: Cluster) -> None:
    cluster.kubectl.apply_file("apply", POLICY)
    path = f"{V1}/validatingadmissionpolicies/replicas"
    # the type-checking controller writes the status once per generation: after it, a /status write of ours cannot conflict
    policy = wait_until(lambda: (p := cluster.call("GET", path)[1]).get("status", {}).get("observedGeneration") == p["metadata"]["generation"] and p,
                        what="the policy's status of its generation")
    policy["status"] = {"observedGeneration": policy["metadata"]["generation"],
                        "typeChecking": {"expressionWarnings": [{"fieldRef": "spec.validations[0].expression",
                                                                 "warning": "no such field"}]}}
    policy["spec"]["failurePolicy"] = "Ignore"  # ignored through /status
    code, written = cluster.call("PUT", f"{path}/status", policy)
    assert code == 200, written
    assert written["spec"]["failurePolicy"] == "Fail" and written["status"]["typeChecking"]["expressionWarnings"]
    written["status"] = {}  # ignored through the resource
    written["spec"]["failurePolicy"] = "Ignore"
    code, updated = cluster.call("PUT", path, written)
    assert code == 200, updated
    assert updated["spec"]["failurePolicy"] == "Ignore"
    assert updated["metadata"]["generation"] == policy["metadata"]["generation"] + 1
    assert updated["status"]["typeChecking"]["expressionWarnings"][0]["warning"] == "no such field"
    bad = {**updated, "status": {"typeChecking": {"expressionWarnings": [{"fieldRef": " ", "warning": ""}]}}}
    code, refused = cluster.call("PUT", f"{path}/status", bad)
    assert code == 422
    assert {("FieldValueRequired", "status.typeChecking.expressionWarnings[0].warning", "Required value"),
            ("FieldValueRequired", "status.typeChecking.expressionWarnings[0].fieldRef", "Required value")} <= _causes(refused)


def test_an_invalid_webhook_configuration_is_refused_with_kube_causes(cluster: Cluster) -> None:
    body = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingWebhookConfiguration",
            "metadata": {"name": "broken"}, "webhooks": [
                {"name": "short", "clientConfig": {"url": "http://example.com/x?y=1", "service": {"namespace": "a", "name": "b"}},
                 "rules": [{"operations": ["CREATE", "*"], "apiGroups": [""], "apiVersions": ["v1"],
                            "resources": ["*", "pods", "*/*"], "scope": "Somewhere"}],
                 "timeoutSeconds": 0, "admissionReviewVersions": ["v1"], "sideEffects": "Some",
                 "matchConditions": [{"name": "a", "expression": "object."}, {"name": "a", "expression": "'x'"}]},
                {"name": "dup.example.com", "clientConfig": {"url": "https://example.com"}, "sideEffects": "None",
                 "admissionReviewVersions": ["v3"]},
                {"name": "dup.example.com", "clientConfig": {}, "sideEffects": "None"}]}
    code, status = cluster.call("POST", f"{V1}/validatingwebhookconfigurations", body)
    assert code == 422 and status["reason"] == "Invalid"
    causes = _causes(status)
    for cause in [
        ("FieldValueInvalid", "webhooks[0].name", 'Invalid value: "short": should be a domain with at least three segments separated by dots'),
        ("FieldValueInvalid", "webhooks[0].rules[0].operations",
         "Invalid value: [\"CREATE\",\"*\"]: if '*' is present, must not specify other operations"),
        ("FieldValueInvalid", "webhooks[0].rules[0].resources",
         "Invalid value: [\"*\",\"pods\",\"*/*\"]: if '*/*' is present, must not specify other resources"),
        ("FieldValueInvalid", "webhooks[0].rules[0].resources",
         "Invalid value: [\"*\",\"pods\",\"*/*\"]: if '*' is present, must not specify other resources without subresources"),
        ("FieldValueNotSupported", "webhooks[0].rules[0].scope",
         'Unsupported value: "Somewhere": supported values: "*", "Cluster", "Namespaced"'),
        ("FieldValueNotSupported", "webhooks[0].sideEffects", 'Unsupported value: "Some": supported values: "None", "NoneOnDryRun"'),
        ("FieldValueInvalid", "webhooks[0].timeoutSeconds", "Invalid value: 0: the timeout value must be between 1 and 30 seconds"),
        ("FieldValueRequired", "webhooks[0].clientConfig", "Required value: exactly one of url or service is required"),
        ("FieldValueInvalid", "webhooks[0].matchConditions[1].expression", "Invalid value: \"'x'\": must evaluate to bool"),
        ("FieldValueDuplicate", "webhooks[0].matchConditions[1].name", 'Duplicate value: "a"'),
        ("FieldValueInvalid", "webhooks[1].admissionReviewVersions",
         'Invalid value: ["v3"]: must include at least one of v1, v1beta1'),
        ("FieldValueRequired", "webhooks[2].clientConfig", "Required value: exactly one of url or service is required"),
        ("FieldValueRequired", "webhooks[2].admissionReviewVersions", "Required value: must specify one of v1, v1beta1"),
        ("FieldValueDuplicate", "webhooks[2].name", 'Duplicate value: "dup.example.com"'),
    ]:
        assert cause in causes, (cause, sorted(causes))
    assert any(f == "webhooks[0].matchConditions[0].expression" and "compilation failed" in m for _, f, m in causes)
    body["webhooks"] = [{"name": "ca.example.com", "clientConfig": {"url": "https://example.com", "caBundle": "not base64!"},
                         "sideEffects": "None", "admissionReviewVersions": ["v1"]}]
    code, status = cluster.call("POST", f"{V1}/validatingwebhookconfigurations", body)
    assert code == 400 and "illegal base64 data" in status["message"]  # a decoding error, as kube-apiserver answers it
    body["webhooks"] = [{"name": "url.example.com", "clientConfig": {"url": "http://user@example.com/#frag"},
                         "sideEffects": "None", "admissionReviewVersions": ["v1"]}]
    code, status = cluster.call("POST", f"{V1}/validatingwebhookconfigurations", body)
    assert code == 422
    assert {("FieldValueInvalid", "webhooks[0].clientConfig.url",
             "Invalid value: \"http\": 'https' is the only allowed URL scheme; desired format: https://host[/path]"),
            ("FieldValueInvalid", "webhooks[0].clientConfig.url", 'Invalid value: "frag": fragments are not permitted in the URL'),
            } <= _causes(status)


def test_an_invalid_policy_and_binding_are_refused_with_kube_causes(cluster: Cluster) -> None:
    policy = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy", "metadata": {"name": "bad"},
              "spec": {"matchConstraints": {}, "failurePolicy": "Sometimes", "paramKind": {"apiVersion": "a/b/c"},
                       "variables": [{"name": "in", "expression": "1"}],
                       "validations": [{"expression": "params.x > variables.y", "messageExpression": "1", "reason": "Gone",
                                        "message": "two\nlines"},
                                       {"expression": "object.metadata.name.matches('a(')"},
                                       {"expression": "object.metadata.name.find('a(') == ''"}],
                       "auditAnnotations": [{"key": "k", "valueExpression": "1"}, {"key": "k", "valueExpression": "'v'"}]}}
    code, status = cluster.call("POST", f"{V1}/validatingadmissionpolicies", policy)
    assert code == 422
    causes = _causes(status)
    for cause in [
        ("FieldValueNotSupported", "spec.failurePolicy", 'Unsupported value: "Sometimes": supported values: "Fail", "Ignore"'),
        ("FieldValueInvalid", "spec.paramKind.apiVersion", 'Invalid value: "a/b/c": unexpected GroupVersion string: a/b/c'),
        ("FieldValueRequired", "spec.paramKind.kind", "Required value"),
        ("FieldValueRequired", "spec.matchConstraints.resourceRules", "Required value"),
        ("FieldValueInvalid", "spec.variables[0].name", 'Invalid value: "in": name is not a valid CEL identifier'),
        ("FieldValueInvalid", "spec.validations[0].messageExpression", 'Invalid value: "1": must evaluate to string'),
        ("FieldValueInvalid", "spec.validations[0].message", 'Invalid value: "two\\nlines": message must not contain line breaks'),
        ("FieldValueNotSupported", "spec.validations[0].reason",
         'Unsupported value: "Gone": supported values: "Forbidden", "Invalid", "RequestEntityTooLarge"'),
        ("FieldValueInvalid", "spec.auditAnnotations[0].valueExpression", 'Invalid value: "1": must evaluate to one of [string null_type]'),
        ("FieldValueDuplicate", "spec.auditAnnotations[1].key", 'Duplicate value: "k"'),
        # what kube's CEL environment refuses though it type-checks: its literal validators, its regex optimisation
        ("FieldValueInvalid", "spec.validations[1].expression", "Invalid value: \"object.metadata.name.matches('a(')\": "
         "compilation failed: ERROR: <input>:1:30: invalid matches argument\n | object.metadata.name.matches('a(')\n"
         " | .............................^"),
        ("InternalError", "spec.validations[2].expression",
         "Internal error: program instantiation failed: error parsing regexp: missing closing ): `a(`"),
    ]:
        assert cause in causes, (cause, sorted(causes))
    # params and variables are declared (paramKind and variables are set): the expression compiles
    assert not any(f == "spec.validations[0].expression" for _, f, _ in causes)
    del policy["spec"]["validations"], policy["spec"]["auditAnnotations"]
    code, status = cluster.call("POST", f"{V1}/validatingadmissionpolicies", policy)
    detail = "Required value: validations or auditAnnotations must contain at least one item"
    assert {("FieldValueRequired", "spec.validations", detail), ("FieldValueRequired", "spec.auditAnnotations", detail)} <= _causes(status)

    binding = {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
               "metadata": {"name": "bad"}, "spec": {"validationActions": ["Deny", "Warn", "Deny"],
                                                     "paramRef": {"name": "x", "selector": {}}}}
    code, status = cluster.call("POST", f"{V1}/validatingadmissionpolicybindings", binding)
    assert code == 422
    assert {("FieldValueRequired", "spec.policyName", "Required value"),
            ("FieldValueForbidden", "spec.paramRef.name", "Forbidden: name and selector are mutually exclusive"),
            ("FieldValueRequired", "spec.paramRef.parameterNotFoundAction", "Required value"),
            ("FieldValueDuplicate", "spec.validationActions[2]", 'Duplicate value: "Deny"'),
            } <= _causes(status)
    binding["spec"] = {"policyName": "p"}
    code, status = cluster.call("POST", f"{V1}/validatingadmissionpolicybindings", binding)
    assert ("FieldValueRequired", "spec.validationActions", "Required value: at least one validation action is required") in _causes(status)


def test_mutating_policies_at_v1alpha1_read_back_at_v1beta1(cluster: Cluster) -> None:
    manifest = """
apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicy
metadata: {name: sidecar}
spec:
  matchConstraints:
    resourceRules: [{operations: [CREATE], apiGroups: [""], apiVersions: [v1], resources: [pods]}]
  reinvocationPolicy: IfNeeded
  mutations:
  - patchType: JSONPatch
    jsonPatch: {expression: "[JSONPatch{op: 'add', path: '/metadata/labels/x', value: 'y'}]"}
---
apiVersion: admissionregistration.k8s.io/v1alpha1
kind: MutatingAdmissionPolicyBinding
metadata: {name: sidecar}
spec: {policyName: sidecar, paramRef: {selector: {matchLabels: {app: web}}}}
"""
    cluster.kubectl.apply_file("apply", manifest)
    assert _table(cluster.kubectl, "mutatingadmissionpolicies")["sidecar"][:2] == ["1", "<unset>"]
    assert _table(cluster.kubectl, "mutatingadmissionpolicybindings")["sidecar"][:2] == ["sidecar", "app=web"]
    code, policy = cluster.call("GET", f"{GROUP}/v1beta1/mutatingadmissionpolicies/sidecar")
    assert code == 200 and policy["apiVersion"] == "admissionregistration.k8s.io/v1beta1"
    assert policy["spec"]["failurePolicy"] == "Fail" and policy["spec"]["matchConstraints"]["matchPolicy"] == "Equivalent"
    _, binding = cluster.call("GET", f"{GROUP}/v1beta1/mutatingadmissionpolicybindings/sidecar")
    assert binding["spec"]["paramRef"]["parameterNotFoundAction"] == "Deny"  # v1alpha1's default

    bad = {"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy", "metadata": {"name": "bad"},
           "spec": {"matchConstraints": {"resourceRules": [{"operations": ["CREATE"], "apiGroups": [""],
                                                            "apiVersions": ["v1"], "resources": ["pods"]}]},
                    "mutations": [{"patchType": "ApplyConfiguration", "jsonPatch": {"expression": "[]"}},
                                  {"patchType": "Merge"}]}}
    code, status = cluster.call("POST", f"{GROUP}/v1beta1/mutatingadmissionpolicies", bad)
    assert code == 422
    assert {("FieldValueRequired", "spec.reinvocationPolicy", "Required value"),
            ("FieldValueRequired", "spec.mutations[0].applyConfiguration",
             "Required value: applyConfiguration field is required when patchType is ApplyConfiguration"),
            ("FieldValueForbidden", "spec.mutations[0].jsonPatch",
             "Forbidden: jsonPatch field is forbidden when patchType is ApplyConfiguration"),
            ("FieldValueNotSupported", "spec.mutations[1].patchType",
             'Unsupported value: "Merge": supported values: "ApplyConfiguration", "JSONPatch"'),
            } <= _causes(status)
    code, status = cluster.call("POST", f"{GROUP}/v1beta1/mutatingadmissionpolicybindings", {
        "apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicyBinding",
        "metadata": {"name": "nodefault"}, "spec": {"policyName": "sidecar", "paramRef": {"name": "p"}}})
    assert code == 422  # v1beta1 has no default for it
    assert ("FieldValueRequired", "spec.paramRef.parameterNotFoundAction", "Required value") in _causes(status)
    cluster.kubectl.run("delete", "mutatingadmissionpolicy,mutatingadmissionpolicybinding", "sidecar")
    assert cluster.call("GET", f"{GROUP}/v1alpha1/mutatingadmissionpolicies/sidecar")[0] == 404


def test_delete_through_kubectl(cluster: Cluster) -> None:
    cluster.kubectl.apply_file("apply", WEBHOOKS)
    cluster.kubectl.apply_file("apply", POLICY)
    out = cluster.kubectl.run("delete", "validatingwebhookconfiguration/checks", "mutatingwebhookconfiguration/labels",
                              "validatingadmissionpolicy/replicas", "validatingadmissionpolicybinding/replicas-default").stdout
    assert out.count("deleted") == 4
    assert cluster.call("GET", f"{V1}/validatingwebhookconfigurations/checks")[0] == 404


async def test_only_v1_is_served_by_default(api: Any) -> None:
    reply = await api.get(GROUP)
    assert [v["version"] for v in reply.body["versions"]] == ["v1"]
    kinds = {r["kind"] for r in (await api.get(V1)).body["resources"]}
    assert kinds == {"ValidatingWebhookConfiguration", "MutatingWebhookConfiguration", "ValidatingAdmissionPolicy",
                     "ValidatingAdmissionPolicyBinding"}
    assert (await api.get(f"{GROUP}/v1beta1/mutatingadmissionpolicies")).status == 404
