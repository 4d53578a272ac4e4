"""ValidatingAdmissionPolicy (kube's ``policy/validating``): a policy's CEL ``validations`` on
each request its bindings match, per param, and what the bindings' ``validationActions`` do
with a failure - ``Deny`` the request, ``Warn`` the client, record it for ``Audit``.

A policy is compiled once per spec change (:func:`compile_policy`); an expression that does not
compile is an error when it would run, which ``failurePolicy`` decides like any other. The first
denial is the request's error, as kube words it (``ValidatingAdmissionPolicy 'p' with binding
'b' denied request: ...``), with the validation's ``reason`` and its code.
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import json
from typing import Any

from kplane.api import AdmissionRequest, Registry, cel, errors
from kplane.plugins.admissionregistration.attributes import Attributes, add_warnings
from kplane.plugins.admissionregistration.expressions import (
    CompileError, Declarations, EvaluationError, activation, compile_expression, references)
from kplane.plugins.admissionregistration.matchconditions import Matcher
from kplane.plugins.admissionregistration.matching import NamespaceLookup, exempt
from kplane.plugins.admissionregistration.policy import fused
from kplane.plugins.admissionregistration.policy.authorizer import RequestAuthorizer
from kplane.plugins.admissionregistration.policy.generic import (
    ConfigurationError, Hook, Params, PolicySource, binding_matches)
from kplane.plugins.admissionregistration.policy.variables import Composition, Variable, compile_variables

MAX_MESSAGE_BYTES = 5 * 1024
MAX_AUDIT_VALUE_BYTES = 10 * 1024  # maxAuditAnnotationValueLength
VALIDATION_FAILURE = "validation.policy.admission.k8s.io/validation_failure"
_CODES = {"Unauthorized": 401, "Forbidden": 403, "RequestEntityTooLarge": 413, "Invalid": 422}  # reasonToCode


@dataclasses.dataclass(frozen=True, slots=True)
class _Expression:
    source: str
    program: Any  # None when it did not compile
    error: str = ""

    @classmethod
    def of(cls, source: str, declarations: Declarations, want: str) -> _Expression:
        try:
            return cls(source, compile_expression(source, declarations, want))
        except CompileError as err:
            return cls(source, None, err.detail)

    def run(self, composition: Composition) -> Any:
        """The value; raises EvaluationError worded as kube's filter words it."""
        if self.program is None:
            raise EvaluationError(f"compilation error: {self.error}")
        try:
            return composition.evaluate(self.program)
        except EvaluationError as err:
            raise EvaluationError(f"expression '{self.source}' resulted in error: {err.detail}") from None


@dataclasses.dataclass(frozen=True, slots=True)
class Validation:
    expression: _Expression
    message: str
    message_expression: _Expression | None
    reason: str


@dataclasses.dataclass(frozen=True, slots=True)
class AuditAnnotation:
    key: str
    value: _Expression


@dataclasses.dataclass(frozen=True, slots=True)
class CompiledPolicy:
    """Everything of a policy's spec that runs per request, compiled."""

    matcher: Matcher
    variables: tuple[Variable, ...]
    validations: tuple[Validation, ...]
    audit_annotations: tuple[AuditAnnotation, ...]
    authorizes: bool  # an expression reads ``authorizer``: evaluated off the event loop
    reads_namespace: bool  # an expression reads ``namespaceObject`` (looked up only then)
    fused: fused.Fused | None = None  # the policy as one program, None where it cannot be
    batched: bool = False  # ``fused`` may be evaluated with others' (:class:`.fused.Batches`): no params, no authorizer


def declarations(spec: dict[str, Any]) -> Declarations:
    """A policy's expressions see ``params`` when it has a paramKind, always the authorizer
    and its variables (its messageExpressions all but the authorizer, as in kube)."""
    return Declarations(params=spec.get("paramKind") is not None, authorizer=True, variables=True)


BATCHED = Declarations(authorizer=True, variables=True)  # those of a policy without params


