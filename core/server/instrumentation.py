"""kube-apiserver's request metrics as a filter, and ``GET /metrics``.

Each request is counted once it is answered (``apiserver_request_total``, by code) and timed
(``apiserver_request_duration_seconds``); a long-running one (a watch, exec, log, proxy) is in
``apiserver_longrunning_requests`` while it runs. The labels follow kube's
``endpoints/metrics``: the verb as the API names it (GET, LIST, WATCH, POST, PUT, PATCH, APPLY,
DELETE, DELETECOLLECTION, CONNECT), ``dry_run`` (``All``, or ``invalid``), the group, version,
resource and subresource, and the scope (``resource`` for a named object or a create,
``namespace``, ``cluster``). Only what the server serves becomes a label value: a request for a
resource no kind serves here is counted with its method as verb and empty resource labels, and a
method HTTP does not define as ``other``, so no client can add series by sending URLs.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from aiohttp import web
from prometheus_client import CollectorRegistry

from kplane.core.metrics.families import CONTENT_TYPE, Labels, exposition
from kplane.core.metrics.requests import COMPONENT, RequestMetrics
from kplane.core.patching.mediatypes import APPLY_PATCH
from kplane.core.registry.registry import Registry
from kplane.core.runtime.scheme import Scheme
from kplane.core.server import params, requestinfo
from kplane.core.server.filters import Handler, Middleware, is_long_running
from kplane.core.server.requestinfo import RequestInfo

_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "OPTIONS", "CONNECT", "TRACE"})
# The verb kube reports by method and whether the path names an object.
_VERBS = {
    ("GET", True): "GET", ("HEAD", True): "GET", ("GET", False): "LIST", ("HEAD", False): "LIST",
    ("POST", True): "POST", ("POST", False): "POST", ("PUT", True): "PUT", ("PUT", False): "PUT",
    ("PATCH", True): "PATCH", ("PATCH", False): "PATCH", ("DELETE", True): "DELETE",
    ("DELETE", False): "DELETECOLLECTION",
}
# Subresources served by a connecter (kube's installer registers them under the verb CONNECT).
_CONNECT = frozenset({"attach", "exec", "portforward", "proxy"})


class RequestLabels:
    """The labels of a request (``REQUEST_LABELS`` but the component), from what the scheme and
    the registry serve. What is served is remembered per scheme generation (a bounded set:
    the served resources); what is not is looked up again each time, and never kept."""

    def __init__(self, scheme: Scheme, registry: Registry) -> None:
        self._scheme, self._registry = scheme, registry
        self._served: set[tuple[str, str, str, str, bool]] = set()
        self._generation = -1

    def of(self, request: web.Request) -> Labels:
        method = request.method
        info = requestinfo.of(request)
        if info is None or not self._serves(info):
            return (method if method in _METHODS else "other", "", "", "", "", "", "", COMPONENT)
        verb = _VERBS.get((method, bool(info.name)), "other")
        if info.subresource in _CONNECT:
            verb = "CONNECT"
        elif verb == "LIST" and _watching(request):
            verb = "WATCH"
        elif verb == "PATCH" and request.content_type == APPLY_PATCH:
            verb = "APPLY"
        if info.name or verb == "POST":
            scope = "resource"
        else:
            scope = "namespace" if info.namespace else "cluster"
        return (verb, _dry_run(request), info.group, info.version, info.resource, info.subresource, scope, COMPONENT)

    def _serves(self, info: RequestInfo) -> bool:
        if self._generation != self._scheme.generation:
            self._served.clear()
            self._generation = self._scheme.generation
        key = (info.group, info.version, info.resource, info.subresource, info.namespaced_path)
        if key in self._served:
            return True
        rt = self._scheme.resource(info.group, info.version, info.resource)
        if rt is None or (info.namespaced_path and not rt.namespaced):
            return False
        if self._registry.rest(info.group, info.resource, info.subresource, info.version) is None:
            return False
        self._served.add(key)
        return True


def _watching(request: web.Request) -> bool:
    try:
        return params.flag(request.query, "watch")
    except Exception:  # noqa: BLE001  # a malformed ?watch= is the handler's 400; counted as a list
        return False


def _dry_run(request: web.Request) -> str:
    """kube's ``cleanDryRun``: ``All``, "" when not asked, ``invalid`` for anything else."""
    values = request.query.getall("dryRun", [])
    if not values:
        return ""
    return "All" if all(value == "All" for value in values) else "invalid"


def instrument(metrics: RequestMetrics, labels: RequestLabels) -> Middleware:
    """The filter counting and timing every request, the outermost one, so that it sees the
    answer the client gets (errors already turned into Statuses, 429s, 504s included)."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        start = time.perf_counter()
        key = labels.of(request)
        long_running = is_long_running(request)
        if long_running:
            running = (key[0], *key[2:])  # without dry_run
            metrics.long_running.add(running)
        code = 500
        try:
            response = await handler(request)
            code = response.status
            return response
        except web.HTTPException as exc:
            code = exc.status
            raise
        except asyncio.CancelledError:
            code = 0  # the connection was dropped: nobody was answered
            raise
        finally:
            if long_running:
                metrics.long_running.add(running, -1)
            if code:
                metrics.observe(key, code, time.perf_counter() - start)

    return middleware


def metrics_handler(registry: CollectorRegistry,
                    *refresh: Callable[[], Awaitable[None]]) -> Callable[[web.Request], Awaitable[web.Response]]:
    """``GET /metrics``: the registry in Prometheus' text format, after ``refresh`` (figures
    only a backend knows, asked for at scrape time)."""

    async def handler(request: web.Request) -> web.Response:
        for update in refresh:
            await update()
        return web.Response(body=exposition(registry), headers={"Content-Type": CONTENT_TYPE})

    return handler
