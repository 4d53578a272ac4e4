"""MutatingAdmissionPolicy: the mutation engines on real kinds' schemas, then policies and
bindings through a real server."""

from __future__ import annotations

from typing import Any

import pytest

from kplane.api import shape_of
from kplane.plugins.admissionregistration.expressions import CompileError, Declarations
from kplane.plugins.admissionregistration.policy import mutating_patchers as patchers
from kplane.plugins.admissionregistration.policy.mutating_construction import rewrite
from kplane.plugins.apps.v1.schemas import DeploymentSchema

DEPLOYMENT = shape_of(DeploymentSchema)


def _deployment() -> dict[str, Any]:
    return {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web", "labels": {"app": "web"}},
            "spec": {"replicas": 1, "template": {"spec": {"containers": [
                {"name": "app", "image": "app:1"}, {"name": "log", "image": "log:1"}]}}}}


def _mutate(patch_type: str, expression: str, obj: dict[str, Any]) -> dict[str, Any]:
    mutation = patchers.compile_mutation(patch_type, expression, Declarations())
    data = {"object": obj, "oldObject": None, "request": {}, "namespaceObject": None}
    return patchers.apply(mutation, data, obj, DEPLOYMENT)


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
    ("JSONPatch", "Object{}", "must evaluate to list(JSONPatch)"),
    ("ApplyConfiguration", "[1]", "must evaluate to Object"),
    ("ApplyConfiguration", "Object{spec: 1 +}", "Syntax error"),
])
def test_compile_errors(patch_type: str, expression: str, message: str) -> None:
    with pytest.raises(CompileError, match=message.replace("(", r"\(").replace(")", r"\)")):
        patchers.compile_mutation(patch_type, expression, Declarations())
