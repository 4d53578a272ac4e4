"""The AdmissionReview a webhook is sent and the checks on its answer (kube's
``webhook/request``: ``CreateAdmissionObjects``, ``VerifyAdmissionResponse``)."""

from __future__ import annotations

import base64
import binascii
import dataclasses
import re
from typing import Any

import orjson

from kplane.api import is_qualified_name

REVIEW_GROUP = "admission.k8s.io"
REVIEW_VERSIONS = ("v1", "v1beta1")
_PRINTABLE = re.compile(r"^[\x20-\x7e\u00a0-\uffff]*$")


class InvalidResponse(Exception):
    """An answer that is not a usable AdmissionReview response (kube's wording)."""


@dataclasses.dataclass(slots=True)
class Response:
    """A webhook's verdict."""

    allowed: bool
    status: dict[str, Any]
    patch: list[Any] | None  # a decoded JSON patch, mutating webhooks only
    warnings: list[str]
    audit_annotations: dict[str, str]


def review_version(webhook: dict[str, Any]) -> str | None:
    """The first of ``admissionReviewVersions`` this server speaks."""
    return next((v for v in webhook.get("admissionReviewVersions") or () if v in REVIEW_VERSIONS), None)


def review_body(version: str, request: dict[str, Any]) -> bytes:
    return orjson.dumps({"apiVersion": f"{REVIEW_GROUP}/{version}", "kind": "AdmissionReview", "request": request})


def _warnings(values: Any) -> list[str]:
    """The warnings worth passing on: non-empty strings of printable text."""
    if not isinstance(values, list):
        return []
    return [w for w in values if isinstance(w, str) and w and _PRINTABLE.match(w)]


def _annotations(values: Any) -> dict[str, str]:
    if not isinstance(values, dict):
        return {}
    return {str(k): str(v) for k, v in values.items() if isinstance(v, str)}


def parse(raw: bytes, version: str, uid: str, mutating: bool) -> Response:
    """The verdict in a webhook's answer; InvalidResponse when it is not a valid one."""
    try:
        answer = orjson.loads(raw)
    except orjson.JSONDecodeError:
        raise InvalidResponse("the webhook's answer is not JSON") from None
    if not isinstance(answer, dict):
        raise InvalidResponse("the webhook's answer is not an AdmissionReview")
    if version == "v1" and (answer.get("apiVersion"), answer.get("kind")) != (f"{REVIEW_GROUP}/v1", "AdmissionReview"):
        raise InvalidResponse(f"expected webhook response of {REVIEW_GROUP}/v1, Kind=AdmissionReview, "
                              f"got {answer.get('apiVersion') or ''}, Kind={answer.get('kind') or ''}")
    response = answer.get("response")
    if not isinstance(response, dict):
        raise InvalidResponse("webhook response was absent")
    if version == "v1" and response.get("uid") != uid:
        raise InvalidResponse(f'expected response.uid="{uid}", got "{response.get("uid") or ""}"')
    patch = _patch(response, version, mutating)
    status = response.get("status") if isinstance(response.get("status"), dict) else {}
    return Response(response.get("allowed") is True, status, patch, _warnings(response.get("warnings")),
                    _annotations(response.get("auditAnnotations")))


def _patch(response: dict[str, Any], version: str, mutating: bool) -> list[Any] | None:
    encoded = response.get("patch")
    patch_type = response.get("patchType") or ""
    if version == "v1" and encoded and not patch_type:
        raise InvalidResponse("webhook returned response.patch but not response.patchType")
    if not encoded and not patch_type:
        return None
    if not mutating:
        raise InvalidResponse("validating webhook may not return response.patch or response.patchType")
    if patch_type not in ("", "JSONPatch"):
        raise InvalidResponse(f'webhook returned invalid response.patchType of "{patch_type}"')
    if not encoded:
        return None
    try:
        patch = orjson.loads(base64.b64decode(encoded, validate=True))
    except (binascii.Error, ValueError, TypeError):
        raise InvalidResponse("received undecodable patch in webhook response") from None
    if patch is not None and not isinstance(patch, list):
        raise InvalidResponse("received undecodable patch in webhook response")
    return patch or None


def audit_key(webhook: str, key: str) -> str | None:
    """The audit annotation key a webhook's ``key`` is recorded under, or None when it is not
    a valid one (kube prefixes the webhook's name and checks it is a qualified name)."""
    full = f"{webhook}/{key}"
    return full if not is_qualified_name(full) else None
