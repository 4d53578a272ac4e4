"""The audit filters, as k8s.io/apiserver's ``WithAuditInit``, ``WithFailedAuthenticationAudit``
and ``WithAudit``.

- :meth:`Auditor.init_filter`, first at the ``AUTHENTICATION`` stage: gives the request its
  audit ID (the client's ``Audit-ID`` header, or a new UUID), answered as the ``Audit-Id``
  header, and records a request that authentication refuses: kube sends its 401 down a separate
  branch that never meets ``WithAudit``, evaluated without a user and reported once, at
  ``ResponseStarted``.
- :meth:`Auditor.audit_filter`, at the ``AUDIT`` stage: the policy decides the level from who
  sent the request (before impersonation) and what it asks; ``RequestReceived`` before the
  request goes on, ``ResponseStarted`` when a long-running one's headers are sent,
  ``ResponseComplete`` after the answer, or ``Panic`` for an unexpected exception (whose 500
  ``status_errors`` still answers).
- :meth:`Auditor.response_prepared`, on the app's ``on_response_prepare``: the header, and the
  moment a response starts.
"""

from __future__ import annotations

import asyncio
from datetime import datetime, timezone

from aiohttp import web

from kplane.core.audit.backend import LogBackend
from kplane.core.audit.context import AUDIT, AuditState
from kplane.core.audit.options import AuditOptions
from kplane.core.audit.event import Event, Record, is_status_body, object_ref, source_ips, status_of, user_agent
from kplane.core.audit.policy import (PANIC, REQUEST_RECEIVED, RESPONSE_COMPLETE, RESPONSE_STARTED, Level, Policy,
                                      RequestAuditConfig, load_policy)
from kplane.core.authn.filter import authenticated, user_of
from kplane.core.authn.user import UserInfo
from kplane.core.authz.attributes import Attributes, attributes_of
from kplane.core.authz.filter import decided
from kplane.core.meta import errors, rand
from kplane.core.server import negotiation
from kplane.core.server.filters import Handler, is_long_running

HEADER = "Audit-Id"  # kube's "Audit-ID", as Go's canonical header form writes it
DECISION = "authorization.k8s.io/decision"
REASON = "authorization.k8s.io/reason"
# A request that ends before any answer was written (kube's "Connection closed early").
_CLOSED_EARLY = {"metadata": {}, "status": "Success", "message": "Connection closed early", "code": 200}


def _now() -> datetime:
    return datetime.now(timezone.utc)


def _json_body(content_type: str) -> bool:
    return content_type == negotiation.JSON or content_type.endswith("+json")


