"""MutatingAdmissionPolicy's evaluation (kube's ``policy/mutating`` dispatcher): the
mutations of every matching policy-binding-param invocation applied in order, each to the
object the previous left, with reinvocation and the policies' failure policies.

A policy compiles once per spec change (:func:`compile_policy`, called by the generic policy
source); per request, :func:`dispatch` takes the invocations the plugin matched, replaces the
request's object with the mutated one and returns the failures for the failure policies to weigh.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping, Sequence
from typing import Any

from kplane.api import APIError, cel
from kplane.plugins.admissionregistration.attributes import Attributes
from kplane.plugins.admissionregistration.expressions import CompileError, activation, references
from kplane.plugins.admissionregistration.matchconditions import Matcher
from kplane.plugins.admissionregistration.policy import mutating_patchers as patchers
from kplane.plugins.admissionregistration.policy.authorizer import RequestAuthorizer
from kplane.plugins.admissionregistration.policy.validating import declarations
from kplane.plugins.admissionregistration.policy.variables import Composition, Variable, compile_variables

PLUGIN = "MutatingAdmissionPolicy"


@dataclasses.dataclass(frozen=True, slots=True)
class CompiledPolicy:
    """A policy compiled: its conditions, variables and mutations; ``error`` when a mutation
    did not compile (every request the policy matches then fails by its failure policy)."""

    matcher: Matcher
    variables: tuple[Variable, ...]
    mutations: tuple[patchers.Mutation, ...]
    error: str = ""
    authorizes: bool = False  # an expression reads ``authorizer``: evaluated off the event loop


def compile_policy(policy: Mapping[str, Any]) -> CompiledPolicy:
    """A MutatingAdmissionPolicy (wire dict) compiled once; never raises."""
    spec = policy.get("spec") or {}
    decl = declarations(spec)
    errors: list[str] = []
    mutations = []
    for mutation in spec.get("mutations") or ():
        patch_type = mutation.get("patchType") or ""
        body = mutation.get("applyConfiguration" if patch_type == patchers.APPLY_CONFIGURATION else "jsonPatch") or {}
        try:
            mutations.append(patchers.compile_mutation(patch_type, str(body.get("expression") or ""), decl))
        except CompileError as err:
            errors.append(err.detail)
        except KeyError:
            errors.append(f"unsupported patchType {patch_type!r}")
    matcher, variables = Matcher(spec.get("matchConditions"), decl), compile_variables(spec.get("variables"), decl)
    programs = [*(c.program for c in matcher.conditions), *(v.program for v in variables),
                *(m.program for m in mutations)]
    authorizes = any(p is not None and references(p, "authorizer") for p in programs)
    return CompiledPolicy(matcher, variables, tuple(mutations), "; ".join(errors), authorizes)


@dataclasses.dataclass(slots=True)
class Invocation:
    """One policy-binding-param triple that matched a request, seen in ``version``."""

    policy: Mapping[str, Any]  # wire dicts, as the informers hold them
    binding: Mapping[str, Any]
    param: dict[str, Any] | None
    version: str
    compiled: CompiledPolicy

    @property
    def failure_policy(self) -> str:
        return (self.policy.get("spec") or {}).get("failurePolicy") or "Fail"

    @property
    def reinvocable(self) -> bool:
        return (self.policy.get("spec") or {}).get("reinvocationPolicy") == "IfNeeded"


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


async def dispatch(attrs: Attributes, invocations: Sequence[Invocation], *, namespace: dict[str, Any] | None = None,
                   authorizer: RequestAuthorizer | None = None) -> list[PolicyError]:
    """Apply every invocation's mutations to ``attrs``' object; then, once, reinvoke the
    ``IfNeeded`` policies that ran before a later policy changed the object (kube's
    reinvocation, as far as this plugin's own policies go). Returns the failures."""
    errors: list[PolicyError] = []
    reinvoke: list[Invocation] = []  # IfNeeded invocations that ran before the object last changed
    ran: list[Invocation] = []
    for invocation in invocations:
        if await _run(attrs, invocation, namespace, authorizer, errors):
            reinvoke = list(ran)
        if invocation.reinvocable:
            ran.append(invocation)
    for invocation in reinvoke:
        await _run(attrs, invocation, namespace, authorizer, errors)
    return errors


async def _run(attrs: Attributes, invocation: Invocation, namespace: dict[str, Any] | None,
               authorizer: RequestAuthorizer | None, errors: list[PolicyError]) -> bool:
    """One invocation, off the event loop when its expressions ask the authorizer."""
    if invocation.compiled.authorizes and authorizer is not None:
        return bool(await authorizer.run(lambda: _invoke(attrs, invocation, namespace, errors)))
    return _invoke(attrs, invocation, namespace, errors)


def _invoke(attrs: Attributes, invocation: Invocation, namespace: dict[str, Any] | None,
            errors: list[PolicyError]) -> bool:
    """One invocation's mutations, in order; whether they changed the object."""
    policy, binding, fail = _name(invocation.policy), _name(invocation.binding), invocation.failure_policy

    def failed(message: str) -> bool:
        errors.append(PolicyError(policy, binding, message, fail))
        return False

    compiled, version = invocation.compiled, invocation.version
    if compiled.error:
        return failed(compiled.error)
    data = activation(attrs, version, namespace=namespace, params=invocation.param, authorizer=cel.authz.value())
    composition = Composition(compiled.variables, data)  # variables: evaluated once per invocation, as kube
    if compiled.matcher:
        verdict = compiled.matcher.match_activation(data, composition.evaluate)
        if verdict.error:
            return failed(verdict.error)
        if not verdict.matches:
            return False
    before, _ = attrs.objects(version)
    if before is None:  # nothing to mutate (kube calls no patcher then)
        return False
    rt = attrs.request.resource
    shape, declared_only = rt.versions[version].shape, rt.built_in  # a CRD's schema may keep unknown fields
    obj = before
    for mutation in compiled.mutations:
        try:
            patched = patchers.apply(mutation, composition.evaluate, obj, shape, declared_only=declared_only)
        except patchers.MutationError as err:
            failed(str(err))
            continue
        if patched is obj or patched == obj:
            continue
        try:
            attrs.replace_object(patched, version)  # decoded and defaulted, as kube defaults after each
        except APIError as err:  # the mutated object does not decode as its kind
            failed(f"error applying patch: {err.message}")
            continue
        except (TypeError, ValueError, AttributeError) as err:  # values the kind's types cannot hold
            failed(f"error applying patch: {err}")
            continue
        obj, _ = attrs.objects(version)
        data["object"] = obj
    return before != obj
