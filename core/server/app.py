"""The aiohttp application: routes, error handling, health and version endpoints."""

from __future__ import annotations

import logging
from collections.abc import Collection
from typing import Any

import orjson
from aiohttp import web

from kplane.core.config import BOOKMARK_INTERVAL
from kplane.core.meta import errors
from kplane.core.metrics.server import ServerMetrics
from kplane.core.registry.registry import Registry
from kplane.core.runtime.scheme import Scheme
from kplane.core.server import health, negotiation
from kplane.core.server.apisources import APISources
from kplane.core.server.discovery import Discovery
from kplane.core.server.filterchain import FilterChain
from kplane.core.server.filters import RequestLimits, max_in_flight, request_timeout
from kplane.core.server.handlers import ResourceEndpoints
from kplane.core.server.instrumentation import RequestLabels, instrument, metrics_handler
from kplane.core.server.openapi import OpenAPI
from kplane.core.server.openapi_v2 import OpenAPIV2

log = logging.getLogger(__name__)

VERSION = {
    "major": "1",
    "minor": "32",
    "gitVersion": "v1.32.0-kplane",
    "gitCommit": "0000000000000000000000000000000000000000",
    "gitTreeState": "clean",
    "buildDate": "2026-11-29T00:00:00Z",
    "goVersion": "python",
    "compiler": "cpython",
    "platform": "linux/amd64",
}

LIFECYCLE = web.AppKey("lifecycle", health.Lifecycle)


# What a client is told when something unexpected fails: never the exception's text, which may
# carry a file path or a Python repr. The server's log keeps the detail. (Storage failures reach
# here as APIErrors already: the registry translates them, see kplane.core.registry.storeerr.)
UNEXPECTED = "an unexpected error occurred while serving the request; the server's log has the details"


@web.middleware
async def status_errors(request: web.Request, handler: Any) -> web.StreamResponse:
    """Every failure leaves as a metav1.Status; an unexpected exception is a logged 500."""
    try:
        return await handler(request)
    except errors.APIError as err:
        return negotiation.status_response(request, err)
    except web.HTTPNotFound:
        return negotiation.status_response(
            request, errors.APIError(404, errors.StatusReason.NOT_FOUND, "the server could not find the requested resource")
        )
    except web.HTTPException:
        raise
    except Exception:
        log.exception("unhandled error in %s %s", request.method, request.path)
        return negotiation.status_response(request, errors.internal_error(UNEXPECTED))


def build_app(scheme: Scheme, registry: Registry, *, bookmark_interval: float = BOOKMARK_INTERVAL,
              share_watch_encoding: bool = True, filters: FilterChain | None = None,
              sources: APISources | None = None,
              limits: RequestLimits | None = None, loopback_tokens: Collection[str] = (),
              metrics: ServerMetrics | None = None) -> web.Application:
    """The server's routes behind the request filters (:mod:`kplane.core.server.filters`, then
    the plugins' ``filters`` by stage, in kube-apiserver's order); discovery and OpenAPI also list
    what the plugins' ``sources`` name. ``loopback_tokens``: the bearer tokens of the server's
    own clients, read on each request (a live view: the controllers' are added later). With
    ``metrics``, requests are counted (:mod:`kplane.core.server.instrumentation`) and ``GET
    /metrics`` shows them, authorized as any other path."""
    limits = limits or RequestLimits()
    in_flight = metrics.in_flight if metrics is not None else None
    middlewares: list[Any] = [status_errors, max_in_flight(limits, loopback_tokens, in_flight), request_timeout(limits)]
    if metrics is not None:
        middlewares.insert(0, instrument(metrics.requests, RequestLabels(scheme, registry)))
    if filters is not None:
        middlewares.append(filters.middleware)
    app = web.Application(middlewares=middlewares, client_max_size=negotiation.MAX_BODY + 1)
    lifecycle = app[LIFECYCLE] = health.Lifecycle()
    discovery = Discovery(scheme, registry, sources)
    openapi = OpenAPI(scheme, registry, sources)
    swagger = OpenAPIV2(openapi, VERSION["gitVersion"])
    endpoints = ResourceEndpoints(scheme, registry, bookmark_interval=bookmark_interval,
                                  share_watch_encoding=share_watch_encoding,
                                  watch_events=metrics.requests.watch_events if metrics is not None else None)

    async def version(request: web.Request) -> web.Response:
        # kube-apiserver writes version.Info with json.MarshalIndent(info, "", "  "), no newline.
        return web.Response(body=orjson.dumps(VERSION, option=orjson.OPT_INDENT_2), content_type="application/json")

    app.on_shutdown.append(endpoints.close_watches)
    app.on_response_prepare.append(endpoints.version_warnings)
    # Paths kube-apiserver serves with and without a trailing slash (go-restful ignores one; its
    # mux registers /api/ and /apis/ too). The health endpoints and /openapi/v2, /openapi/v3 are exact there.
    app.router.add_get("/version", version)
    app.router.add_get("/version/", version)
    live, ready = health.standard_checks(registry.storage_health, lifecycle)
    health.install(app.router, "livez", live)
    health.install(app.router, "readyz", ready)
    health.install(app.router, "healthz", ready)
    app.router.add_get("/api", discovery.core_root)
    app.router.add_get("/api/", discovery.core_root)
    app.router.add_get("/apis", discovery.groups_root)
    app.router.add_get("/apis/", discovery.groups_root)
    app.router.add_get("/api/{version}", discovery.resource_list)
    app.router.add_get("/api/{version}/", discovery.resource_list)
    app.router.add_get("/apis/{group}", discovery.group)
    app.router.add_get("/apis/{group}/", discovery.group)
    app.router.add_get("/apis/{group}/{version}", discovery.resource_list)
    app.router.add_get("/apis/{group}/{version}/", discovery.resource_list)
    if metrics is not None:
        app.router.add_get("/metrics", metrics_handler(metrics.registry, metrics.storage.refresh))
    app.router.add_get("/openapi/v2", swagger.handle)
    app.router.add_get("/openapi/v3", openapi.index)
    app.router.add_get("/openapi/v3/{path:.+}", openapi.document)
    app.router.add_route("*", "/api/{version}/{rest:.+}", endpoints.handle)
    app.router.add_route("*", "/apis/{group}/{version}/{rest:.+}", endpoints.handle)
    return app
