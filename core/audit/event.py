"""``audit.k8s.io/v1`` ``Event``s: what one request's event holds, and each stage's record of it.

A :class:`Record` is what the backend's writer thread turns into a line: the request's body
travels as the JSON value the handler decoded it into, the answer as the bytes the server wrote,
decoded there (managed fields, a Status answer's fields), off the event loop. The fields are written in the Go
struct's order, as kube-apiserver's log lines have them.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from datetime import datetime, timezone
from typing import Any

import orjson
from aiohttp import web

from kplane.core.audit.policy import Level, RequestAuditConfig
from kplane.core.authn.user import UserInfo
from kplane.core.authz.attributes import Attributes
from kplane.core.server.negotiation import encode_json

API_VERSION = "audit.k8s.io/v1"
MAX_USER_AGENT = 1024  # kube-apiserver's: a longer one is cut and marked
_TRUNCATED = "...TRUNCATED"
_OBJECT_REF_ORDER = ("resource", "namespace", "name", "uid", "apiGroup", "apiVersion", "resourceVersion", "subresource")
_STATUS_PREFIX = b'{"kind":"Status",'  # how every Status kplane writes begins (errors.APIError.status)


def micro_time(moment: datetime) -> str:
    """``metav1.MicroTime``: RFC 3339 in UTC with six fractional digits."""
    return moment.astimezone(timezone.utc).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


def user_json(user: UserInfo | None) -> dict[str, Any]:
    """``authentication.k8s.io/v1`` UserInfo; ``{}`` for a request nobody authenticated."""
    return {} if user is None else user.to_api()


def source_ips(request: web.Request) -> list[str]:
    """kube's ``utilnet.SourceIPs``: the proxies' ``X-Forwarded-For`` chain, ``X-Real-Ip``, then
    the peer's address, which cannot be forged (not repeated when it ends the chain)."""
    ips: list[str] = []
    for part in request.headers.get("X-Forwarded-For", "").split(","):
        ip = _ip(part)
        if ip is not None:
            ips.append(ip)
    real = _ip(request.headers.get("X-Real-Ip", ""))
    if real is not None and real not in ips:
        ips.append(real)
    peer = _ip(request.remote or "")
    if peer is not None and (not ips or ips[-1] != peer):
        ips.append(peer)
    return ips


def _ip(text: str) -> str | None:
    try:
        return str(ipaddress.ip_address(text.strip()))
    except ValueError:
        return None


def user_agent(request: web.Request) -> str:
    agent = request.headers.get("User-Agent", "")
    return agent[:MAX_USER_AGENT] + _TRUNCATED if len(agent) > MAX_USER_AGENT else agent


def object_ref(attributes: Attributes) -> dict[str, str] | None:
    """The object a resource request is about; None for other paths."""
    if not attributes.resource_request:
        return None
    ref = {"resource": attributes.resource, "namespace": attributes.namespace, "name": attributes.name,
           "apiGroup": attributes.api_group, "apiVersion": attributes.api_version,
           "subresource": attributes.subresource}
    return {k: v for k, v in ref.items() if v}


def status_of(status: dict[str, Any]) -> dict[str, Any]:
    """The fields of a ``metav1.Status`` answer an event keeps (kube's ``LogResponseObject``)."""
    kept = {"metadata": {}}
    kept.update((k, status[k]) for k in ("status", "message", "reason", "details", "code") if status.get(k))
    return kept


@dataclass
class Event:
    """One request's event as it grows: filled at the AUDIT stage, answered later."""

    audit_id: str
    config: RequestAuditConfig
    request_uri: str
    verb: str
    user: UserInfo | None
    source_ips: list[str]
    user_agent: str
    object_ref: dict[str, str] | None
    received: datetime
    response_status: dict[str, Any] | None = None
    request_object: Any = None  # the body as the handler decoded it (context.record_request_object)
    request_is_patch: bool = False  # a patch is recorded as sent, managed fields and all
    response_body: bytes | dict[str, Any] | None = None  # the JSON answer, or a Status raised
    #: What admission added (kube's ``Attributes.AddAnnotation``: policies' and webhooks' audit
    #: annotations), reported with the authorizer's from the stage admission ran in on.
    annotations: dict[str, str] = field(default_factory=dict)

    @property
    def level(self) -> Level:
        return self.config.level

    def complete_object_ref(self, obj: Any) -> None:
        """What the path did not say, from the object sent (a create names its object in the
        body; a ``generateName`` is no name yet). A new dict: records queued keep theirs."""
        metadata = obj.get("metadata") if isinstance(obj, dict) else None
        if self.object_ref is None or not isinstance(metadata, dict):
            return
        ref = dict(self.object_ref)
        for key in ("namespace", "name", "uid", "resourceVersion"):
            value = metadata.get(key)
            if not ref.get(key) and isinstance(value, str) and value:
                ref[key] = value
        self.object_ref = ref

    def record(self, stage: str, now: datetime, impersonated: UserInfo | None,
               annotations: dict[str, str]) -> Record:
        """What ``stage`` reports, as it stands now."""
        received = stage == "RequestReceived"
        return Record(self, stage, micro_time(self.received) if received else micro_time(now),
                      impersonated, annotations | self.annotations, self.object_ref, self.response_status,
                      None if received else self.request_object, None if received else self.response_body)


