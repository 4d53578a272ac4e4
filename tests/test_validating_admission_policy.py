"""ValidatingAdmissionPolicy through a real `kplane serve` and the real kubectl: validations and
their messages, validationActions, params, variables, matchConditions, failurePolicy, the
authorizer, audit annotations.

One server for the module (HTTPS and RBAC as `kplane serve` runs, audited); each test's policies select only objects labelled
with the test's own name, so the tests never see each other's policies. A new policy takes
effect once the server's informers have seen it: :func:`until` polls with dry-run probes.
"""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from kplane.core.client.kubeconfig import load_kubeconfig
from tests.kubectl_cli import Kubectl
from tests.servers import Served, serving
from tests.waiting import wait_until

CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
POLICIES = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicies"
BINDINGS = "/apis/admissionregistration.k8s.io/v1/validatingadmissionpolicybindings"
AUDIT_POLICY = """apiVersion: audit.k8s.io/v1
kind: Policy
rules:
- level: Metadata
  resources: [{group: "", resources: [configmaps]}]
"""


class Cluster:
    def __init__(self, served: Served, kubectl: Kubectl, audit_log: Path) -> None:
        self.served, self.kubectl, self.audit_log = served, kubectl, audit_log
        self.tls = load_kubeconfig(served.kubeconfig).ssl  # the admin's client certificate

    def call(self, method: str, path: str, body: Any = None, **headers: str) -> tuple[int, dict[str, Any], Any]:
        """One request as the admin; (status, body, headers)."""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(self.served.url + path, data=data, method=method,
                                         headers={"Content-Type": "application/json", **headers})
        try:
            with urllib.request.urlopen(request, timeout=30, context=self.tls) as reply:
                return reply.status, json.loads(reply.read()), reply.headers
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read()), err.headers


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    workdir = tmp_path_factory.mktemp("vap")
    (workdir / "audit.yaml").write_text(AUDIT_POLICY)
    audit_log = workdir / "audit.log"
    with serving(workdir / "data", "--audit-policy-file", str(workdir / "audit.yaml"), "--audit-log-path", str(audit_log),
                 "--audit-log-mode", "blocking", secure=True) as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir)}
        yield Cluster(served, Kubectl(env, workdir), audit_log)


def configmap(test: str, name: str, data: dict[str, str] | None = None, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": name, "labels": {"vap-test": test, **labels}}, "data": data or {}}


def policy(test: str, validations: list[dict[str, Any]], **spec: Any) -> dict[str, Any]:
    """A policy on the ConfigMaps labelled for ``test``."""
    spec.setdefault("matchConstraints", {
        "objectSelector": {"matchLabels": {"vap-test": test}},
        "resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE", "UPDATE"],
                           "resources": ["configmaps"]}]})
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicy",
            "metadata": {"name": test}, "spec": {"validations": validations, **spec}}


def binding(test: str, name: str = "", actions: tuple[str, ...] = ("Deny",), **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "admissionregistration.k8s.io/v1", "kind": "ValidatingAdmissionPolicyBinding",
            "metadata": {"name": name or f"{test}-binding"},
            "spec": {"policyName": test, "validationActions": list(actions), **spec}}


def install(cluster: Cluster, *objects: dict[str, Any], probe: dict[str, Any]) -> None:
    """Create ``objects``, then wait until the dry-run create of ``probe`` is refused."""
    for obj in objects:
        path = POLICIES if obj["kind"] == "ValidatingAdmissionPolicy" else BINDINGS
        status, body, _ = cluster.call("POST", path, obj)
        assert status == 201, body
    wait_until(lambda: cluster.call("POST", CONFIGMAPS + "?dryRun=All", probe)[0] >= 400)


def test_a_denial_names_policy_and_binding_with_the_validation_s_reason_and_message(cluster: Cluster) -> None:
    test = "denial"
    install(cluster, policy(test, [
        {"expression": "!has(object.data.forbidden)", "reason": "Forbidden",
         "messageExpression": "'configmap ' + object.metadata.name + ' may not say forbidden'"},
        {"expression": "object.metadata.name.size() < 10", "message": "the name is too long"},
        {"expression": "!has(object.data.plain)"},
        {"expression": "!has(object.data.broken)", "messageExpression": "object.missing", "message": "broken it is"},
    ]), binding(test), probe=configmap(test, "probe", {"forbidden": "x"}))

    status, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "a", {"forbidden": "x"}))
    message = "configmaps \"a\" is forbidden: ValidatingAdmissionPolicy 'denial' with binding 'denial-binding' " \
              "denied request: configmap a may not say forbidden"
    assert (status, body["reason"], body["message"]) == (403, "Forbidden", message)
    assert body["details"]["causes"] == [{"message": message.partition("is forbidden: ")[2]}]

    status, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "a-long-name"))
    assert (status, body["reason"]) == (422, "Invalid")
    assert body["message"].endswith("denied request: the name is too long")
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "b", {"plain": "x"}))
    assert body["message"].endswith("denied request: failed expression: !has(object.data.plain)")
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "b", {"broken": "x"}))
    assert body["message"].endswith("denied request: broken it is")  # a failing messageExpression falls back

    done = cluster.kubectl.run("create", "configmap", "c", "--from-literal=forbidden=1", "--dry-run=server")
    assert "configmap/c created (server dry run)" in done.stdout  # not labelled for the policy
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "fine"))[0] == 201


