"""MutatingAdmissionPolicy: the mutation engines on real kinds' schemas, then policies and
bindings through a real server."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from kplane.api import shape_of
from kplane.plugins.admissionregistration.expressions import CompileError, Declarations, evaluate
from kplane.plugins.admissionregistration.policy import mutating_patchers as patchers
from kplane.plugins.admissionregistration.policy.mutating_construction import rewrite
from kplane.plugins.apps.v1.schemas import DeploymentSchema
from tests.kubectl_cli import Kubectl
from tests.servers import serving

DEPLOYMENT = shape_of(DeploymentSchema)


def _deployment() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "app", "image": "app:1"}, {"name": "log", "image": "log:1"}]}}}}


def _mutate(patch_type: str, expression: str, obj: dict[str, Any]) -> dict[str, Any]:
    mutation = patchers.compile_mutation(patch_type, expression, Declarations())
    data = {"object": obj, "oldObject": None, "request": {}, "namespaceObject": None}
    return patchers.apply(mutation, lambda program: evaluate(program, data), obj, DEPLOYMENT)


def test_construction_becomes_map_literals_checked_against_field_paths() -> None:
    out = rewrite('Object{spec: Object.spec{replicas: x ? 1 : 2, ?paused: optional.none()}}')
    assert out.source.split() == ['{"spec":', '{"replicas":', "x", "?", "1", ":", '2,', '?"paused":',
                                  "optional.none()}}"]
    assert not out.mismatch
    assert rewrite('"Object{a: b}"').source == '"Object{a: b}"'  # strings stay as they are
    wrong = rewrite("Object{spec: Object.spec{selector: Object.spec.wrong{}}}")
    assert '"Object.spec.wrong", expected "Object.spec.selector"' in wrong.mismatch
    listed = rewrite("Object{spec: Object.spec{template: Object.spec.template{spec: Object.spec.template.spec{"
                     "containers: [Object.spec.template.spec.containers{name: 'a'}]}}}}")
    assert not listed.mismatch


def test_apply_configuration_merges_by_the_kinds_merge_keys() -> None:
    out = _mutate("ApplyConfiguration",
                  'Object{metadata: Object.metadata{labels: {"tier": "front"}}, spec: Object.spec{'
                  "replicas: object.spec.replicas + 2, template: Object.spec.template{spec: Object.spec.template.spec{"
                  'containers: [Object.spec.template.spec.containers{name: "log", image: "log:2"},'
                  ' Object.spec.template.spec.containers{name: "proxy", image: "proxy:1"}]}}}}', _deployment())
    assert out["metadata"]["labels"] == {"app": "web", "tier": "front"}
    assert out["spec"]["replicas"] == 3
    assert out["spec"]["template"]["spec"]["containers"] == [
        {"name": "app", "image": "app:1"}, {"name": "log", "image": "log:2"}, {"name": "proxy", "image": "proxy:1"}]


def test_apply_configuration_refuses_atomic_fields_and_type_mismatches() -> None:
    with pytest.raises(patchers.MutationError, match=r"may not mutate atomic arrays, maps or structs: "
                                                     r"\.spec\.template\.spec\.containers\[0\]\.args"):
        _mutate("ApplyConfiguration", "Object{spec: Object.spec{template: Object.spec.template{spec: "
                "Object.spec.template.spec{containers: [Object.spec.template.spec.containers{name: 'app', "
                "args: ['-v']}]}}}}", _deployment())
    with pytest.raises(patchers.MutationError, match="type mismatch"):
        _mutate("ApplyConfiguration", "Object{spec: Object.spec{selector: Object.spec.wrong{}}}", _deployment())
    with pytest.raises(patchers.MutationError, match=r"failed to convert patch object to typed object: "
                                                     r"\.spec\.replicasx: field not declared in schema"):
        _mutate("ApplyConfiguration", "Object{spec: Object.spec{replicasx: 1}}", _deployment())


def test_json_patch_from_cel() -> None:
    out = _mutate("JSONPatch", '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("a/b~c"),'
                  ' value: "x"}, JSONPatch{op: "replace", path: "/spec/replicas", value: object.spec.replicas * 4}]',
                  _deployment())
    assert out["metadata"]["labels"] == {"app": "web", "a/b~c": "x"}
    assert out["spec"]["replicas"] == 4
    unchanged = _mutate("JSONPatch", '[JSONPatch{op: "test", path: "/spec/replicas", value: 9},'
                        ' JSONPatch{op: "remove", path: "/metadata"}]', _deployment())
    assert unchanged == _deployment()  # a failed test: the patch is not applied
    with pytest.raises(patchers.MutationError, match="^JSONPath: "):
        _mutate("JSONPatch", '[JSONPatch{op: "remove", path: "/spec/nothing"}]', _deployment())


@pytest.mark.parametrize(("patch_type", "expression", "message"), [
    ("JSONPatch", '[JSONPatch{op: "add", bad: 1}]', "undefined field 'bad'"),
    ("JSONPatch", "1", "must evaluate to list(JSONPatch) but got int"),
    ("ApplyConfiguration", '"teapot"', "must evaluate to Object but got string"),
    ("ApplyConfiguration", "Object{spec: 1 +}", "Syntax error"),
])
def test_compile_errors(patch_type: str, expression: str, message: str) -> None:
    with pytest.raises(CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        patchers.compile_mutation(patch_type, expression, Declarations())


# -- through a real server, with the real kubectl ---------------------------------------------

@pytest.fixture(scope="module")
def kubectl_map(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """`kplane serve` with admissionregistration.k8s.io/v1beta1 (and apps/v1beta2) on, and kubectl for it."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    workdir = tmp_path_factory.mktemp("map")
    with serving(workdir / "data", "--runtime-config", "admissionregistration.k8s.io/v1beta1=true,apps/v1beta2=true") as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"),
               "HOME": str(workdir)}
        yield Kubectl(env, workdir)


