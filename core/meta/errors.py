"""API errors as ``metav1.Status`` and field errors as ``field.Error``.

Every failure a client can see is an :class:`APIError`; the server turns it into a Status body with
the HTTP code, reason, message and (for validation) one cause per field error, worded the way
kube-apiserver words them so kubectl prints familiar messages.
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, field
from typing import Any

import orjson


class FieldErrorType(str, enum.Enum):
    """``metav1.CauseType`` values used for field causes, with the message prefix k8s prints."""

    REQUIRED = "FieldValueRequired"
    INVALID = "FieldValueInvalid"
    NOT_SUPPORTED = "FieldValueNotSupported"
    DUPLICATE = "FieldValueDuplicate"
    FORBIDDEN = "FieldValueForbidden"
    TOO_LONG = "FieldValueTooLong"
    TOO_MANY = "FieldValueTooMany"
    NOT_FOUND = "FieldValueNotFound"
    TYPE_INVALID = "FieldValueTypeInvalid"
    UNKNOWN = "FieldValueUnknown"
    INTERNAL = "InternalError"


_PREFIX = {
    FieldErrorType.REQUIRED: "Required value",
    FieldErrorType.INVALID: "Invalid value",
    FieldErrorType.NOT_SUPPORTED: "Unsupported value",
    FieldErrorType.DUPLICATE: "Duplicate value",
    FieldErrorType.FORBIDDEN: "Forbidden",
    FieldErrorType.TOO_LONG: "Too long",
    FieldErrorType.TOO_MANY: "Too many",
    FieldErrorType.NOT_FOUND: "Not found",
    FieldErrorType.TYPE_INVALID: "Invalid value",
    FieldErrorType.UNKNOWN: "Unknown field",
    FieldErrorType.INTERNAL: "Internal error",
}
# Error types whose message quotes the offending value, as field.Error.ErrorBody does.
_SHOWS_VALUE = {
    FieldErrorType.INVALID,
    FieldErrorType.NOT_SUPPORTED,
    FieldErrorType.DUPLICATE,
    FieldErrorType.TYPE_INVALID,
    FieldErrorType.NOT_FOUND,
    FieldErrorType.TOO_MANY,
}
_NO_VALUE = object()


class Uint64(int):
    """A Go uint64 value: field.Error prints it with ``%#v``, in hex (``0x0``)."""


def _render_value(value: Any) -> str:
    if isinstance(value, Uint64):
        return hex(value)
    if isinstance(value, str):
        return orjson.dumps(value).decode()
    if isinstance(value, bool):
        return "true" if value else "false"
    if value is None:
        return "null"
    if isinstance(value, (int, float)):
        return str(value)
    return orjson.dumps(value).decode()


@dataclass(frozen=True, slots=True)
class FieldError:
    """One problem with one field (``k8s.io/apimachinery/pkg/util/validation/field.Error``)."""

    type: FieldErrorType
    field: str  # dotted path with [i] and [key] indices, e.g. "spec.template.spec.containers[0].image"
    detail: str = ""
    value: Any = _NO_VALUE

    @property
    def body(self) -> str:
        text = _PREFIX[self.type]
        if self.type in _SHOWS_VALUE and self.value is not _NO_VALUE:
            text += ": " + _render_value(self.value)
        if self.detail:
            text += ": " + self.detail
        return text

    def __str__(self) -> str:
        return f"{self.field}: {self.body}" if self.field else self.body

    def cause(self) -> dict[str, str]:
        return {"reason": self.type.value, "message": self.body, "field": self.field}


def required(path: str, detail: str = "") -> FieldError:
    """A required field is missing (``field.Required``)."""
    return FieldError(FieldErrorType.REQUIRED, path, detail)


def invalid(path: str, value: Any, detail: str) -> FieldError:
    """A field has a bad value (``field.Invalid``); ``detail`` says what is wrong."""
    return FieldError(FieldErrorType.INVALID, path, detail, value)


