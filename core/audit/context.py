"""A request's audit state (kube's ``AuditContext``), and what handlers add to it.

The filters (:mod:`.filter`) keep the state; the resource handlers, once they have decoded a
body, hand it over with :func:`record_request_object`, as kube's handlers call
``audit.LogRequestObject`` (and ``LogRequestPatch``) after decoding. The object is the JSON value
the body stands for, whatever format it came in (JSON, YAML, protobuf): one path, the body
decoded once.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any

from aiohttp import web

from kplane.core.audit.event import Event
from kplane.core.audit.policy import Level


@dataclass
class AuditState:
    """One request's audit state."""

    audit_id: str
    received: datetime
    event: Event | None = None  # None: not audited (level None), or not at the AUDIT stage yet
    long_running: bool = False
    answered: bool = False  # the response's status is known (kube's processCode, once)
    done: bool = False
    audited: bool = False  # the AUDIT stage saw the request


AUDIT = web.RequestKey("kplane_audit", AuditState)


def admission_annotations(request: web.Request) -> dict[str, str]:
    """Where admission adds the request's audit annotations: its event's, or a dict nobody
    reads when the request is not audited."""
    state = request.get(AUDIT)
    return state.event.annotations if state is not None and state.event is not None else {}


def record_request_object(request: web.Request, obj: Any, *, patch: bool = False) -> None:
    """The body the handler decoded, in the request's group/version as its wire JSON value.

    At ``Metadata`` and above it completes the objectRef (a create's name, namespace) from the
    object's metadata; at ``Request`` and above it is kept as the event's ``requestObject``. A
    ``patch`` is kept as sent and names nothing. Nothing is done for a request not audited.
    """
    state = request.get(AUDIT)
    event = state.event if state is not None else None
    if event is None:  # not audited (no event exists at level None)
        return
    if not patch:
        event.complete_object_ref(obj)
    if event.level >= Level.REQUEST:
        event.request_object, event.request_is_patch = obj, patch
