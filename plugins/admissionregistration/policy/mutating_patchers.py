"""A MutatingAdmissionPolicy's mutations (kube's ``policy/mutating/patch``): compiled once,
each evaluated for a request and applied to the object in the version the policy matched.

* ``ApplyConfiguration``: the expression builds a partial object (``Object{spec: ...}``),
  merged into the object with server-side apply's rules but without ownership
  (``kplane.api.merge_configuration``).
* ``JSONPatch``: the expression builds a list of ``JSONPatch{op, path, from, value}``, applied
  as RFC 6902; a failed ``test`` leaves the object as it was, as kube does.
"""

from __future__ import annotations

import base64
import dataclasses
import datetime
from collections.abc import Callable
from typing import Any

from kplane.api import ApplyConfigurationError, PatchError, Shape, apply_json_patch, merge_configuration
from kplane.plugins.admissionregistration import expressions
from kplane.plugins.admissionregistration.expressions import CompileError, Declarations, compile_expression
from kplane.plugins.admissionregistration.policy.mutating_construction import ConstructionError, rewrite

APPLY_CONFIGURATION = "ApplyConfiguration"
JSON_PATCH = "JSONPatch"
_RETURNS = {APPLY_CONFIGURATION: ("MAP", "Object"), JSON_PATCH: ("LIST", "list(JSONPatch)")}


class MutationError(Exception):
    """A mutation that failed for one request; the message is kube's wording."""


@dataclasses.dataclass(frozen=True, slots=True)
class Mutation:
    patch_type: str
    program: Any  # the compiled cel.Expression
    mismatch: str = ""  # a construction's type name that does not match its field (see mutating_construction)


def compile_mutation(patch_type: str, expression: str, declarations: Declarations) -> Mutation:
    """One mutation's expression compiled for ``patch_type``. Raises CompileError."""
    try:
        rewritten = rewrite(expression)
    except ConstructionError as err:
        raise CompileError(f"compilation failed: ERROR: <input>: {err}") from None
    program = compile_expression(rewritten.source, declarations, want="DYN", constructions=rewritten.constructions)
    returns = program.return_type().name()
    kind, wording = _RETURNS[patch_type]
    if not (returns.startswith(kind) or returns == "DYN"):
        got = returns.lower().replace("<", "(").replace(">", ")")
        raise CompileError(f"must evaluate to {wording} but got {got}")
    return Mutation(patch_type, program, rewritten.mismatch)


Evaluate = Callable[[Any], Any]  # a compiled expression's value for this request; raises EvaluationError


def evaluate(mutation: Mutation, run: Evaluate) -> Any:
    """The expression's value as JSON, ``run`` evaluating it. Raises MutationError."""
    try:
        value = run(mutation.program)
    except expressions.EvaluationError as err:
        raise MutationError(err.detail) from None
    if mutation.mismatch:
        raise MutationError(mutation.mismatch)
    return to_json(value)


def apply(mutation: Mutation, run: Evaluate, obj: dict[str, Any], shape: Shape, *,
          declared_only: bool = True) -> dict[str, Any]:
    """``obj`` (a wire dict of the kind ``shape`` describes) after the mutation, its expression
    evaluated by ``run`` (a policy's composition, which knows its variables); ``declared_only``:
    an apply configuration may only set fields ``shape`` declares. Raises MutationError."""
    value = evaluate(mutation, run)
    if mutation.patch_type == APPLY_CONFIGURATION:
        if not isinstance(value, dict):
            raise MutationError(f"unsupported return type from ApplyConfiguration expression: {type(value).__name__}")
        config = {**value, "apiVersion": obj.get("apiVersion"), "kind": obj.get("kind")}
        try:
            return merge_configuration(obj, config, shape, declared_only=declared_only)
        except ApplyConfigurationError as err:
            raise MutationError(f"error applying patch: {err}") from None
    if not isinstance(value, list):
        raise MutationError("type mismatch: JSONPatchType.expression should evaluate to array")
    try:
        patched = apply_json_patch(obj, [_operation(op) for op in value])
    except PatchError as err:
        if err.message.endswith(": test failed"):
            return obj
        raise MutationError(f"JSONPath: {err.message}") from None
    if not isinstance(patched, dict) or (patched.get("apiVersion"), patched.get("kind")) != (obj.get("apiVersion"), obj.get("kind")):
        raise MutationError("JSONPath: the patched object must stay an object of its kind")
    return patched


def _operation(op: Any) -> dict[str, Any]:
    """One evaluated ``JSONPatch`` as an RFC 6902 operation."""
    if not isinstance(op, dict):
        raise MutationError("type mismatch: JSONPatchType.expression should evaluate to array of JSONPatch")
    out: dict[str, Any] = {"op": _text(op, "op"), "path": _text(op, "path")}
    if op.get("from"):
        out["from"] = _text(op, "from")
    if "value" in op:
        out["value"] = op["value"]
    return out


def _text(op: dict[str, Any], field: str) -> str:
    value = op.get(field, "")
    if not isinstance(value, str):
        raise MutationError(f"type mismatch: JSONPatch {field} must be a string")
    return value


def to_json(value: Any) -> Any:
    """A CEL value (as the binding gives it) as JSON, as kube marshals it through
    ``structpb.Value``: bytes base64, timestamps RFC 3339; anything else JSON cannot hold fails."""
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, dict):
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise MutationError(f"evaluated to a type that could not marshal to JSON: map key {key!r}")
            out[key] = to_json(item)
        return out
    if isinstance(value, (list, tuple)):
        return [to_json(item) for item in value]
    if isinstance(value, (bytes, bytearray)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, datetime.datetime):
        return value.astimezone(datetime.timezone.utc).isoformat().replace("+00:00", "Z")
    raise MutationError(f"evaluated to a type that could not marshal to JSON: {type(value).__name__}")