def not_supported(path: str, value: Any, allowed: list[str]) -> FieldError:
    """A field's value is none of ``allowed`` (``field.NotSupported``)."""
    detail = "supported values: " + ", ".join(orjson.dumps(a).decode() for a in allowed)
    return FieldError(FieldErrorType.NOT_SUPPORTED, path, detail, value)


def forbidden(path: str, detail: str) -> FieldError:
    """A field may not be set, or not to this, here (``field.Forbidden``)."""
    return FieldError(FieldErrorType.FORBIDDEN, path, detail)


def internal(path: str, detail: str) -> FieldError:
    """The server could not check a field (``field.InternalError``): still refused, as kube does."""
    return FieldError(FieldErrorType.INTERNAL, path, detail)


def duplicate(path: str, value: Any) -> FieldError:
    """A value repeats where each must be unique (``field.Duplicate``)."""
    return FieldError(FieldErrorType.DUPLICATE, path, "", value)


def too_many(path: str, actual: int, most: int) -> FieldError:
    """A list holds ``actual`` items where ``most`` are allowed (``field.TooMany``)."""
    return FieldError(FieldErrorType.TOO_MANY, path, f"must have at most {most} item{'' if most == 1 else 's'}", actual)


def too_long(path: str, value: Any, max_length: int) -> FieldError:
    """A value is longer than ``max_length`` bytes (``field.TooLong``)."""
    return FieldError(
        FieldErrorType.TOO_LONG, path, f"may not be more than {max_length} bytes", value
    )


class StatusReason(str, enum.Enum):
    """``metav1.StatusReason`` values the server uses."""

    BAD_REQUEST = "BadRequest"
    UNAUTHORIZED = "Unauthorized"
    FORBIDDEN = "Forbidden"
    NOT_FOUND = "NotFound"
    ALREADY_EXISTS = "AlreadyExists"
    CONFLICT = "Conflict"
    GONE = "Gone"
    EXPIRED = "Expired"
    INVALID = "Invalid"
    METHOD_NOT_ALLOWED = "MethodNotAllowed"
    NOT_ACCEPTABLE = "NotAcceptable"
    REQUEST_ENTITY_TOO_LARGE = "RequestEntityTooLarge"
    UNSUPPORTED_MEDIA_TYPE = "UnsupportedMediaType"
    TOO_MANY_REQUESTS = "TooManyRequests"
    INTERNAL_ERROR = "InternalError"
    TIMEOUT = "Timeout"
    SERVICE_UNAVAILABLE = "ServiceUnavailable"


@dataclass(slots=True)
class APIError(Exception):
    """An error answered as a ``metav1.Status``; raise it anywhere below the HTTP layer."""

    code: int
    reason: StatusReason
    message: str
    details: dict[str, Any] = field(default_factory=dict)

    def __str__(self) -> str:
        return self.message

    def status(self) -> dict[str, Any]:
        """The ``metav1.Status`` body, its fields in the Go struct's order (details before code),
        so that the bytes match what kube-apiserver writes."""
        body: dict[str, Any] = {
            "kind": "Status",
            "apiVersion": "v1",
            "metadata": {},
            "status": "Failure",
            "message": self.message,
            "reason": self.reason.value,
        }
        if self.details:
            body["details"] = status_details(self.details)
        body["code"] = self.code
        return body


_DETAILS_ORDER = ("name", "group", "kind", "uid", "causes", "retryAfterSeconds")
_CAUSE_ORDER = ("reason", "message", "field")


def status_details(details: dict[str, Any]) -> dict[str, Any]:
    """``metav1.StatusDetails`` as Go encodes it: fields in struct order, empty ones left out
    (all are ``omitempty``), and each cause as a ``StatusCause`` (reason, message, field)."""
    ordered: dict[str, Any] = {}
    for key in _DETAILS_ORDER:
        value = details.get(key)
        if key == "causes" and value:
            value = [{k: cause[k] for k in _CAUSE_ORDER if cause.get(k)} for cause in value]
        if value:
            ordered[key] = value
    return ordered