@dataclass
class Record:
    """One line of the log, encoded by :meth:`encode_json` or :meth:`encode_legacy` in the writer's thread."""

    event: Event
    stage: str
    stage_timestamp: str
    impersonated: UserInfo | None
    annotations: dict[str, str] = field(default_factory=dict)
    object_ref: dict[str, str] | None = None
    response_status: dict[str, Any] | None = None
    request_object: Any = None
    response_body: bytes | dict[str, Any] | None = None

    def to_api(self) -> dict[str, Any]:
        ev = self.event
        level = ev.level
        ref = self.object_ref
        request_object = self.request_object
        response_object = self.response_body if isinstance(self.response_body, dict) else _decoded(self.response_body)
        status = self.response_status
        if isinstance(response_object, dict) and response_object.get("kind") == "Status":
            code = (status or {}).get("code")
            status = status_of(response_object)
            if code:  # the code written wins, as kube's response writer sets it last
                status["code"] = code
        out: dict[str, Any] = {"kind": "Event", "apiVersion": API_VERSION, "level": level.api_name,
                               "auditID": ev.audit_id, "stage": self.stage, "requestURI": ev.request_uri,
                               "verb": ev.verb, "user": user_json(ev.user)}
        if self.impersonated is not None:
            out["impersonatedUser"] = user_json(self.impersonated)
        if ev.source_ips:
            out["sourceIPs"] = ev.source_ips
        if ev.user_agent:
            out["userAgent"] = ev.user_agent
        if ref is not None:
            out["objectRef"] = {k: ref[k] for k in _OBJECT_REF_ORDER if ref.get(k)}
        if status is not None:
            out["responseStatus"] = status
        omit = ev.config.omit_managed_fields
        if level >= Level.REQUEST and request_object is not None:
            out["requestObject"] = _without_managed_fields(request_object) if omit and not ev.request_is_patch else request_object
        if level >= Level.REQUEST_RESPONSE and response_object is not None:
            out["responseObject"] = _without_managed_fields(response_object) if omit else response_object
        out["requestReceivedTimestamp"] = micro_time(ev.received)
        out["stageTimestamp"] = self.stage_timestamp
        if self.annotations:
            out["annotations"] = self.annotations
        return out

    def encode_json(self) -> bytes:
        """The event as one JSON line, as kube-apiserver's encoder writes it."""
        return encode_json(self.to_api())

    def encode_legacy(self) -> bytes:
        """kube's ``legacy`` one-line text (``audit.EventString``)."""
        ev = self.event
        username, groups = "<none>", "<none>"
        if ev.user is not None and ev.user.name:
            username = ev.user.name
            if ev.user.groups:
                groups = _quoted_list(ev.user.groups)
        as_user, as_groups = "<self>", "<lookup>"
        if self.impersonated is not None:
            as_user = self.impersonated.name
            as_groups = _quoted_list(self.impersonated.groups)
        namespace = (self.object_ref or {}).get("namespace") or "<none>"
        response = str(self.response_status["code"]) if self.response_status and "code" in self.response_status \
            else "<deferred>"
        ip = ev.source_ips[0] if ev.source_ips else "<unknown>"
        received = micro_time(ev.received)[:-1].rstrip("0").rstrip(".") + "Z"
        fields = [("id", ev.audit_id), ("stage", self.stage), ("ip", ip), ("method", ev.verb), ("user", username),
                  ("groups", groups), ("as", as_user), ("asgroups", as_groups), ("user-agent", ev.user_agent),
                  ("namespace", namespace), ("uri", ev.request_uri)]
        text = " ".join(f"{k}={_go_quote(v)}" for k, v in fields)
        return f'{received} AUDIT: {text} response="{response}"\n'.encode()


def _decoded(body: bytes | None) -> Any:
    """The JSON in ``body``; None for none, or for bytes that are not JSON (then it is left out)."""
    if not body:
        return None
    try:
        return orjson.loads(body)
    except orjson.JSONDecodeError:
        return None


def _without_managed_fields(obj: Any) -> Any:
    """``obj`` without ``metadata.managedFields``: an object, a list's items, a Table's rows."""
    if not isinstance(obj, dict):
        return obj
    out = _strip(obj)
    items = out.get("items")
    if isinstance(items, list):
        out["items"] = [_strip(i) if isinstance(i, dict) else i for i in items]
    rows = out.get("rows")
    if out.get("kind") == "Table" and isinstance(rows, list):
        out["rows"] = [{**r, "object": _strip(r["object"])} if isinstance(r, dict) and isinstance(r.get("object"), dict)
                       else r for r in rows]
    return out


def _strip(obj: dict[str, Any]) -> dict[str, Any]:
    metadata = obj.get("metadata")
    if isinstance(metadata, dict) and "managedFields" in metadata:
        return {**obj, "metadata": {k: v for k, v in metadata.items() if k != "managedFields"}}
    return dict(obj)


def _quoted_list(values: tuple[str, ...]) -> str:
    return ",".join(_go_quote(v) for v in values)


def _go_quote(text: str) -> str:
    """Go's ``%q`` for the printable text these fields hold (JSON's escapes, non-ASCII kept)."""
    return orjson.dumps(text).decode()


def is_status_body(body: bytes) -> bool:
    """Whether an answer's bytes are a Status (checked without decoding them)."""
    return body.startswith(_STATUS_PREFIX)
