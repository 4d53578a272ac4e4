"""Request filters in front of the handlers, in kube-apiserver's order (``DefaultBuildHandlerChain``):
errors as Status (``app.status_errors``) -> max in-flight -> timeout -> the plugins' filters
(:mod:`kplane.core.server.filterchain`) -> handler.

- **Max in-flight** (``WithMaxInFlightLimit``): at most ``max_requests_inflight`` read-only (GET,
  HEAD) and ``max_mutating_requests_inflight`` other requests at once; one more is answered 429
  ``TooManyRequests`` with ``Retry-After: 1``. A request counts while its body is read. Not
  counted: long-running requests (watches, and exec/attach/log/proxy/portforward), health probes
  (Kubernetes exempts them through the ``probes`` FlowSchema) and the server's own loopback
  clients, whose requests carry one of this process' own bearer tokens (the loopback clients' and
  the in-process controllers'; Kubernetes' loopback client is in ``system:masters``, which the
  limit lets through). 0 turns a limit off.
- **Timeout** (``WithRequestDeadline`` + ``WithTimeoutForNonLongRunningRequests``): a request that
  is not long-running ends after ``request_timeout`` seconds, or after ``?timeout=`` (a Go
  duration) when that is shorter, with 504 ``Timeout``. This filter writes the answer itself, so
  that sending it counts too: a middleware outside it cannot change a response's headers.
- A body that did not arrive in time (:class:`kplane.core.server.connections.BodyReadTimeout`) is a 408,
  and a connection taken past the connection cap serves probes and loopback clients only.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import re
from collections.abc import Awaitable, Callable, Collection
from dataclasses import dataclass

from aiohttp import web

from kplane.core.meta import errors
from kplane.core.server import negotiation, params, requestinfo
from kplane.core.server.connections import BodyReadTimeout, GuardedRequestHandler

#: What a filter calls to pass the request on: the next filter, or the routes.
Handler = Callable[[web.Request], Awaitable[web.StreamResponse]]
Middleware = Callable[[web.Request, Handler], Awaitable[web.StreamResponse]]

PROBES = ("/healthz", "/livez", "/readyz")
READ_ONLY_METHODS = frozenset({"GET", "HEAD"})
# kube-apiserver's BasicLongRunningRequestCheck: these subresources stream for as long as they like.
LONG_RUNNING_SUBRESOURCES = frozenset({"attach", "exec", "proxy", "log", "portforward"})
TOO_MANY_REQUESTS = "Too many requests, please try again later."
RETRY_AFTER = 1


@dataclass
class RequestLimits:
    max_requests_inflight: int = 400  # read-only requests at once (0: no limit)
    max_mutating_requests_inflight: int = 200  # other requests at once (0: no limit)
    request_timeout: float = 60.0  # seconds a request that is not long-running may take


def is_probe(path: str) -> bool:
    """/healthz, /livez, /readyz and their single checks (/readyz/etcd)."""
    return any(path == p or path.startswith(p + "/") for p in PROBES)


_LONG_RUNNING = web.RequestKey("kplane_long_running", bool)


def is_long_running(request: web.Request) -> bool:
    """A watch (``?watch=true`` or a ``/watch/`` path) or a streaming subresource (decided once
    per request: two filters ask)."""
    try:
        return request[_LONG_RUNNING]
    except KeyError:
        long_running = request[_LONG_RUNNING] = _long_running(request)
        return long_running


def _long_running(request: web.Request) -> bool:
    if request.method == "GET":
        try:
            if params.flag(request.query, "watch"):
                return True
        except errors.APIError:
            return False  # the handler answers the bad value
    parts = request.path.split("/")  # /api/v1/watch/... and /apis/<group>/<version>/watch/...
    root = {"api": 3, "apis": 4}.get(parts[1] if len(parts) > 1 else "")
    if root is not None and len(parts) > root and parts[root] == "watch":
        return True
    info = requestinfo.of(request)
    return info is not None and info.subresource in LONG_RUNNING_SUBRESOURCES


def is_loopback(request: web.Request, tokens: Collection[str]) -> bool:
    """The request carries one of this process' own tokens: compared with each of them in
    constant time, without stopping at a match, so the time taken tells nothing about any."""
    header = request.headers.get("Authorization", "")
    if not header.startswith("Bearer "):
        return False
    presented = header[7:].encode("utf-8", "surrogateescape")  # bytes that are not UTF-8 are no token of ours
    found = False
    for token in tokens:
        found |= bool(token) and hmac.compare_digest(presented, token.encode())
    return found


def _too_many(request: web.Request, *, close: bool = False) -> web.Response:
    response = negotiation.status_response(
        request, errors.APIError(429, errors.StatusReason.TOO_MANY_REQUESTS, TOO_MANY_REQUESTS,
                                 {"retryAfterSeconds": RETRY_AFTER}))
    response.headers["Retry-After"] = str(RETRY_AFTER)
    if close:
        response.force_close()
    return response


def max_in_flight(limits: RequestLimits, loopback_tokens: Collection[str],
                  running: dict[bool, int] | None = None) -> Middleware:
    """The middleware counting read-only (``running[True]``) and mutating requests separately;
    ``running``: where to count, for whoever reads the figures (``/metrics``)."""
    caps = {True: limits.max_requests_inflight, False: limits.max_mutating_requests_inflight}
    running = running if running is not None else {True: 0, False: 0}

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        loopback = is_loopback(request, loopback_tokens)
        connection = request.protocol if isinstance(request.protocol, GuardedRequestHandler) else None
        if loopback and connection is not None:
            connection.exempt()
        exempt = loopback or is_probe(request.path)
        if connection is not None and connection.reserved and not exempt:
            return _too_many(request, close=True)  # a connection past the cap
        read_only = request.method in READ_ONLY_METHODS
        if exempt or not caps[read_only] or is_long_running(request):
            return await handler(request)
        if running[read_only] >= caps[read_only]:
            return _too_many(request)
        running[read_only] += 1
        try:
            return await handler(request)
        finally:
            running[read_only] -= 1

    return middleware


_DURATION_PART = re.compile(r"(\d+\.?\d*|\.\d+)([^\d.]*)")
_UNIT_SECONDS = {"ns": 1e-9, "us": 1e-6, "µs": 1e-6, "μs": 1e-6, "ms": 1e-3, "s": 1.0, "m": 60.0, "h": 3600.0}


MAX_DURATION_SECONDS = (2**63 - 1) / 1e9  # the longest Go duration (about 292 years)


def parse_duration(text: str) -> float:
    """Seconds in a Go duration (``1m30s``, ``500ms``, ``0``); ValueError worded as Go's."""
    rest = text[1:] if text[:1] in ("-", "+") else text
    if rest == "0":
        return 0.0
    if not rest:
        raise ValueError(f'time: invalid duration "{text}"')
    total, position = 0.0, 0
    while position < len(rest):
        match = _DURATION_PART.match(rest, position)
        if match is None:
            raise ValueError(f'time: invalid duration "{text}"')
        number, unit = match.groups()
        if not unit:
            raise ValueError(f'time: missing unit in duration "{text}"')
        if unit not in _UNIT_SECONDS:
            raise ValueError(f'time: unknown unit "{unit}" in duration "{text}"')
        total += float(number) * _UNIT_SECONDS[unit]
        position = match.end()
    if total > MAX_DURATION_SECONDS:  # Go's int64 of nanoseconds overflows: the same error
        raise ValueError(f'time: invalid duration "{text}"')
    return -total if text.startswith("-") else total