def qualified(resource: str, group: str) -> str:
    """``deployments.apps`` / ``pods``: how k8s names a resource in messages."""
    return f"{resource}.{group}" if group else resource


def _details(name: str, group: str, kind: str, **extra: Any) -> dict[str, Any]:
    details: dict[str, Any] = {"name": name} if name else {}
    if group:
        details["group"] = group
    details["kind"] = kind
    details.update(extra)
    return details


def not_found(resource: str, group: str, name: str) -> APIError:
    return APIError(
        404,
        StatusReason.NOT_FOUND,
        f'{qualified(resource, group)} "{name}" not found',
        _details(name, group, resource),
    )


def already_exists(resource: str, group: str, name: str) -> APIError:
    return APIError(
        409,
        StatusReason.ALREADY_EXISTS,
        f'{qualified(resource, group)} "{name}" already exists',
        _details(name, group, resource),
    )


def conflict(resource: str, group: str, name: str, why: str) -> APIError:
    return APIError(
        409,
        StatusReason.CONFLICT,
        f'Operation cannot be fulfilled on {qualified(resource, group)} "{name}": {why}',
        _details(name, group, resource),
    )


OBJECT_MODIFIED = "the object has been modified; please apply your changes to the latest version and try again"


def invalid_object(kind: str, group: str, name: str, errors: list[FieldError]) -> APIError:
    """422 Invalid, worded like ``errors.NewInvalid``."""
    listed = str(errors[0]) if len(errors) == 1 else "[" + ", ".join(map(str, errors)) + "]"
    return APIError(
        422,
        StatusReason.INVALID,
        f'{qualified(kind, group)} "{name}" is invalid: {listed}',
        _details(name, group, kind, causes=[e.cause() for e in errors]),
    )


def bad_request(message: str, causes: list[FieldError] | None = None) -> APIError:
    details = {"causes": [c.cause() for c in causes]} if causes else {}
    return APIError(400, StatusReason.BAD_REQUEST, message, details)


def forbidden_error(resource: str, group: str, name: str, why: str, **details: Any) -> APIError:
    subject = f'{qualified(resource, group)} "{name}"' if name else qualified(resource, group)
    return APIError(
        403,
        StatusReason.FORBIDDEN,
        f"{subject} is forbidden: {why}",
        _details(name, group, resource, **details),
    )


def expired(message: str) -> APIError:
    return APIError(410, StatusReason.EXPIRED, message)


def gone(message: str) -> APIError:
    return APIError(410, StatusReason.GONE, message)


def method_not_allowed(verb: str, what: str) -> APIError:
    return APIError(
        405, StatusReason.METHOD_NOT_ALLOWED, f"the server does not allow this method on the requested resource ({verb} {what})"
    )


def unsupported_media_type(content_type: str, supported: list[str]) -> APIError:
    return APIError(
        415,
        StatusReason.UNSUPPORTED_MEDIA_TYPE,
        f'the body of the request was in an unknown format - accepted media types include: {", ".join(supported)}',
    )


def too_large(limit: int) -> APIError:
    return APIError(413, StatusReason.REQUEST_ENTITY_TOO_LARGE, f"Request entity too large: limit is {limit}")


def internal_error(message: str) -> APIError:
    return APIError(500, StatusReason.INTERNAL_ERROR, f"Internal error occurred: {message}")


def unavailable(message: str, retry_after: int | None = None) -> APIError:
    return APIError(503, StatusReason.SERVICE_UNAVAILABLE, message, {"retryAfterSeconds": retry_after} if retry_after else {})


def timeout(message: str, retry_after: int = 1, causes: list[dict[str, str]] | None = None) -> APIError:
    details: dict[str, Any] = {"causes": causes} if causes else {}
    details["retryAfterSeconds"] = retry_after
    return APIError(504, StatusReason.TIMEOUT, f"Timeout: {message}", details)
