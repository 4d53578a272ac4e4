"""MutatingAdmissionPolicy's evaluation (kube's ``policy/mutating`` dispatcher): the
mutations of every matching policy-binding-param invocation applied in order, each to the
object the previous left, with reinvocation and the policies' failure policies.

A policy compiles once (:func:`compile_policy`); per request, :func:`dispatch` takes the
invocations the generic policy machinery matched and returns the errors for the failure
policies to weigh, having replaced the request's object with the mutated one.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from kplane.api import APIError
from kplane.plugins.admissionregistration import expressions
from kplane.plugins.admissionregistration.attributes import Attributes
from kplane.plugins.admissionregistration.expressions import CompileError, Declarations, compile_expression
from kplane.plugins.admissionregistration.matchconditions import Matcher
from kplane.plugins.admissionregistration.policy import mutating_patchers as patchers

PLUGIN = "MutatingAdmissionPolicy"


@dataclasses.dataclass(frozen=True, slots=True)
class Variable:
    name: str
    program: Any  # None when it did not compile
    error: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class PolicyEvaluator:
    """A policy compiled: its conditions, variables and mutations; ``error`` when any part
    did not compile (every request the policy matches then fails by its failure policy)."""

    matcher: Matcher
    variables: tuple[Variable, ...]
    mutations: tuple[patchers.Mutation, ...]
    error: str = ""


def compile_policy(spec: Mapping[str, Any]) -> PolicyEvaluator:
    """A MutatingAdmissionPolicy's ``spec`` (wire dict) compiled once."""
    declarations = Declarations(params=bool(spec.get("paramKind")), authorizer=True,
                                variables=bool(spec.get("variables")))
    errors: list[str] = []
    variables = []
    for i, variable in enumerate(spec.get("variables") or ()):
        name = str(variable.get("name") or "")
        try:
            variables.append(Variable(name, compile_expression(str(variable.get("expression") or ""),
                                                               declarations, want="DYN")))
        except CompileError as err:
            errors.append(f"spec.variables[{i}].expression: {err.detail}")
            variables.append(Variable(name, None, err.detail))
    mutations = []
    for i, mutation in enumerate(spec.get("mutations") or ()):
        patch_type = mutation.get("patchType") or ""
        body = mutation.get("applyConfiguration" if patch_type == patchers.APPLY_CONFIGURATION else "jsonPatch") or {}
        try:
            mutations.append(patchers.compile_mutation(patch_type, str(body.get("expression") or ""), declarations))
        except (CompileError, KeyError) as err:
            detail = err.detail if isinstance(err, CompileError) else f"unsupported patchType {patch_type!r}"
            errors.append(f"spec.mutations[{i}].expression: {detail}")
    matcher = Matcher(spec.get("matchConditions"), declarations)
    return PolicyEvaluator(matcher, tuple(variables), tuple(mutations), "; ".join(errors))


@dataclasses.dataclass(slots=True)
class Invocation:
    """One policy-binding-param triple that matched a request, seen in ``version``."""

    policy: Mapping[str, Any]  # wire dicts, as the informers hold them
    binding: Mapping[str, Any]
    param: Mapping[str, Any] | None
    version: str
    evaluator: PolicyEvaluator

    @property
    def key(self) -> tuple[str, str, str, str]:
        meta = (self.param or {}).get("metadata") or {}
        return (_name(self.policy), _name(self.binding), meta.get("namespace") or "", meta.get("name") or "")

    @property
    def failure_policy(self) -> str:
        return (self.policy.get("spec") or {}).get("failurePolicy") or "Fail"


@dataclasses.dataclass(frozen=True, slots=True)
class PolicyError:
    """A mutation or configuration that failed (kube's ``generic.PolicyError``)."""

    policy: str
    binding: str
    message: str
    failure_policy: str = "Fail"
    invalid: bool = True  # the status reason: Invalid for a mutation's failure, else Forbidden

    def __str__(self) -> str:
        if self.binding:
            return f"policy '{self.policy}' with binding '{self.binding}' denied request: {self.message}"
        return f'policy "{self.policy}" denied request: {self.message}'


def _name(obj: Mapping[str, Any]) -> str:
    return str((obj.get("metadata") or {}).get("name") or "")


def dispatch(attrs: Attributes, invocations: Sequence[Invocation], *, namespace: dict[str, Any] | None = None,
             authorizer: Any = None) -> list[PolicyError]:
    """Apply every invocation's mutations to ``attrs``' object; then, once, reinvoke the
    ``IfNeeded`` policies that ran before a later policy changed the object (kube's
    reinvocation, as far as this plugin's own policies go). Returns the failures."""
    errors: list[PolicyError] = []
    reinvocable: list[Invocation] = []  # IfNeeded invocations that ran before the object last changed
    ran_ifneeded: list[Invocation] = []
    for invocation in invocations:
        if _invoke(attrs, invocation, namespace, authorizer, errors):
            reinvocable = list(ran_ifneeded)
        if (invocation.policy.get("spec") or {}).get("reinvocationPolicy") == "IfNeeded":
            ran_ifneeded.append(invocation)
    for invocation in reinvocable:
        _invoke(attrs, invocation, namespace, authorizer, errors)
    return errors


def _invoke(attrs: Attributes, invocation: Invocation, namespace: dict[str, Any] | None, authorizer: Any,
            errors: list[PolicyError]) -> bool:
    """One invocation's mutations, in order; whether they changed the object."""
    policy, binding = _name(invocation.policy), _name(invocation.binding)
    fail = invocation.failure_policy

    def failed(message: str) -> bool:
        errors.append(PolicyError(policy, binding, message, fail))
        return False

    evaluator, version = invocation.evaluator, invocation.version
    if evaluator.error:
        return failed(evaluator.error)
    data = expressions.activation(attrs, version, namespace=namespace, params=_plain(invocation.param),
                                  authorizer=authorizer)
    data["variables"] = _variables(evaluator.variables, data)
    if evaluator.matcher:
        verdict = evaluator.matcher.match_activation(data)
        if verdict.error:
            return failed(verdict.error)
        if not verdict.matches:
            return False
    before, _ = attrs.objects(version)
    if before is None:  # nothing to mutate (kube calls no patcher then)
        return False
    shape = attrs.request.resource.versions[version].shape
    obj = before
    for mutation in evaluator.mutations:
        try:
            patched = patchers.apply(mutation, data, obj, shape)
        except patchers.MutationError as err:
            failed(str(err))
            continue
        if patched is not obj:
            try:
                attrs.replace_object(patched, version)  # decoded and defaulted, as kube defaults after each
            except APIError as err:  # the mutated object does not decode as its kind
                failed(f"error applying patch: {err.message}")
                continue
            obj, _ = attrs.objects(version)
            data = {**data, "object": obj}
    return before != obj


def _plain(param: Mapping[str, Any] | None) -> Any:
    return dict(param) if param is not None else None


def _variables(variables: Sequence[Variable], data: dict[str, Any]) -> dict[str, Any]:
    """The ``variables`` map, each one seeing those before it. Kubernetes evaluates them
    lazily; here each is evaluated once up front and one that fails is left out, so that using
    it fails (``no such key``) while not using it costs nothing more."""
    values: dict[str, Any] = {}
    scope = {**data, "variables": values}
    for variable in variables:
        if variable.program is None:
            continue
        try:
            values[variable.name] = expressions.evaluate(variable.program, scope)
        except expressions.EvaluationError:
            continue
    return values