def _deadline(request: web.Request, maximum: float) -> float:
    """``?timeout=`` when given, positive and shorter than the server's maximum; else the maximum."""
    value = request.query.get("timeout", "")
    if not value:
        return maximum
    try:
        asked = parse_duration(value)
    except ValueError as err:
        raise errors.bad_request(f"invalid timeout specified in the request URL - {err}") from None
    return asked if 0 < asked < maximum else maximum


async def _send(request: web.Request, response: web.StreamResponse) -> None:
    """Write the answer now, inside the filters, rather than after them as aiohttp would: a client
    that reads it slowly then holds its in-flight place and meets its deadline, as in Go, where
    the handler writes the response itself. A client gone meanwhile is aiohttp's to notice."""
    if response.prepared:
        return
    with contextlib.suppress(ConnectionError):
        await response.prepare(request)
        await response.write_eof()


def request_timeout(limits: RequestLimits) -> Middleware:
    """The middleware ending a request that is not long-running at its deadline with a 504."""

    @web.middleware
    async def middleware(request: web.Request, handler: Handler) -> web.StreamResponse:
        try:
            if is_long_running(request):
                return await handler(request)
            seconds = _deadline(request, limits.request_timeout)
            deadline = asyncio.timeout(seconds)
            try:
                async with deadline:
                    response = await handler(request)
                    await _send(request, response)
                    return response
            except TimeoutError:
                if not deadline.expired():
                    raise
            if request.writer.output_size:  # the answer had begun: all that is left is to hang up
                request.protocol.force_close()
                raise asyncio.CancelledError
            raise errors.APIError(504, errors.StatusReason.TIMEOUT,
                                  "Timeout: request did not complete within requested timeout - context deadline exceeded")
        except BodyReadTimeout as err:
            response = negotiation.status_response(
                request, errors.APIError(408, errors.StatusReason.TIMEOUT, f"Timeout: {err}"))
            response.force_close()
            return response

    return middleware