class Auditor:
    """The policy and the backend, and the filters that feed one with the other."""

    def __init__(self, policy: Policy, backend: LogBackend) -> None:
        self.policy = policy
        self.backend = backend

    def start(self) -> None:
        self.backend.start()

    async def stop(self) -> None:
        """Write what is queued and close the log."""
        await self.backend.close()

    async def init_filter(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        state = request[AUDIT] = AuditState(request.headers.get("Audit-ID") or rand.new_uid(), _now())
        try:
            return await handler(request)
        except errors.APIError as err:
            if err.code == 401 and not state.audited:
                await self._failed_authentication(request, state, err)
            raise

    async def _failed_authentication(self, request: web.Request, state: AuditState, err: errors.APIError) -> None:
        attributes = attributes_of(request, UserInfo(""))
        config = self.policy.evaluate(attributes, None)
        if config.level is Level.NONE:
            return
        state.event = self._event(request, state, config, attributes, None)
        self._answered(state, err)
        await self._emit(request, state, RESPONSE_STARTED)

    def _event(self, request: web.Request, state: AuditState, config: RequestAuditConfig, attributes: Attributes,
               user: UserInfo | None) -> Event:
        return Event(state.audit_id, config, request.raw_path, attributes.verb, user, source_ips(request),
                     user_agent(request), object_ref(attributes), state.received)

    async def audit_filter(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        state = request[AUDIT]
        state.audited = True
        decided(request)  # now, so that the copy impersonation passes on shares it
        user = authenticated(request).user
        attributes = attributes_of(request, user)
        config = self.policy.evaluate(attributes, user)
        if config.level is Level.NONE:
            return await handler(request)
        event = state.event = self._event(request, state, config, attributes, user)
        state.long_running = is_long_running(request)
        await self._emit(request, state, REQUEST_RECEIVED)
        try:
            response = await handler(request)
        except errors.APIError as err:
            await self._complete(request, state, err)
            raise
        except web.HTTPException as err:  # the router's 404 and 405
            await self._complete(request, state, err.status)
            raise
        except asyncio.CancelledError:  # the client left, or the deadline passed: nobody may wait now
            if not state.answered:
                event.response_status = dict(_CLOSED_EARLY)
                state.answered = True
            self._emit_nowait(request, state, RESPONSE_COMPLETE)
            raise
        except Exception as err:
            event.response_status = {"metadata": {}, "status": "Failure", "message": f"APIServer panic'd: {err}",
                                     "reason": errors.StatusReason.INTERNAL_ERROR.value, "code": 500}
            state.answered = True
            await self._emit(request, state, PANIC)
            state.done = True
            raise
        await self._complete(request, state, response)
        return response

    async def _complete(self, request: web.Request, state: AuditState,
                        answer: web.StreamResponse | errors.APIError | int) -> None:
        """``ResponseComplete``, after ``ResponseStarted`` for a long-running request not started yet."""
        if not state.answered:
            if self._answered(state, answer) and state.long_running:
                await self._emit(request, state, RESPONSE_STARTED)
        await self._emit(request, state, RESPONSE_COMPLETE)
        state.done = True

    def _answered(self, state: AuditState, answer: web.StreamResponse | errors.APIError | int) -> bool:
        """Record the answer's status (and body, at the levels that keep it) once; True the first time."""
        if state.answered:
            return False
        state.answered = True
        event = state.event
        assert event is not None
        if isinstance(answer, errors.APIError):
            status = answer.status()
            event.response_status = status_of(status)
            if event.level >= Level.REQUEST_RESPONSE:
                event.response_body = status
            return True
        code = answer if isinstance(answer, int) else answer.status
        event.response_status = {"metadata": {}, "code": code}
        if isinstance(answer, web.Response) and isinstance(answer.body, bytes) and _json_body(answer.content_type):
            if event.level >= Level.REQUEST_RESPONSE or is_status_body(answer.body):
                event.response_body = answer.body
        return True

    async def response_prepared(self, request: web.Request, response: web.StreamResponse) -> None:
        """The app's ``on_response_prepare``: the audit ID header; a long-running request's start."""
        state = request.get(AUDIT)
        if state is None:
            return
        if HEADER not in response.headers:
            response.headers[HEADER] = state.audit_id
        if state.event is not None and not state.done and self._answered(state, response) and state.long_running:
            await self._emit(request, state, RESPONSE_STARTED)

    def _record(self, request: web.Request, state: AuditState, stage: str) -> Record:
        event = state.event
        assert event is not None
        impersonated = user_of(request)
        if event.user is None or impersonated is event.user:
            impersonated = None
        annotations: dict[str, str] = {}
        verdict = decided(request).verdict
        if verdict is not None:
            annotations = {DECISION: "allow" if verdict.allowed else "forbid", REASON: verdict.reason}
        return event.record(stage, _now(), impersonated, annotations)

    async def _emit(self, request: web.Request, state: AuditState, stage: str) -> None:
        if stage in state.event.config.omit_stages:  # type: ignore[union-attr]
            return
        await self.backend.process(self._record(request, state, stage))

    def _emit_nowait(self, request: web.Request, state: AuditState, stage: str) -> None:
        if stage not in state.event.config.omit_stages:  # type: ignore[union-attr]
            self.backend.process_nowait(self._record(request, state, stage))


def auditor_from(options: AuditOptions) -> Auditor | None:
    """The auditor ``options`` ask for, None when there is nothing to audit (no filter then);
    a policy file given is read and validated either way, as kube-apiserver does.
    :class:`~kplane.core.audit.policy.PolicyError` or OSError say what is wrong."""
    if options.policy_file is None:
        return None
    policy = load_policy(options.policy_file)
    if not options.log_path:
        return None
    return Auditor(policy, LogBackend(options))
