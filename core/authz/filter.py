"""The ``AUTHORIZATION`` filter: a request its user may not make is a 403 with Kubernetes'
message (``responsewriters.Forbidden``)."""

from __future__ import annotations

from aiohttp import web

from kplane.core.authn.filter import user_of
from kplane.core.authz.attributes import Attributes, attributes_of
from kplane.core.authz.authorizers import Authorizers, Verdict
from kplane.core.meta import errors
from kplane.core.server.filters import Handler, Middleware

_VERDICT = web.RequestKey("kplane_authorization_verdict", Verdict)


def verdict_of(request: web.Request) -> Verdict | None:
    """What the authorizers said of ``request`` (None before, or without, authorization): the
    audit log's ``authorization.k8s.io/decision`` and ``reason``."""
    return request.get(_VERDICT)


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
        verdict = request[_VERDICT] = await authorizers.authorize(attributes)
        if not verdict.allowed:
            raise forbidden(attributes, verdict.reason)
        return await handler(request)
    return authorize