def test_warn_and_audit_actions_let_the_request_through_and_tell_the_client_and_the_audit_log(cluster: Cluster) -> None:
    test = "warn"
    install(cluster, policy(test, [{"expression": "object.data.size() == 0", "message": "keep it empty"}],
                            auditAnnotations=[{"key": "size", "valueExpression": "string(object.data.size())"}]),
            binding(test, actions=("Warn", "Audit")), binding(test, "warn-deny", ("Deny",), matchResources={
                "objectSelector": {"matchLabels": {"strict": "yes"}}}),
            probe=configmap(test, "probe", {"a": "b"}, strict="yes"))

    done = cluster.kubectl.apply_file("apply", json.dumps(configmap(test, "w", {"a": "b"})))
    assert "configmap/w created" in done
    status, body, headers = cluster.call("PUT", f"{CONFIGMAPS}/w", configmap(test, "w", {"a": "c"}))
    assert status == 200, body
    assert headers.get_all("Warning") == [
        "299 - \"Validation failed for ValidatingAdmissionPolicy 'warn' with binding 'warn-binding': keep it empty\""]
    events = [json.loads(line) for line in cluster.audit_log.read_text().splitlines()]
    [event] = [e for e in events if e["verb"] == "update" and e["objectRef"].get("name") == "w"
               and e["stage"] == "ResponseComplete"]
    assert event["annotations"]["warn/size"] == "1"
    assert json.loads(event["annotations"]["validation.policy.admission.k8s.io/validation_failure"]) == [{
        "message": "keep it empty", "policy": "warn", "binding": "warn-binding", "expressionIndex": 0,
        "validationActions": ["Warn", "Audit"]}]


def test_params_come_from_the_binding_s_paramref_and_a_missing_one_obeys_parameter_not_found_action(cluster: Cluster) -> None:
    test = "params"
    limits = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "limits", "namespace": "default"},
              "data": {"max": "2"}}
    assert cluster.call("POST", CONFIGMAPS, limits)[0] == 201
    install(cluster, policy(test, [{"expression": "object.data.size() <= int(params.data.max)",
                                    "messageExpression": "'at most ' + params.data.max + ' keys (' + params.kind + ')'"}],
                            paramKind={"apiVersion": "v1", "kind": "ConfigMap"}),
            binding(test, paramRef={"name": "limits", "parameterNotFoundAction": "Deny"}),
            probe=configmap(test, "probe", {"a": "1", "b": "2", "c": "3"}))
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "big", {"a": "1", "b": "2", "c": "3"}))
    assert body["message"].endswith("denied request: at most 2 keys (ConfigMap)")
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "small", {"a": "1"}))[0] == 201

    # A param that is not there: Deny refuses everything the binding matches; Allow skips the binding.
    missing = binding(test, "params-missing", paramRef={"name": "nope", "parameterNotFoundAction": "Deny"},
                      matchResources={"objectSelector": {"matchLabels": {"missing": "deny"}}})
    allowed = binding(test, "params-allowed", paramRef={"name": "nope", "parameterNotFoundAction": "Allow"},
                      matchResources={"objectSelector": {"matchLabels": {"missing": "allow"}}})
    install(cluster, missing, allowed, probe=configmap(test, "probe", missing="deny"))
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "m", missing="deny"))
    assert body["message"] == ("configmaps \"m\" is forbidden: ValidatingAdmissionPolicy 'params' with binding "
                               "'params-missing' denied request: failed to configure binding: no params found for "
                               "policy binding with `Deny` parameterNotFoundAction")
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "m", missing="allow"))[0] == 201