def compile_policy(policy: dict[str, Any]) -> CompiledPolicy:
    spec = policy.get("spec") or {}
    decl = declarations(spec)
    message_decl = dataclasses.replace(decl, authorizer=False)
    validations = tuple(
        Validation(_Expression.of(str(v.get("expression") or ""), decl, "BOOL"), str(v.get("message") or "").strip(),
                   _Expression.of(v["messageExpression"], message_decl, "STRING") if v.get("messageExpression") else None,
                   str(v.get("reason") or "Invalid"))
        for v in spec.get("validations") or ())
    audit = tuple(AuditAnnotation(str(a.get("key") or ""), _Expression.of(str(a.get("valueExpression") or ""), decl, "DYN"))
                  for a in spec.get("auditAnnotations") or ())
    matcher, variables = Matcher(spec.get("matchConditions"), decl), compile_variables(spec.get("variables"), decl)
    programs = [*(c.program for c in matcher.conditions), *(v.program for v in variables),
                *(e.program for v in validations for e in (v.expression, v.message_expression) if e is not None),
                *(a.value.program for a in audit)]
    authorizes = any(p is not None and references(p, "authorizer") for p in programs)
    reads_namespace = any(p is not None and references(p, "namespaceObject") for p in programs)
    one = None if audit else fused.fuse([(c.expression, c.program) for c in matcher.conditions], variables,
                                        [(v.expression.source, v.expression.program) for v in validations], decl)
    batched = one is not None and decl == BATCHED and not authorizes
    return CompiledPolicy(matcher, variables, validations, audit, authorizes, reads_namespace, one, batched)


@dataclasses.dataclass(frozen=True, slots=True)
class Decision:
    """One failed validation (or an error ``failurePolicy: Fail`` makes a denial)."""

    message: str
    reason: str = "Invalid"
    index: int = 0


@dataclasses.dataclass(slots=True)
class Result:
    denials: list[Decision] = dataclasses.field(default_factory=list)
    annotations: list[tuple[str, str]] = dataclasses.field(default_factory=list)


def _message(validation: Validation, composition: Composition) -> str:
    """messageExpression's text when it gives one fit to show, else message, else the expression."""
    if validation.message_expression is not None:
        try:
            text = validation.message_expression.run(composition)
        except EvaluationError:
            text = None
        if isinstance(text, str):
            text = text.strip()
            if text and "\n" not in text and len(text.encode()) <= MAX_MESSAGE_BYTES:
                return text
    return validation.message or f"failed expression: {validation.expression.source.strip()}"


def validate(compiled: CompiledPolicy, data: dict[str, Any], fail: bool, shared: Any = None) -> Result:
    """One policy, one binding, one param (kube's ``validator.Validate``); ``fail``: the policy's
    failurePolicy is Fail (errors deny) rather than Ignore (errors admit); ``shared``: ``data``
    as the request's shared CEL activation, for the policy's fused program."""
    out = Result()
    if shared is not None and compiled.fused is not None and fused.admits(compiled.fused, shared):
        return out
    composition = Composition(compiled.variables, data)
    if compiled.matcher:
        matched = compiled.matcher.match_activation(data, composition.evaluate)
        if matched.error:
            if fail:
                out.denials.append(Decision(matched.error))
            return out
        if not matched.matches:
            return out
    for index, validation in enumerate(compiled.validations):
        try:
            passed = validation.expression.run(composition) is True
        except EvaluationError as err:
            if fail:
                out.denials.append(Decision(err.detail, index=index))
            continue
        if not passed:
            out.denials.append(Decision(_message(validation, composition), validation.reason, index))
    for annotation in compiled.audit_annotations:
        try:
            value = annotation.value.run(composition)
        except EvaluationError as err:
            if fail:
                out.denials.append(Decision(f"valueExpression '{annotation.value.source}' resulted in error: "
                                            f"{err.detail.partition(' resulted in error: ')[2] or err.detail}"))
            continue
        if value is None:
            continue
        if not isinstance(value, str):
            if fail:
                out.denials.append(Decision(f"valueExpression '{annotation.value.source}' resulted in unsupported "
                                            f"return type: {type(value).__name__}. Return type must be either string or null."))
            continue
        if value.strip():
            out.annotations.append((annotation.key, value.strip()[:MAX_AUDIT_VALUE_BYTES]))
    return out


