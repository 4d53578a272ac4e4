"""The identity of whoever sends a request, as k8s.io/apiserver's ``user.Info``."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any
from urllib.parse import unquote

#: Members may do anything: the authorizer lets them through before any mode is asked.
SYSTEM_MASTERS = "system:masters"
#: Every authenticated user is in this group.
ALL_AUTHENTICATED = "system:authenticated"
#: Every request without credentials is in this group.
ALL_UNAUTHENTICATED = "system:unauthenticated"
#: The user of a request without credentials (``--anonymous-auth``).
ANONYMOUS = "system:anonymous"
#: The server's own in-process clients (kube-apiserver's loopback client).
APISERVER = "system:apiserver"

#: The extra key naming the credential a user authenticated with (a certificate's fingerprint).
CREDENTIAL_ID = "authentication.kubernetes.io/credential-id"

SERVICE_ACCOUNT_PREFIX = "system:serviceaccount:"
SERVICE_ACCOUNTS_GROUP = "system:serviceaccounts"


def _frozen(extra: Mapping[str, tuple[str, ...]]) -> Mapping[str, tuple[str, ...]]:
    return MappingProxyType({k: tuple(v) for k, v in extra.items()})


@dataclass(frozen=True, slots=True)
class UserInfo:
    """A user: name, uid, groups and extra (free-form key -> values, such as a token's scopes)."""

    name: str
    uid: str = ""
    groups: tuple[str, ...] = ()
    extra: Mapping[str, tuple[str, ...]] = field(default_factory=dict)

    def __post_init__(self) -> None:
        object.__setattr__(self, "groups", tuple(self.groups))
        object.__setattr__(self, "extra", _frozen(self.extra))

    def with_group(self, group: str) -> UserInfo:
        """This user, also in ``group`` (unchanged when already a member)."""
        if group in self.groups:
            return self
        return UserInfo(self.name, self.uid, (*self.groups, group), self.extra)

    @classmethod
    def from_api(cls, user: Mapping[str, Any]) -> UserInfo:
        """An ``authentication.k8s.io/v1`` ``UserInfo`` (a host's TokenReview answer)."""
        extra = {str(k): tuple(str(v) for v in values or ()) for k, values in (user.get("extra") or {}).items()}
        return cls(str(user.get("username") or ""), str(user.get("uid") or ""),
                   tuple(str(g) for g in user.get("groups") or ()), extra)

    def to_api(self) -> dict[str, object]:
        """As ``authentication.k8s.io/v1`` ``UserInfo`` (TokenReview, SelfSubjectReview)."""
        out: dict[str, object] = {"username": self.name}
        if self.uid:
            out["uid"] = self.uid
        if self.groups:
            out["groups"] = list(self.groups)
        if self.extra:
            out["extra"] = {k: list(v) for k, v in self.extra.items()}
        return out


ANONYMOUS_USER = UserInfo(ANONYMOUS, groups=(ALL_UNAUTHENTICATED,))


def service_account_username(namespace: str, name: str) -> str:
    """``system:serviceaccount:NS:NAME``."""
    return f"{SERVICE_ACCOUNT_PREFIX}{namespace}:{name}"


def split_service_account_username(username: str) -> tuple[str, str] | None:
    """(namespace, name) of a ServiceAccount's user name, or None for any other user."""
    if not username.startswith(SERVICE_ACCOUNT_PREFIX):
        return None
    namespace, sep, name = username[len(SERVICE_ACCOUNT_PREFIX):].partition(":")
    if not sep or not namespace or not name or ":" in name:
        return None
    return namespace, name


def service_account_groups(namespace: str) -> tuple[str, ...]:
    """The groups every ServiceAccount of ``namespace`` is in (authenticated added by the union)."""
    return (SERVICE_ACCOUNTS_GROUP, f"{SERVICE_ACCOUNTS_GROUP}:{namespace}")


# RFC 7230's token characters but '%': what a header name may hold as it is (Go's headerKeyEscape).
_HEADER_NAME_SAFE = frozenset(b"!#$&'*+-.^_`|~0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ")


def escape_extra_key(key: str) -> str:
    """An extra key as a header name can carry it (``X-Remote-Extra-<key>``): every other byte
    %-encoded, as client-go's transport does; :func:`unescape_extra_key` reads it back."""
    return "".join(chr(b) if b in _HEADER_NAME_SAFE else f"%{b:02X}" for b in key.encode())


def unescape_extra_key(encoded: str) -> str:
    """An extra key as a header name carries it (``Impersonate-Extra-``, ``X-Remote-Extra-``):
    %-decoded, or left as it is when that fails (kube's ``unescapeExtraKey`` after lower-casing)."""
    if re.search(r"%(?![0-9A-Fa-f]{2})", encoded):
        return encoded
    try:
        return unquote(encoded, errors="strict")
    except UnicodeDecodeError:  # not UTF-8 once decoded: keep the key as it came
        return encoded
