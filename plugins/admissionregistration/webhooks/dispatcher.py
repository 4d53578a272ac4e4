"""Which webhooks a request goes to and what their answers do (kube's ``webhook/generic``,
``mutating/dispatcher.go`` and ``validating/dispatcher.go``).

A webhook is called when its namespace and object selectors, one of its rules (through
``matchPolicy``: the request may be seen in another version of its resource) and its match
conditions all say so; never for the admission configurations themselves. Mutating webhooks
are called one after another and each sees the previous one's result; those with
``reinvocationPolicy: IfNeeded`` are called once more when a later one changed the object.
Validating webhooks are called all at once.

A webhook that cannot be called (refused, unreachable, too slow, an invalid answer) fails the
request with kube's 500 ``failed calling webhook "name": ...`` under ``failurePolicy: Fail``
and is skipped under ``Ignore`` (noted in the audit event). A denial is the webhook's own
status, its message prefixed with ``admission webhook "name" denied the request``.
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
import functools
import json
import logging
from typing import Any

from kplane.api import (
    AdmissionRequest, APIError, CallError, PatchError, Registry, WebhookClient, apply_json_patch, cel, errors, new_uid,
)
from kplane.plugins.admissionregistration.attributes import Attributes, add_warnings
from kplane.plugins.admissionregistration.expressions import activation, references
from kplane.plugins.admissionregistration.matching import (
    NamespaceLookup, exempt, matching_version, namespace_selector_matches, object_selector_matches,
)
from kplane.plugins.admissionregistration.policy.authorizer import RequestAuthorizer
from kplane.plugins.admissionregistration.policy.generic import informers_ready
from kplane.plugins.admissionregistration.webhooks import review
from kplane.plugins.admissionregistration.webhooks.source import Webhook, WebhookSource

log = logging.getLogger(__name__)

MUTATION_ANNOTATION = "mutation.webhook.admission.k8s.io/round_{round}_index_{index}"
FAILED_OPEN_ANNOTATION = "failed-open.{kind}.webhook.admission.k8s.io/round_{round}_index_{index}"


@dataclasses.dataclass(slots=True)
class WebhookDenial(APIError):
    """A webhook's denial: its own ``metav1.Status``, answered as it sent it but for the
    message's prefix and a code kept to 4xx/5xx (``webhookerrors.ToStatusErr``)."""

    body: dict[str, Any] = dataclasses.field(default_factory=dict)

    def status(self) -> dict[str, Any]:
        return self.body