def _denied(request: AdmissionRequest, message: str, reason: str) -> errors.APIError:
    """``admission.NewForbidden`` with the denial's reason and its code, the message as a cause."""
    rt = request.resource
    err = errors.forbidden_error(rt.plural, rt.group, request.name, message, causes=[{"message": message}])
    err.code = _CODES.get(reason, 422)
    err.reason = errors.StatusReason(reason) if reason in _CODES else errors.StatusReason.INVALID
    return err


class _Request:
    """One request's evaluation: its attributes, what it found once, what the policies decided."""

    def __init__(self, attrs: Attributes, namespaces: NamespaceLookup, authorizer: RequestAuthorizer | None,
                 reads_namespace: bool) -> None:
        self.attrs = attrs
        self.authorizer = authorizer
        self.reads_namespace = reads_namespace
        self.denied: list[tuple[str, str, str, str]] = []  # (policy, binding, message, reason), first first
        self._lookup = namespaces
        self._namespace: dict[str, Any] | None = None
        self._looked_up = False
        self._activations: dict[str, dict[str, Any]] = {}
        self._shared: dict[tuple[str, int], tuple[dict[str, Any] | None, Any]] = {}
        self.admitted: set[fused.Fused] = set()  # batched policies that admit in the request's version without params

    async def namespace(self, name: str) -> dict[str, Any] | None:
        """Namespaces as the matchers ask for them: the request's is read once."""
        if name != self.attrs.namespace:
            return await self._lookup(name)
        if not self._looked_up:
            self._namespace, self._looked_up = await self._lookup(name), True
        return self._namespace

    async def activation(self, version: str, param: dict[str, Any] | None) -> dict[str, Any]:
        """The variables of an evaluation in ``version`` with ``param`` (a fresh dict each time:
        the evaluation adds its own ``variables``)."""
        base = self._activations.get(version)
        if base is None:
            attrs = self.attrs
            # ``namespaceObject``: the request's Namespace; none for cluster-scoped requests nor a Namespace itself.
            own = self.reads_namespace and attrs.namespace and not (attrs.group == "" and attrs.resource == "namespaces")
            base = activation(attrs, version, namespace=await self.namespace(attrs.namespace) if own else None,
                              authorizer=cel.authz.value())
            self._activations[version] = base
        return base | {"params": param}

    def shared(self, version: str, param: dict[str, Any] | None, data: dict[str, Any]) -> Any:
        """``data`` (an :meth:`activation` of ``version`` and ``param``) as one CEL activation
        for every policy of the request that sees the same: its objects converted once."""
        found = self._shared.get((version, id(param)))
        if found is None or found[0] is not param:
            found = self._shared[(version, id(param))] = (param, cel.environment.activation(data))
        return found[1]


