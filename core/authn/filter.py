"""The ``AUTHENTICATION`` filter: the user goes on the request, or the request is a 401."""

from __future__ import annotations

import logging
from collections.abc import Collection

from aiohttp import web

from kplane.core.authn.authenticators import Authenticated, AuthenticationError, Authenticators
from kplane.core.authn.user import ANONYMOUS_USER, UserInfo
from kplane.core.meta import errors
from kplane.core.server.filters import Handler, Middleware

log = logging.getLogger(__name__)

_AUTHENTICATED = web.RequestKey("kplane_authenticated", Authenticated)
_REQUESTER = web.RequestKey("kplane_requester", UserInfo)

UNAUTHORIZED = "Unauthorized"


def unauthorized() -> errors.APIError:
    """kube-apiserver's 401: it says no more than this, whatever was wrong."""
    return errors.APIError(401, errors.StatusReason.UNAUTHORIZED, UNAUTHORIZED)


def authentication_filter(authenticators: Authenticators) -> Middleware:
    async def authenticate(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            found = await authenticators.authenticate(request)
        except AuthenticationError as err:
            log.info("unable to authenticate %s %s: %s", request.method, request.path, err)
            raise unauthorized() from None
        request[_AUTHENTICATED] = found
        return await handler(without_headers(request, authenticators.identity_headers(request)))
    return authenticate


def without_headers(request: web.Request, names: Collection[str]) -> web.Request:
    """``request`` less the headers ``names`` (any case), for the filters and handlers after
    this one; what was put on ``request`` so far stays on it, for the filters before."""
    if not names:
        return request
    drop = {n.lower() for n in names}
    return request.clone(headers=[(k, v) for k, v in request.headers.items() if k.lower() not in drop])


def authenticated(request: web.Request) -> Authenticated:
    """Who the credentials of ``request`` name (before impersonation), with their audiences."""
    return request.get(_AUTHENTICATED) or Authenticated(ANONYMOUS_USER)


def user_of(request: web.Request) -> UserInfo:
    """Whom ``request`` acts as: the authenticated user, or whom it impersonates."""
    return request.get(_REQUESTER) or authenticated(request).user


def act_as(request: web.Request, user: UserInfo) -> None:
    """From here on ``request`` acts as ``user`` (impersonation)."""
    request[_REQUESTER] = user