def denial(webhook: str, status: dict[str, Any]) -> WebhookDenial:
    denied_by = f'admission webhook "{webhook}" denied the request'
    code = status.get("code")
    code = code if isinstance(code, int) and 400 <= code <= 599 else 400
    message, reason = status.get("message"), status.get("reason")
    if isinstance(message, str) and message:
        text = f"{denied_by}: {message}"
    elif isinstance(reason, str) and reason:
        text = f"{denied_by}: {reason}"
    else:
        text = f"{denied_by} without explanation"
    body: dict[str, Any] = {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure", "message": text}
    if isinstance(reason, str) and reason:
        body["reason"] = reason
    details = _details(status.get("details"))
    if details:
        body["details"] = details
    body["code"] = code
    try:
        known = errors.StatusReason(reason)
    except ValueError:
        known = errors.StatusReason.BAD_REQUEST if code < 500 else errors.StatusReason.INTERNAL_ERROR
    return WebhookDenial(code, known, text, {}, body=body)


def _details(details: Any) -> dict[str, Any]:
    """The ``metav1.StatusDetails`` of a denial, only its fields and of their types (kube decodes
    the answer into the typed struct, so anything else never reaches a client)."""
    if not isinstance(details, dict):
        return {}
    out: dict[str, Any] = {k: details[k] for k in ("name", "group", "kind", "uid")
                           if isinstance(details.get(k), str) and details[k]}
    causes = [{k: c[k] for k in ("reason", "message", "field") if isinstance(c.get(k), str) and c[k]}
              for c in details.get("causes") or () if isinstance(c, dict)] if isinstance(details.get("causes"), list) else []
    if any(causes):
        out["causes"] = [c for c in causes if c]
    retry = details.get("retryAfterSeconds")
    if isinstance(retry, int) and not isinstance(retry, bool) and 0 < retry < 1 << 31:
        out["retryAfterSeconds"] = retry
    return out


class CallingError(Exception):
    """A webhook that could not be called or answered unusably (``ErrCallingWebhook``)."""

    def __init__(self, webhook: str, reason: str) -> None:
        super().__init__(f'failed calling webhook "{webhook}": {reason}')


class _Dispatcher:
    """What both kinds of webhook share: the source, the client, matching."""

    kind = ""  # in the failed-open audit annotation: "mutation" or "validating"

    def __init__(self, source: WebhookSource, client: WebhookClient, registry: Registry,
                 namespaces: NamespaceLookup) -> None:
        self.source = source
        self.client = client
        self.registry = registry
        self.scheme = registry.scheme
        self.namespaces = namespaces
        self.authorizers: Any = None  # the server's, for matchConditions' ``authorizer``

    def _attributes(self, request: AdmissionRequest) -> Attributes:
        """The request as webhooks see it: a write through ``/scale`` as an autoscaling/v1 Scale
        on subresource ``scale``, as kube-apiserver shows it."""
        scale = None
        if not request.subresource and request.ctx.subresource == "scale":
            rt = request.resource
            scale = getattr(self.registry.rest(rt.group, rt.plural, "scale"), "adapter", None)
        return Attributes(request, scale=scale)

    def _idle(self) -> bool:
        """No webhook configured, and the configurations known: nothing to look at (every write
        of a cluster without webhooks asks)."""
        return not self.source.webhooks and self.source.informer.synced.is_set()

    async def _ready(self, request: AdmissionRequest) -> bool:
        if not await informers_ready(self.source.informer):
            raise errors.forbidden_error(request.resource.plural, request.resource.group, request.name,
                                         "not yet ready to handle request")
        return bool(self.source.webhooks)

    async def _version(self, hook: Webhook, attrs: Attributes) -> str | None:
        """The version the request reaches ``hook`` in, or None when it does not (``ShouldCallHook``
        and the match conditions)."""
        spec = hook.spec
        version = matching_version(spec.get("rules") or (), spec.get("matchPolicy"), self.scheme, attrs)
        if version is None:
            return None
        try:
            if not await namespace_selector_matches(spec.get("namespaceSelector"), attrs, version, self.namespaces):
                return None
        except LookupError as err:
            raise errors.internal_error(str(err)) from None
        if not object_selector_matches(spec.get("objectSelector"), attrs, version):
            return None
        if hook.conditions:
            result = await self._conditions(hook, attrs, version)
            if result.error:
                if hook.failure_policy == "Ignore":
                    return None
                rt = attrs.request.resource
                raise errors.forbidden_error(rt.plural, rt.group, attrs.name, result.error)
            if not result.matches:
                return None
        if attrs.dry_run and spec.get("sideEffects") not in ("None", "NoneOnDryRun"):
            raise errors.bad_request(f'admission webhook "{hook.name}" does not support dry run')
        return version

    async def _conditions(self, hook: Webhook, attrs: Attributes, version: str) -> Any:
        data = activation(attrs, version, authorizer=cel.authz.value())
        uses_authorizer = any(c.program is not None and references(c.program, "authorizer") for c in hook.conditions.conditions)
        if uses_authorizer and self.authorizers is not None:
            checks = RequestAuthorizer(self.authorizers, attrs.request.ctx.user, asyncio.get_running_loop())
            return await checks.run(functools.partial(hook.conditions.match_activation, data))
        return hook.conditions.match_activation(data)

    async def _call(self, hook: Webhook, attrs: Attributes, version: str, mutating: bool) -> review.Response:
        """Send the review; CallingError when no verdict came back."""
        review_version = review.review_version(hook.spec)
        if review_version is None:
            raise CallingError(hook.name, "webhook does not accept known AdmissionReview versions")
        uid = new_uid()
        body = review.review_body(review_version, attrs.review_request(uid, version))
        timeout = hook.timeout
        try:
            raw = await self.client.post(hook.spec.get("clientConfig") or {}, body, timeout, f"timeout={int(timeout)}s")
            answer = review.parse(raw, review_version, uid, mutating)
        except CallError as err:
            raise CallingError(hook.name, f"failed to call webhook: {err}") from None
        except review.InvalidResponse as err:
            raise CallingError(hook.name, f"received invalid webhook response: {err}") from None
        ctx = attrs.request.ctx
        add_warnings(ctx.warnings, answer.warnings)
        for key, value in answer.audit_annotations.items():
            full = review.audit_key(hook.name, key)
            if full is not None:
                ctx.audit_annotations.setdefault(full, value)
        return answer

    def _failed_open(self, hook: Webhook, index: int, attrs: Attributes, err: CallingError, round_: int) -> None:
        log.warning("%s; failing open (failurePolicy Ignore)", err)
        key = FAILED_OPEN_ANNOTATION.format(kind=self.kind, round=round_, index=index)
        attrs.request.ctx.audit_annotations[key] = hook.name


class MutatingWebhooks(_Dispatcher):
    """The ``MutatingAdmissionWebhook`` admission plugin."""

    kind = "mutation"

    async def __call__(self, request: AdmissionRequest) -> None:
        if self._idle():
            return
        attrs = self._attributes(request)
        if exempt(attrs) or not await self._ready(request):
            return
        hooks = list(self.source.webhooks)
        called_if_needed: list[Webhook] = []  # IfNeeded webhooks called so far
        again: set[int] = set()  # those a later webhook's change calls once more
        for index, hook in enumerate(hooks):
            called, changed = await self._mutate(hook, index, attrs, 0)
            if changed:
                again.update(id(h) for h in called_if_needed if h is not hook)
            if called and hook.reinvoked_if_needed:
                called_if_needed.append(hook)
        for index, hook in enumerate(hooks):  # round 1: once each, in order
            if id(hook) in again:
                await self._mutate(hook, index, attrs, 1)

    async def _mutate(self, hook: Webhook, index: int, attrs: Attributes, round_: int) -> tuple[bool, bool]:
        """Call one webhook if it matches: whether it was called and whether it changed the object."""
        version = await self._version(hook, attrs)
        if version is None:
            return False, False
        try:
            answer = await self._call(hook, attrs, version, mutating=True)
        except CallingError as err:
            if hook.failure_policy == "Ignore":
                self._failed_open(hook, index, attrs, err, round_)
                return True, False
            raise errors.internal_error(str(err)) from None
        if not answer.allowed:
            raise denial(hook.name, answer.status)
        changed = False
        obj, _ = attrs.objects(version)
        if answer.patch and not attrs.connect:  # a CONNECT's options are admitted, not changed
            if obj is None:
                raise errors.internal_error(f'admission webhook "{hook.name}" attempted to modify the object, '
                                            "which is not supported for this operation")
            try:
                patched = apply_json_patch(copy.deepcopy(obj), answer.patch)
            except PatchError as err:
                raise errors.internal_error(str(err)) from None
            if not isinstance(patched, dict) or (patched.get("apiVersion"), patched.get("kind")) != (obj.get("apiVersion"), obj.get("kind")):
                raise errors.internal_error(f'admission webhook "{hook.name}" changed the object\'s apiVersion or kind')
            if patched != obj:
                try:
                    attrs.replace_object(patched, version)
                except APIError as err:
                    raise errors.internal_error(f'admission webhook "{hook.name}" returned an object that does not decode: {err}') from None
                changed = attrs.objects(version)[0] != obj
        attrs.request.ctx.audit_annotations[MUTATION_ANNOTATION.format(round=round_, index=index)] = json.dumps(
            {"configuration": hook.configuration, "webhook": hook.name, "mutated": changed}, separators=(",", ":"))
        return True, changed


class ValidatingWebhooks(_Dispatcher):
    """The ``ValidatingAdmissionWebhook`` admission plugin: every matching webhook at once."""

    kind = "validating"

    async def __call__(self, request: AdmissionRequest) -> None:
        if self._idle():
            return
        attrs = self._attributes(request)
        if exempt(attrs) or not await self._ready(request):
            return
        calls = []
        for index, hook in enumerate(list(self.source.webhooks)):
            version = await self._version(hook, attrs)
            if version is not None:
                calls.append(self._validate(hook, index, attrs, version))
        if not calls:
            return
        outcomes = await asyncio.gather(*calls, return_exceptions=True)
        for outcome in outcomes:  # the first failure in the webhooks' order
            if isinstance(outcome, BaseException):
                raise outcome

    async def _validate(self, hook: Webhook, index: int, attrs: Attributes, version: str) -> None:
        try:
            answer = await self._call(hook, attrs, version, mutating=False)
        except CallingError as err:
            if hook.failure_policy == "Ignore":
                self._failed_open(hook, index, attrs, err, 0)
                return
            raise errors.internal_error(str(err)) from None
        if not answer.allowed:
            raise denial(hook.name, answer.status)