class ValidatingAdmissionPolicyPlugin:
    """The ``ValidatingAdmissionPolicy`` admission plugin: every policy bound to the request."""

    def __init__(self, source: PolicySource[CompiledPolicy], params: Params, registry: Registry,
                 namespaces: NamespaceLookup) -> None:
        self.source = source
        self.params = params
        self.scheme = registry.scheme
        self.namespaces = namespaces
        self.authorizers: Any = None  # the server's, for the ``authorizer`` variable
        self.batches = fused.Batches(BATCHED)

    async def __call__(self, request: AdmissionRequest) -> None:
        attrs = Attributes(request)
        if exempt(attrs):
            return
        if not await self.source.ready():
            raise errors.forbidden_error(request.resource.plural, request.resource.group, request.name,
                                         "not yet ready to handle request")
        hooks = self.source.candidates(attrs)
        if not hooks:
            return
        authorizer = None
        if self.authorizers is not None and any(h.compiled is not None and h.compiled.authorizes for h in hooks):
            authorizer = RequestAuthorizer(self.authorizers, request.ctx.user, asyncio.get_running_loop())
        reads_namespace = any(h.compiled is not None and h.compiled.reads_namespace for h in hooks)
        state = _Request(attrs, self.namespaces, authorizer, reads_namespace)
        batched = [h.compiled.fused for h in hooks if h.compiled is not None and h.compiled.batched]
        if len(batched) > 1:  # evaluated before matching: admitting has no effect, whether it matches or not
            data = await state.activation(attrs.version, None)
            state.admitted = self.batches.admitted(batched, state.shared(attrs.version, None, data))  # type: ignore[arg-type]
        for hook in hooks:
            await self._hook(hook, state)
        if state.denied:
            policy, binding, message, reason = state.denied[0]
            subject = f"ValidatingAdmissionPolicy '{policy}' with binding '{binding}'" if binding \
                else f"ValidatingAdmissionPolicy '{policy}'"
            raise _denied(request, f"{subject} denied request: {message}", reason)

    async def _hook(self, hook: Hook[CompiledPolicy], state: _Request) -> None:
        fail = hook.failure_policy != "Ignore"

        def configuration(err: Exception, binding: str = "") -> None:
            if fail:
                what = "binding" if binding else "policy"
                state.denied.append((hook.name, binding, f"failed to configure {what}: {err}", "Invalid"))

        attrs = state.attrs
        spec = hook.policy.get("spec") or {}
        try:
            version = await hook.constraints_match(attrs, self.scheme, state.namespace)
        except LookupError as err:
            return configuration(err)
        if version is None:
            return
        if hook.compiled is None:
            return configuration(ConfigurationError(hook.error))
        compiled = hook.compiled
        if version == attrs.version and compiled.fused in state.admitted and \
                not any((b.get("spec") or {}).get("matchResources") for b in hook.bindings):
            return  # admitted in this version by every binding (none narrows it or can fail)
        annotations: dict[str, list[str]] = {}
        for binding in hook.bindings:
            name = binding["metadata"]["name"]
            try:
                if not await binding_matches(binding, attrs, self.scheme, state.namespace):
                    continue
                params = await self.params.collect(spec.get("paramKind"), (binding.get("spec") or {}).get("paramRef"),
                                                   attrs.namespace)
            except (LookupError, ConfigurationError) as err:
                configuration(err, name)
                continue
            actions = (binding.get("spec") or {}).get("validationActions") or ()
            for param in params:
                if param is None and version == attrs.version and compiled.fused in state.admitted:
                    continue
                data = await state.activation(version, param)
                shared = state.shared(version, param, data) if compiled.fused is not None else None
                if compiled.authorizes and state.authorizer is not None:
                    result = await state.authorizer.run(functools.partial(validate, compiled, data, fail, shared))
                else:
                    result = validate(compiled, data, fail, shared)
                for decision in result.denials:
                    self._act(hook.name, name, actions, decision, state)
                for key, value in result.annotations:
                    if value not in annotations.setdefault(key, []):
                        annotations[key].append(value)
        for key, values in annotations.items():
            attrs.request.ctx.audit_annotations[f"{hook.name}/{key}"] = ", ".join(values)

    @staticmethod
    def _act(policy: str, binding: str, actions: Any, decision: Decision, state: _Request) -> None:
        ctx = state.attrs.request.ctx
        for action in actions:
            if action == "Deny":
                state.denied.append((policy, binding, decision.message, decision.reason))
            elif action == "Warn":
                add_warnings(ctx.warnings, [
                    f"Validation failed for ValidatingAdmissionPolicy '{policy}' with binding '{binding}': {decision.message}"])
            elif action == "Audit":  # every failure of the request in one list, as kube records them
                failures = json.loads(ctx.audit_annotations.get(VALIDATION_FAILURE) or "[]")
                failures.append({"message": decision.message, "policy": policy, "binding": binding,
                                 "expressionIndex": decision.index, "validationActions": list(actions)})
                ctx.audit_annotations[VALIDATION_FAILURE] = json.dumps(failures, separators=(",", ":"))