def _policy(kubectl: Kubectl, name: str, spec: dict[str, Any], binding: dict[str, Any] | None = None) -> None:
    """A policy for configmaps labelled ``test: <name>``, and its binding."""
    spec = {"matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                    "operations": ["CREATE", "UPDATE"], "resources": ["configmaps"]}],
                                 "objectSelector": {"matchLabels": {"test": name}}},
            "reinvocationPolicy": "Never", **spec}
    objects = [{"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy",
                "metadata": {"name": name}, "spec": spec},
               {"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicyBinding",
                "metadata": {"name": f"{name}-binding"}, "spec": {"policyName": name, **(binding or {})}}]
    kubectl.run("apply", "-f", "-", stdin=json.dumps({"apiVersion": "v1", "kind": "List", "items": objects}))


def _configmap(name: str, test: str, data: dict[str, str] | None = None) -> str:
    return json.dumps({"apiVersion": "v1", "kind": "ConfigMap",
                       "metadata": {"name": name, "namespace": "default", "labels": {"test": test}}, "data": data or {}})


def _in_force(kubectl: Kubectl, manifest: str, until: Callable[[subprocess.CompletedProcess[str]], bool]) -> None:
    """Wait until the server's informers see a policy: dry-run creates of ``manifest`` until
    ``until`` holds for one."""
    for _ in range(200):
        probe = kubectl.run("create", "--dry-run=server", "-o", "json", "-f", "-", stdin=manifest, check=False)
        if until(probe):
            return
        time.sleep(0.05)
    raise AssertionError(f"the policy never took effect: {probe.stdout}{probe.stderr}")


