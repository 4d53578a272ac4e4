"""The ``AUTHORIZATION`` filter: a request its user may not make is a 403 with Kubernetes'
message (``responsewriters.Forbidden``)."""

from __future__ import annotations

import dataclasses
from collections.abc import Awaitable, Callable

from aiohttp import web

from kplane.core.authn.filter import user_of
from kplane.core.authz.attributes import Attributes, attributes_of
from kplane.core.authz.authorizers import Authorizers, Verdict
from kplane.core.meta import errors
from kplane.core.server.filters import Handler, Middleware

@dataclasses.dataclass
class Decided:
    """Where the verdict on a request goes: one object, shared by the copies a filter passes on
    (impersonation does), so that a filter before them (audit) reads what authorization said."""

    verdict: Verdict | None = None


_DECIDED = web.RequestKey("kplane_authorization_decided", Decided)
_AUTHORIZERS = web.RequestKey("kplane_authorizers", Authorizers)


def decided(request: web.Request) -> Decided:
    """The request's :class:`Decided` (made on first asking: ask before the request is copied);
    its ``verdict`` is None before, or without, authorization; the audit log's
    ``authorization.k8s.io/decision`` and ``reason``."""
    try:
        return request[_DECIDED]
    except KeyError:
        found = request[_DECIDED] = Decided()
        return found


def forbidden_message(attributes: Attributes) -> str:
    """``User "u" cannot list resource "configmaps" in API group "" in the namespace "default"``."""
    user = attributes.user.name
    if not attributes.resource_request:
        return f'User "{user}" cannot {attributes.verb} path "{attributes.path}"'
    resource = attributes.resource + (f"/{attributes.subresource}" if attributes.subresource else "")
    where = (f'in the namespace "{attributes.namespace}"' if attributes.namespace else "at the cluster scope")
    return f'User "{user}" cannot {attributes.verb} resource "{resource}" in API group "{attributes.api_group}" {where}'


def forbidden(attributes: Attributes, reason: str) -> errors.APIError:
    why = forbidden_message(attributes) + (f": {reason}" if reason else "")
    if not attributes.resource_request:
        return errors.APIError(403, errors.StatusReason.FORBIDDEN, f"forbidden: {why}")
    return errors.forbidden_error(attributes.resource, attributes.api_group, attributes.name, why)


def authorization_filter(authorizers: Authorizers) -> Middleware:
    async def authorize(request: web.Request, handler: Handler) -> web.StreamResponse:
        attributes = attributes_of(request, user_of(request))
        verdict = decided(request).verdict = await authorizers.authorize(attributes)
        if not verdict.allowed:
            raise forbidden(attributes, verdict.reason)
        request[_AUTHORIZERS] = authorizers
        return await handler(request)
    return authorize


def create_check(request: web.Request) -> Callable[[], Awaitable[None]] | None:
    """For a PUT or PATCH that would create its object (server-side apply, a kind that creates on
    update): the check that its user may also ``create`` it, made before the create as kube's
    ``createAuthorizerAttributes`` is; it raises the 403. None where nothing authorizes."""
    authorizers = request.get(_AUTHORIZERS)
    if authorizers is None:
        return None

    async def check() -> None:
        attributes = dataclasses.replace(attributes_of(request, user_of(request)), verb="create")
        verdict = await authorizers.authorize(attributes)
        if not verdict.allowed:
            raise forbidden(attributes, verdict.reason)
    return check