def test_variables_are_lazy_and_match_conditions_and_failure_policy_decide_errors(cluster: Cluster) -> None:
    test = "variables"
    install(cluster, policy(test, [{"expression": "variables.tier != 'gold' || variables.owner != ''",
                                    "messageExpression": "'gold needs an owner, ' + variables.name"},
                                   {"expression": "!has(object.data.ns) || object.data.ns == namespaceObject.metadata.name",
                                    "message": "ns must name the namespace"}],
                            variables=[{"name": "name", "expression": "object.metadata.name"},
                                       {"name": "tier", "expression": "object.data.tier"},
                                       {"name": "owner", "expression": "object.data.?owner.orValue('')"},
                                       {"name": "unused", "expression": "object.data.nothere"}],
                            matchConditions=[{"name": "not-skipped", "expression": "!has(object.data.skip)"}]),
            binding(test), probe=configmap(test, "probe", {"tier": "gold"}))
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "g", {"tier": "gold"}))
    assert body["message"].endswith("denied request: gold needs an owner, g")
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "g", {"tier": "gold", "owner": "me"}))[0] == 201
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "s", {"tier": "gold", "skip": "1"}))[0] == 201
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "o", {"tier": "silver", "ns": "other"}))
    assert body["message"].endswith("denied request: ns must name the namespace")
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "o", {"tier": "silver", "ns": "default"}))[0] == 201
    # An error: failurePolicy Fail (the default) denies with the expression and cel's words.
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "n", {}))
    assert body["message"].endswith(
        "denied request: expression 'variables.tier != 'gold' || variables.owner != ''' resulted in error: no such key: tier")

    test = "ignored"
    install(cluster, policy(test, [{"expression": "object.data.tier == 'gold'"}, {"expression": "false", "message": "no"}],
                            failurePolicy="Ignore",
                            matchConditions=[{"name": "deny-only-flagged", "expression": "object.data.flag == 'on'"}]),
            binding(test), probe=configmap(test, "probe", {"flag": "on", "tier": "x"}))
    # The match condition's error and the first validation's are ignored; the plain false still denies.
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "i", {}))[0] == 201
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "j", {"flag": "on"}))
    assert body["message"].endswith("denied request: no")


def test_the_authorizer_checks_the_requesting_user_s_permissions(cluster: Cluster) -> None:
    test = "authz"
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "Role", "metadata": {"name": "cm-writer", "namespace": "default"},
            "rules": [{"apiGroups": [""], "resources": ["configmaps"], "verbs": ["create", "get", "list"]}]}
    role_binding = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "RoleBinding",
                    "metadata": {"name": "alice-cm", "namespace": "default"},
                    "roleRef": {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "cm-writer"},
                    "subjects": [{"apiGroup": "rbac.authorization.k8s.io", "kind": "User", "name": "alice"}]}
    cluster.kubectl.apply_file("apply", json.dumps(role))
    cluster.kubectl.apply_file("apply", json.dumps(role_binding))
    install(cluster, policy(test, [{"expression": "!has(object.data.probe)"}, {
        "expression": "authorizer.group('').resource('secrets').namespace(object.metadata.namespace).check('get').allowed()",
        "messageExpression": "'only who may read secrets: ' + object.metadata.name"}]),
        binding(test), probe=configmap(test, "probe", {"probe": "1"}))
    manifest = json.dumps(configmap(test, "by-alice"))
    done = cluster.kubectl.run("create", "-f", "-", "--as", "alice", stdin=manifest, check=False)
    assert done.returncode == 1
    assert "ValidatingAdmissionPolicy 'authz' with binding 'authz-binding' denied request: only who may read secrets:" \
        in done.stderr
    assert "configmap/by-admin created" in cluster.kubectl.run("create", "-f", "-", stdin=json.dumps(configmap(test, "by-admin"))).stdout


def test_type_checking_warns_of_fields_the_matched_kinds_do_not_have(cluster: Cluster) -> None:
    test = "typechecking"
    body = policy(test, [{"expression": "object.spec.replicas > 0 && object.spec.replicaz > 0"},
                         {"expression": "object.metadata.name != ''", "messageExpression": "object.spec.selector.foo"},
                         {"expression": "object.spec.selector.matchLabels.anything == 'x'"}],
                  matchConstraints={"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"],
                                                       "operations": ["CREATE"], "resources": ["deployments"]}]})
    assert cluster.call("POST", POLICIES, body)[0] == 201

    def checked() -> bool:
        status = cluster.call("GET", f"{POLICIES}/{test}")[1].get("status") or {}
        return "typeChecking" in status
    wait_until(checked)
    status = cluster.call("GET", f"{POLICIES}/{test}")[1]["status"]
    assert status["observedGeneration"] == 1
    assert status["typeChecking"]["expressionWarnings"] == [
        {"fieldRef": "spec.validations[0].expression",
         "warning": "apps/v1, Kind=Deployment: undefined field 'replicaz' in object.spec.replicaz"},
        {"fieldRef": "spec.validations[1].messageExpression",
         "warning": "apps/v1, Kind=Deployment: undefined field 'foo' in object.spec.selector.foo"}]
    assert "typechecking" in cluster.kubectl.run("get", "validatingadmissionpolicies").stdout


