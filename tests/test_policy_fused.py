"""A ValidatingAdmissionPolicy fused into one CEL program decides exactly as its expressions one
by one: for each policy and object here, :func:`validate` with the request's shared activation
(the fused path) gives what it gives without (expression by expression), and the fused program
exists - and admits outright - where it should, so the fast path is really taken."""

from __future__ import annotations

from typing import Any

import pytest

from kplane.api import cel
from kplane.plugins.admissionregistration.policy import fused
from kplane.plugins.admissionregistration.policy.validating import BATCHED, compile_policy, validate


def policy(validations: list[str], variables: dict[str, str] | None = None, conditions: list[str] | None = None,
           **spec: Any) -> dict[str, Any]:
    return {"metadata": {"name": "p"}, "spec": {
        "validations": [{"expression": v, "message": f"no: {v}"} for v in validations],
        "variables": [{"name": k, "expression": e} for k, e in (variables or {}).items()],
        "matchConditions": [{"name": f"c{i}", "expression": e} for i, e in enumerate(conditions or ())], **spec}}


def data(**fields: str) -> dict[str, Any]:
    obj = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "cm", "namespace": "default"}, "data": fields}
    return {"object": obj, "oldObject": None, "request": {"operation": "CREATE", "namespace": "default"},
            "namespaceObject": None, "params": {"data": {"max": "3"}}, "authorizer": cel.authz.value()}


BENCH = policy(["!has(object.data) || !has(object.data.deny7)", "variables.keys < 100 && object.metadata.name.size() < 64"],
               {"keys": "has(object.data) ? object.data.size() : 0"})

#: (policy, object's data, whether it is fused, whether the fused program admits it outright)
CASES = [
    (BENCH, {"a": "b"}, True, True),
    (BENCH, {"deny7": "x"}, True, False),
    # A variable that fails is an error only for what reads it; one nothing reads is not evaluated.
    (policy(["object.data.a == 'b'"], {"unused": "object.data.nothere"}), {"a": "b"}, True, True),
    (policy(["variables.missing == 'x'"], {"missing": "object.data.nothere"}), {"a": "b"}, True, False),
    # Variables reading earlier ones are bound in order; a later one, or all of them, is not fused.
    (policy(["variables.b == 2"], {"a": "size(object.data)", "b": "variables.a * 2"}), {"a": "b"}, True, True),
    (policy(["variables.a == 2"], {"a": "variables.b * 2", "b": "size(object.data)"}), {"a": "b"}, False, False),
    (policy(["variables['a'] == 1"], {"a": "size(object.data)"}), {"a": "b"}, False, False),
    # A trailing comment ends at its line.
    (policy(["object.data.a == 'b' // the usual case", "true"]), {"a": "b"}, True, True),
    # Conditions: a false one wins over errors (no match); an error alone decides nothing outright.
    (policy(["false"], conditions=["object.data.nothere == 'x'", "object.data.a == 'z'"]), {"a": "b"}, True, True),
    (policy(["false"], conditions=["object.data.nothere == 'x'"]), {"a": "b"}, True, False),
    (policy(["false"], conditions=["object.data.nothere == 'x'"], failurePolicy="Ignore"), {"a": "b"}, True, False),
    (policy(["true"], conditions=["object.data.a == 'b'"]), {"a": "b"}, True, True),
    # A validation that is not a bool is a failure, found expression by expression.
    (policy(["dyn(object.data.a)"]), {"a": "b"}, True, False),
    (policy(["int(params.data.max) >= size(object.data)"], paramKind={"apiVersion": "v1", "kind": "ConfigMap"}),
     {"a": "b"}, True, True),
    (policy(["object.data.a == 'b'", "object.data.nothere == 1"], failurePolicy="Ignore"), {"a": "b"}, True, False),
    # What is not bounded by the request's size is estimated per expression: never fused.
    (policy(["object.data.a.split(',').size() < 3"]), {"a": "b"}, False, False),
    (policy(["variables.b == 'bb'"], {"a": "object.data.a", "b": "variables.a + variables.a"}), {"a": "b"}, False, False),
    (policy(["true"], auditAnnotations=[{"key": "k", "valueExpression": "'v'"}]), {"a": "b"}, False, False),
    (policy(["object.data.a == 'b'", "has(object.data.nothere"]), {"a": "b"}, False, False),
]


@pytest.mark.parametrize(("wire", "fields", "is_fused", "admitted"), CASES)
def test_a_fused_policy_decides_as_its_expressions_one_by_one(wire: dict[str, Any], fields: dict[str, str],
                                                             is_fused: bool, admitted: bool) -> None:
    compiled = compile_policy(wire)
    assert (compiled.fused is not None) == is_fused
    request = data(**fields)
    shared = cel.environment.activation(request)
    if is_fused:
        assert fused.admits(compiled.fused, shared) == admitted
    for fail in (True, False):
        assert validate(compiled, dict(request), fail, shared) == validate(compiled, dict(request), fail)


def test_a_policy_too_deep_for_one_program_runs_expression_by_expression() -> None:
    """The parser's nesting limit refuses the fused program, not the policy."""
    deep = policy(["variables.v59 == 1"],
                  {f"v{i}": "size(object.data)" if i == 0 else f"variables.v{i - 1} * 1" for i in range(60)})
    compiled = compile_policy(deep)
    assert compiled.fused is None
    assert validate(compiled, data(a="b"), True).denials == []


def test_policies_batched_sixteen_to_a_program_admit_alike_and_an_error_decides_only_its_chunk() -> None:
    policies = [compile_policy(policy([f"!has(object.data.deny{i})"], {"n": "size(object.data)"})) for i in range(40)]
    policies[20] = compile_policy(policy(["object.data.nothere == 'x'"]))  # errors: its chunk decides nothing
    policies[35] = compile_policy(policy(["false"]))  # denies: only itself left to evaluate
    assert all(p.batched for p in policies)
    batches = fused.Batches(BATCHED)
    shared = cel.environment.activation(data(a="b"))
    expected = [i < 16 or (i >= 32 and i != 35) for i in range(40)]
    # The first request compiles two of the three chunks (what one request may hold the loop
    # for): the third chunk's policies are left to evaluate on their own; the next has all three.
    admitted = batches.admitted([p.fused for p in policies], shared)  # type: ignore[misc]
    assert [p.fused in admitted for p in policies] == [e and i < 32 for i, e in enumerate(expected)]
    for _ in range(2):
        admitted = batches.admitted([p.fused for p in policies], shared)  # type: ignore[misc]
        assert [p.fused in admitted for p in policies] == expected
    with_params = compile_policy(policy(["params.data.max == '3'"], paramKind={"apiVersion": "v1", "kind": "ConfigMap"}))
    asks = compile_policy(policy(["authorizer.path('/healthz').check('get').allowed() || true"]))
    assert with_params.fused is not None and asks.fused is not None and not with_params.batched and not asks.batched
