"""The ``IMPERSONATION`` filter (k8s.io/apiserver ``WithImpersonation``, ``kubectl --as``).

A request with ``Impersonate-User`` (and optionally ``Impersonate-Group``, repeated,
``Impersonate-Uid`` and ``Impersonate-Extra-<key>``) acts as the user they describe, once the
authenticated user is allowed the ``impersonate`` verb on each part of it:

- ``users`` (a ServiceAccount's user name: ``serviceaccounts`` in its namespace), ``groups``,
  in the core group "";
- ``uids`` and ``userextras/<key>`` in ``authentication.k8s.io``.

The first part refused is a 403 with kube's message; groups, uid or extra without a user is a
400. The impersonated user is put in ``system:authenticated`` (``system:unauthenticated`` for
``system:anonymous``) unless the groups name either, and a ServiceAccount without named groups
gets its own. The authenticated user stays on the request (``authenticated(request)``, for
audit); the ``Impersonate-*`` headers do not go on past this filter.
"""

from __future__ import annotations

from dataclasses import dataclass

from aiohttp import web
from multidict import CIMultiDictProxy

from kplane.core.authn.authenticators import header_text
from kplane.core.authn.filter import act_as, user_of, without_headers
from kplane.core.authn.user import (
    ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS, UserInfo, service_account_groups, service_account_username,
    split_service_account_username, unescape_extra_key,
)
from kplane.core.authz.attributes import Attributes
from kplane.core.authz.authorizers import Authorizers
from kplane.core.authz.filter import forbidden
from kplane.core.meta import errors
from kplane.core.server.filters import Handler, Middleware

IMPERSONATE_USER = "Impersonate-User"
IMPERSONATE_GROUP = "Impersonate-Group"
IMPERSONATE_UID = "Impersonate-Uid"
IMPERSONATE_EXTRA_PREFIX = "Impersonate-Extra-"

AUTHENTICATION_V1 = "authentication.k8s.io/v1"
VERB = "impersonate"


@dataclass(frozen=True, slots=True)
class _Target:
    """One thing to impersonate, as kube's ``ObjectReference`` of it (its text is in the 400)."""

    kind: str  # User, ServiceAccount, Group, UID, UserExtra
    name: str
    namespace: str = ""
    api_version: str = ""
    field_path: str = ""  # a UserExtra's key

    def __str__(self) -> str:  # Go's %v of an ObjectReference: every field, in order, uid and resourceVersion empty
        return "{" + " ".join((self.kind, self.namespace, self.name, "", self.api_version, "", self.field_path)) + "}"

    def attributes(self, requester: UserInfo, path: str) -> Attributes:
        """What the requester must be allowed to impersonate this."""
        group, _, version = self.api_version.rpartition("/")
        resource, subresource = {
            "User": ("users", ""), "ServiceAccount": ("serviceaccounts", ""), "Group": ("groups", ""),
            "UID": ("uids", ""), "UserExtra": ("userextras", self.field_path),
        }[self.kind]
        return Attributes(requester, VERB, True, namespace=self.namespace, api_group=group, api_version=version,
                          resource=resource, subresource=subresource, name=self.name, path=path)


def is_impersonation_header(name: str) -> bool:
    low = name.lower()
    return low in _EXACT or low.startswith(_EXTRA)


_EXACT = frozenset(h.lower() for h in (IMPERSONATE_USER, IMPERSONATE_GROUP, IMPERSONATE_UID))
_EXTRA = IMPERSONATE_EXTRA_PREFIX.lower()


def impersonation_targets(headers: CIMultiDictProxy[str]) -> list[_Target]:
    """What the headers ask to impersonate, in kube's order (user, groups, extra, uid)."""
    targets: list[_Target] = []
    user = header_text(headers.get(IMPERSONATE_USER, ""))
    if user:
        account = split_service_account_username(user)
        targets.append(_Target("ServiceAccount", account[1], account[0]) if account else _Target("User", user))
    groups = [header_text(g) for g in headers.getall(IMPERSONATE_GROUP, [])]
    targets += [_Target("Group", g) for g in groups]
    extras = [(h, header_text(v)) for h, v in headers.items() if h.lower().startswith(_EXTRA)]
    targets += [_Target("UserExtra", v, api_version=AUTHENTICATION_V1,
                        field_path=unescape_extra_key(h[len(_EXTRA):].lower())) for h, v in extras]
    uid = header_text(headers.get(IMPERSONATE_UID, ""))
    if uid:
        targets.append(_Target("UID", uid, api_version=AUTHENTICATION_V1))
    if (groups or extras or uid) and not user:
        listed = " ".join(str(t) for t in targets)
        raise errors.bad_request(f"requested [{listed}] without impersonating a user")
    return targets


def impersonated_user(targets: list[_Target], groups_named: bool) -> UserInfo:
    """The user the (allowed) targets describe, with the groups kube adds."""
    name, uid = "", ""
    groups: list[str] = []
    extra: dict[str, list[str]] = {}
    for t in targets:
        if t.kind == "ServiceAccount":
            name = service_account_username(t.namespace, t.name)
            if not groups_named:
                groups = list(service_account_groups(t.namespace))
        elif t.kind == "User":
            name = t.name
        elif t.kind == "Group":
            groups.append(t.name)
        elif t.kind == "UserExtra":
            extra.setdefault(t.field_path, []).append(t.name)
        else:
            uid = t.name
    if name != ANONYMOUS:
        if ALL_AUTHENTICATED not in groups and ALL_UNAUTHENTICATED not in groups:
            groups.append(ALL_AUTHENTICATED)
    elif ALL_UNAUTHENTICATED not in groups:
        groups.append(ALL_UNAUTHENTICATED)
    return UserInfo(name, uid, tuple(groups), {k: tuple(v) for k, v in extra.items()})


def impersonation_filter(authorizers: Authorizers) -> Middleware:
    async def impersonate(request: web.Request, handler: Handler) -> web.StreamResponse:
        targets = impersonation_targets(request.headers)
        if not targets:
            return await handler(request)
        requester = user_of(request)
        for target in targets:
            attributes = target.attributes(requester, request.path)
            verdict = await authorizers.authorize(attributes)
            if not verdict.allowed:
                raise forbidden(attributes, verdict.reason)
        act_as(request, impersonated_user(targets, bool(request.headers.getall(IMPERSONATE_GROUP, []))))
        return await handler(without_headers(request, [h for h in request.headers if is_impersonation_header(h)]))
    return impersonate