def test_params_of_a_custom_resource_s_kind_are_read_through_an_informer_made_on_demand(cluster: Cluster) -> None:
    test = "crdparams"
    crd = {"apiVersion": "apiextensions.k8s.io/v1", "kind": "CustomResourceDefinition",
           "metadata": {"name": "limits.vap.example.com"},
           "spec": {"group": "vap.example.com", "scope": "Cluster",
                    "names": {"plural": "limits", "singular": "limit", "kind": "Limit", "listKind": "LimitList"},
                    "versions": [{"name": "v1", "served": True, "storage": True, "schema": {"openAPIV3Schema": {
                        "type": "object", "properties": {"maxKeys": {"type": "integer"}}}}}]}}
    cluster.kubectl.apply_file("apply", json.dumps(crd))
    cluster.kubectl.run("wait", "--for=condition=Established", "crd/limits.vap.example.com", "--timeout=30s")
    limit = {"apiVersion": "vap.example.com/v1", "kind": "Limit", "metadata": {"name": "one", "labels": {"tier": "small"}},
             "maxKeys": 1}
    wait_until(lambda: cluster.call("POST", "/apis/vap.example.com/v1/limits", limit)[0] in (201, 409))
    install(cluster, policy(test, [{"expression": "object.data.size() <= params.maxKeys",
                                    "messageExpression": "params.metadata.name + ' allows ' + string(params.maxKeys)"}],
                            paramKind={"apiVersion": "vap.example.com/v1", "kind": "Limit"}),
            binding(test, paramRef={"selector": {"matchLabels": {"tier": "small"}}, "parameterNotFoundAction": "Deny"}),
            probe=configmap(test, "probe", {"a": "1", "b": "2"}))
    _, body, _ = cluster.call("POST", CONFIGMAPS, configmap(test, "two", {"a": "1", "b": "2"}))
    assert body["message"].endswith("denied request: one allows 1")
    assert cluster.call("POST", CONFIGMAPS, configmap(test, "one", {"a": "1"}))[0] == 201


def test_match_conditions_a_false_one_wins_over_errors_which_are_the_caller_s_to_decide() -> None:
    from kplane.plugins.admissionregistration.matchconditions import Matcher
    matcher = Matcher([{"name": "errs", "expression": "object.spec.x == 1"},
                       {"name": "named", "expression": "object.metadata.name == 'a'"}])
    assert matcher.match_activation({"object": {"metadata": {"name": "b"}}}).failed_condition == "named"
    erred = matcher.match_activation({"object": {"metadata": {"name": "a"}}})
    assert (erred.matches, erred.error) == (False, "expression 'object.spec.x == 1' resulted in error: no such key: spec")
    assert matcher.match_activation({"object": {"metadata": {"name": "a"}, "spec": {"x": 1}}}).matches
    broken = Matcher([{"name": "n", "expression": "'a' + 1 == 'a1'"}]).match_activation({"object": {}})
    assert broken.error.startswith("compilation error: compilation failed: ")


def test_an_expression_too_costly_for_the_values_at_hand_is_not_evaluated(cluster: Cluster) -> None:
    """The binding meters nothing and cannot be stopped: an evaluation whose cost on the request's
    values may pass kube's budget is refused before it starts ("actual cost limit exceeded"),
    and cheap ones on small values still run."""
    test = "costly"
    quadratic = "!has(object.data.keys) || object.data.keys.split(',').all(k, !(k in object.data.others.split(',')))"
    install(cluster, policy(test, [{"expression": "!has(object.data.probe)"}, {"expression": quadratic}]), binding(test),
            probe=configmap(test, "probe", {"probe": "1"}))
    small = configmap(test, "costly-small", {"keys": "a,b", "others": "c,d"})
    assert cluster.call("POST", CONFIGMAPS, small)[0] == 201
    big = configmap(test, "costly-big", {"keys": ",".join(str(i) for i in range(20000)),
                                  "others": ",".join(str(i) for i in range(20000, 120000))})
    status, body, _ = cluster.call("POST", CONFIGMAPS, big)
    assert status == 422 and "actual cost limit exceeded" in body["message"], body
