"""The request filters plugins contribute (``kplane_register_filters``), at named stages.

A request passes the filters outermost first, as kube-apiserver's ``DefaultBuildHandlerChain``
orders its own: core's filters (:mod:`kplane.core.server.filters`: errors as Status, max
in-flight, timeout) always come first, then the plugins' by stage,

    AUTHENTICATION -> AUDIT -> IMPERSONATION -> AUTHORIZATION -> PROXY -> the routes

and within a stage in the order they were added (plugins in their load order).

- ``AUTHENTICATION``: who sends the request (``WithAuthentication``); a request no authenticator
  accepts is answered 401 here.
- ``AUDIT``: record the request and its answer (``WithAudit``), knowing who sent it.
- ``IMPERSONATION``: act as the user ``Impersonate-*`` headers name (``WithImpersonation``).
- ``AUTHORIZATION``: allow or refuse (403) what the user asks (``WithAuthorization``).
- ``PROXY``: send the request to another server instead of the routes (kube-aggregator's proxy
  handler, behind every check above).

Kubernetes counts max in-flight between impersonation and authorization; kplane counts it first,
since it lets the server's own loopback clients through by their token, not by a user.

A filter is an aiohttp middleware, ``async def f(request, handler) -> StreamResponse``: it
answers itself or returns ``await handler(request)``. An :class:`~kplane.core.meta.errors.APIError`
it raises is answered as a Status.
"""

from __future__ import annotations

from collections.abc import Awaitable
from dataclasses import dataclass

from aiohttp import web

from kplane.core.server.filters import Handler, Middleware

#: The stage of filters that say who sends the request.
AUTHENTICATION = "authentication"
#: The stage of filters that record requests and answers.
AUDIT = "audit"
#: The stage of filters that act as the user ``Impersonate-*`` headers name.
IMPERSONATION = "impersonation"
#: The stage of filters that allow or refuse what the user asks.
AUTHORIZATION = "authorization"
#: The stage of filters that send a request to another server instead of the routes.
PROXY = "proxy"
#: Every stage, in the order a request meets them.
STAGES = (AUTHENTICATION, AUDIT, IMPERSONATION, AUTHORIZATION, PROXY)


@dataclass(frozen=True, slots=True)
class Filter:
    stage: str
    name: str  # for messages and for taking a broken plugin's filters out
    function: Middleware


class FilterChain:
    """The plugins' filters in request order, run by one middleware of the app: a plugin taken
    out after the app was built (``--skip-broken-plugins``) leaves the chain at once."""

    def __init__(self) -> None:
        self.filters: list[Filter] = []

    def add(self, stage: str, name: str, function: Middleware) -> None:
        """Run ``function`` at ``stage`` (one of :data:`STAGES`), after the filters already there."""
        if stage not in STAGES:
            raise ValueError(f"unknown filter stage {stage!r} for {name!r}; the stages are {', '.join(STAGES)}")
        rank = STAGES.index(stage)
        at = next((i for i, f in enumerate(self.filters) if STAGES.index(f.stage) > rank), len(self.filters))
        self.filters.insert(at, Filter(stage, name, function))

    @web.middleware
    async def middleware(self, request: web.Request, handler: Handler) -> web.StreamResponse:
        for f in reversed(self.filters):
            handler = _Bound(f.function, handler)
        return await handler(request)


class _Bound:
    """A filter with the handler it passes the request on to, as a handler: a plain call, not a
    coroutine of its own, so a request held open (a watch) keeps one frame per filter, not two."""

    __slots__ = ("function", "handler")

    def __init__(self, function: Middleware, handler: Handler) -> None:
        self.function, self.handler = function, handler

    def __call__(self, request: web.Request) -> Awaitable[web.StreamResponse]:
        return self.function(request, self.handler)