def _create(kubectl: Kubectl, name: str, test: str, *, until: Callable[[subprocess.CompletedProcess[str]], bool],
            data: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    """Create a ConfigMap once the policy ``test`` is in force (``until`` holds for a dry run)."""
    _in_force(kubectl, _configmap(name, test, data), until)
    return kubectl.run("create", "-o", "json", "-f", "-", stdin=_configmap(name, test, data), check=False)


def _mutated(key: str) -> Callable[[subprocess.CompletedProcess[str]], bool]:
    return lambda done: done.returncode == 0 and key in (json.loads(done.stdout).get("data") or {})


def test_apply_configuration_policy(kubectl_map: Kubectl) -> None:
    _policy(kubectl_map, "apply", {"mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": 'Object{metadata: Object.metadata{labels: {"mutated": "yes"}},'
                      ' data: {"greeting": "hello " + object.metadata.name}}'}}]})
    done = _create(kubectl_map, "cm-apply", "apply", until=_mutated("greeting"), data={"kept": "1"})
    made = json.loads(done.stdout)
    assert made["data"] == {"kept": "1", "greeting": "hello cm-apply"}
    assert made["metadata"]["labels"] == {"test": "apply", "mutated": "yes"}
    assert kubectl_map.json("get", "configmap", "cm-apply")["data"]["greeting"] == "hello cm-apply"


def test_json_patch_policy_with_params_variables_and_conditions(kubectl_map: Kubectl) -> None:
    kubectl_map.run("create", "configmap", "map-params", "--from-literal=suffix=-from-params")
    _policy(kubectl_map, "jsonpatch", {
        "paramKind": {"apiVersion": "v1", "kind": "ConfigMap"},
        "variables": [{"name": "value", "expression": 'object.metadata.name + params.data.suffix'}],
        "matchConditions": [{"name": "not-skipped", "expression": '!object.metadata.name.startsWith("skip-")'}],
        "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression":
                       '[JSONPatch{op: "add", path: "/metadata/labels/" + jsonpatch.escapeKey("example.com/patched"),'
                       ' value: variables.value}]'}}]},
        {"paramRef": {"name": "map-params", "namespace": "default", "parameterNotFoundAction": "Deny"}})
    labelled = lambda done: done.returncode == 0 and "example.com/patched" in json.loads(done.stdout)["metadata"]["labels"]
    done = _create(kubectl_map, "cm-patch", "jsonpatch", until=labelled)
    assert json.loads(done.stdout)["metadata"]["labels"] == {"test": "jsonpatch", "example.com/patched": "cm-patch-from-params"}
    skipped = kubectl_map.run("create", "-o", "json", "-f", "-", stdin=_configmap("skip-me", "jsonpatch"))
    assert json.loads(skipped.stdout)["metadata"]["labels"] == {"test": "jsonpatch"}


def test_failure_policies(kubectl_map: Kubectl) -> None:
    failing = {"patchType": "JSONPatch", "jsonPatch": {"expression": '[JSONPatch{op: "remove", path: "/data/absent"}]'}}
    _policy(kubectl_map, "fails", {"failurePolicy": "Fail", "mutations": [failing]})
    done = _create(kubectl_map, "cm-fails", "fails", until=lambda d: d.returncode != 0)
    assert done.returncode != 0
    # kube's answer: 403 with reason Invalid and the message as a cause, which kubectl prints so
    assert done.stderr.startswith("The configmaps \"cm-fails\" is invalid: : policy 'fails' with binding 'fails-binding' "
                                  "denied request: JSONPath: error in remove for path: '/data/absent'")
    _policy(kubectl_map, "ignored", {"failurePolicy": "Ignore", "mutations": [failing, {
        "patchType": "ApplyConfiguration", "applyConfiguration": {"expression": 'Object{data: {"after": "1"}}'}}]})
    done = _create(kubectl_map, "cm-ignored", "ignored", until=_mutated("after"))
    assert json.loads(done.stdout)["data"] == {"after": "1"}


def test_reinvocation_if_needed(kubectl_map: Kubectl) -> None:
    # "reinvoke-a" runs first and copies what "reinvoke-b" (after it, by name) writes.
    _policy(kubectl_map, "reinvoke-a", {"reinvocationPolicy": "IfNeeded", "mutations": [{
        "patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
            'has(object.data) && "b" in object.data ? Object{data: {"a": "saw " + object.data["b"]}} : Object{}'}}],
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                                "resources": ["configmaps"]}],
                             "objectSelector": {"matchLabels": {"test": "reinvoke"}}}})
    _policy(kubectl_map, "reinvoke-b", {"mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": 'Object{data: {"b": "value"}}'}}],
        "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"], "operations": ["CREATE"],
                                                "resources": ["configmaps"]}],
                             "objectSelector": {"matchLabels": {"test": "reinvoke"}}}})
    done = _create(kubectl_map, "cm-reinvoke", "reinvoke", until=_mutated("a"))
    assert json.loads(done.stdout)["data"] == {"a": "saw value", "b": "value"}


def test_mutations_compile_when_the_policy_is_written(kubectl_map: Kubectl) -> None:
    policy = {"apiVersion": "admissionregistration.k8s.io/v1beta1", "kind": "MutatingAdmissionPolicy",
              "metadata": {"name": "broken"}, "spec": {"reinvocationPolicy": "Never",
                  "matchConstraints": {"resourceRules": [{"apiGroups": [""], "apiVersions": ["v1"],
                                                          "operations": ["CREATE"], "resources": ["configmaps"]}]},
                  "mutations": [{"patchType": "JSONPatch", "jsonPatch": {"expression": 'Object{}'}},
                                {"patchType": "ApplyConfiguration", "applyConfiguration": {"expression": "Object{"}}]}}
    done = kubectl_map.run("create", "-f", "-", stdin=json.dumps(policy), check=False)
    assert done.returncode != 0
    assert "spec.mutations[0].jsonPatch.expression: Invalid value: \"Object{}\": must evaluate to list(JSONPatch)" in done.stderr
    assert "spec.mutations[1].applyConfiguration.expression: Invalid value: \"Object{\": compilation failed: " in done.stderr


def test_a_request_in_another_version_is_mutated_in_the_policy_s(kubectl_map: Kubectl) -> None:
    """matchPolicy Equivalent: a Deployment made through apps/v1beta2 is mutated as apps/v1,
    its containers merged by name."""
    _policy(kubectl_map, "sidecar", {
        "matchConstraints": {"resourceRules": [{"apiGroups": ["apps"], "apiVersions": ["v1"], "operations": ["CREATE"],
                                                "resources": ["deployments"]}],
                             "objectSelector": {"matchLabels": {"test": "sidecar"}}},
        "matchConditions": [{"name": "seen-as-v1", "expression": 'request.kind.version == "v1"'}],
        "mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {"expression":
            "Object{spec: Object.spec{replicas: 2, template: Object.spec.template{spec: Object.spec.template.spec{"
            'containers: [Object.spec.template.spec.containers{name: "proxy", image: "proxy:1"}]}}}}'}}]})
    labels = {"test": "sidecar"}
    manifest = {"apiVersion": "apps/v1beta2", "kind": "Deployment", "metadata": {"name": "web", "labels": labels},
                "spec": {"selector": {"matchLabels": labels}, "template": {"metadata": {"labels": labels}, "spec": {
                    "containers": [{"name": "app", "image": "app:1"}]}}}}

    def mutated(done: subprocess.CompletedProcess[str]) -> bool:
        return done.returncode == 0 and json.loads(done.stdout)["spec"].get("replicas") == 2

    _in_force(kubectl_map, json.dumps(manifest), mutated)
    made = json.loads(kubectl_map.run("create", "-o", "json", "-f", "-", stdin=json.dumps(manifest)).stdout)
    assert made["apiVersion"] == "apps/v1beta2" and made["spec"]["replicas"] == 2
    assert [c["name"] for c in made["spec"]["template"]["spec"]["containers"]] == ["app", "proxy"]
    assert made["spec"]["template"]["spec"]["containers"][1]["terminationMessagePath"] == "/dev/termination-log"


def test_the_authorizer_decides_off_the_event_loop(kubectl_map: Kubectl) -> None:
    _policy(kubectl_map, "authz", {"mutations": [{"patchType": "ApplyConfiguration", "applyConfiguration": {
        "expression": "Object{data: {'may-read-secrets': string(authorizer.group('').resource('secrets')"
                      ".namespace(object.metadata.namespace).check('get').allowed())}}"}}]})
    done = _create(kubectl_map, "cm-authz", "authz", until=_mutated("may-read-secrets"))
    assert json.loads(done.stdout)["data"] == {"may-read-secrets": "true"}  # the server allows everyone
