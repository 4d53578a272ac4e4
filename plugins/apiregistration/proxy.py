"""The proxy filter (kube-aggregator's proxy handler): a request under ``/apis/<group>/<version>``
of a group/version an APIService hands to a backend goes there, even when this server also
serves it (the backend wins), and so does its OpenAPI document ``/openapi/v3/apis/<group>/<version>``.

Requests reach the backend as they came (method, path, query, body and headers streamed both
ways, watches included), less the hop-by-hop headers and every header that claims an identity:
``Authorization``, ``Impersonate-*`` and the front-proxy headers ``X-Remote-*``, whoever set them;
over https the proxy then names the user the request acts as in its own ``X-Remote-*`` headers
(see "Identity headers" in :mod:`kplane.plugins.apiregistration.aggregator`).

Redirects are never followed, as kube-aggregator with ``--aggregator-reject-forwarding-redirect``
(its default): a proxied answer in 3xx with a ``Location`` becomes a 502 "the backend attempted
to redirect this request, which is not permitted", so no client is sent to another host with its
credentials. The one redirect relayed is an OpenAPI document's to itself at its current hash (a
path on this server, as kube-aggregator answers a stale hash). A backend that cannot be reached,
does not answer in time, or is known to be unavailable gets the client a 503
``ServiceUnavailable`` Status naming the APIService, never a hang.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Awaitable, Callable
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from aiohttp import web
from multidict import CIMultiDict

from kplane.api import UnreachableError, describe_error, errors, user_of
from kplane.plugins.apiregistration.aggregator import Aggregator, identity_headers
from kplane.plugins.apiregistration.apiservices import condition

REDIRECT_REFUSED = "the backend attempted to redirect this request, which is not permitted"

# RFC 9110 §7.6.1, plus what only this hop may decide (length, framing, the expectation).
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
    "trailers", "transfer-encoding", "upgrade", "host", "content-length", "expect",
})
# Headers that claim an identity: a backend gets none of them (see "Identity headers" above).
NOT_FORWARDED = frozenset({"authorization"})
IDENTITY_PREFIXES = ("x-remote-", "impersonate-")


def proxy_headers(incoming: Any, peer: str | None = None) -> CIMultiDict[str]:
    """The headers a backend gets: the client's, less hop-by-hop ones and any that claims an
    identity (credentials, impersonation, front-proxy headers), plus ``X-Forwarded-For``."""
    connection_listed = {h.strip().lower() for v in incoming.getall("Connection", []) for h in v.split(",")}
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in incoming.items():
        low = name.lower()
        if low in HOP_BY_HOP or low in NOT_FORWARDED or low in connection_listed or low.startswith(IDENTITY_PREFIXES):
            continue
        if low == "x-forwarded-for":
            continue
        out.add(name, value)
    forwarded = ", ".join(incoming.getall("X-Forwarded-For", []))
    if peer:
        out["X-Forwarded-For"] = f"{forwarded}, {peer}" if forwarded else peer
    elif forwarded:
        out["X-Forwarded-For"] = forwarded
    return out


class ProxyFilter:
    """The filter at the ``PROXY`` stage, in front of the routes."""

    def __init__(self, aggregator: Aggregator) -> None:
        self.aggregator = aggregator

    async def __call__(self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        gv = _proxied_path(request.path)
        if gv is not None:
            api_service = self.aggregator.route(*gv)
            if api_service is not None:
                return await self.proxy(request, api_service)
        return await handler(request)

    async def proxy(self, request: web.Request, api_service: dict[str, Any]) -> web.StreamResponse:
        name = api_service["metadata"]["name"]
        available = condition(api_service)
        if available is not None and available.get("status") == "False":
            why = f"{available.get('reason', '')}: {available.get('message', '')}".strip(": ")
            raise errors.unavailable(f'the APIService "{name}" is not available: {why}')
        try:
            backend = self.aggregator.backends.backend(api_service)
        except UnreachableError as err:
            self.aggregator.on_backend_failure(name)
            raise errors.unavailable(f'the APIService "{name}" has no backend to send the request to: {err.message}') from None
        assert self.aggregator.session is not None
        target = backend.url(request.raw_path)
        peer = request.remote
        headers = proxy_headers(request.headers, peer)
        headers.extend(identity_headers(backend, user_of(request)))
        if request.content_length is not None:
            headers["Content-Length"] = str(request.content_length)
        body = request.content.iter_chunked(65536) if request.body_exists else None
        skip = [h for h in ("Accept", "Accept-Encoding", "User-Agent", "Content-Type") if h not in request.headers]
        try:
            async with asyncio.timeout(self.aggregator.settings.response_timeout):
                upstream = await self.aggregator.session.request(request.method, target, headers=headers, data=body,
                                                      allow_redirects=False, ssl=backend.ssl, skip_auto_headers=skip,
                                                      server_hostname=backend.server_hostname)
        except Exception as err:
            if not isinstance(err, (aiohttp.ClientError, OSError)):  # TimeoutError is an OSError
                raise
            self.aggregator.on_backend_failure(name)
            if isinstance(err, TimeoutError) and not isinstance(err, aiohttp.ClientError):  # not a connect timeout
                raise errors.unavailable(f'the backend of the APIService "{name}" at {backend.base} did not answer '
                                         f"within {self.aggregator.settings.response_timeout:g}s") from None
            raise errors.unavailable(f'the backend of the APIService "{name}" at {backend.base} cannot be reached: '
                                     f"{describe_error(err)}") from None
        try:
            location = upstream.headers.get("Location")
            if 300 <= upstream.status < 400 and location and not _to_itself(request.path, location):
                return web.Response(status=502, text=REDIRECT_REFUSED)
            return await self._relay(request, upstream)
        finally:
            upstream.close()

    async def _relay(self, request: web.Request, upstream: aiohttp.ClientResponse) -> web.StreamResponse:
        """Copy the backend's response to the client as it arrives; a client that goes away
        closes the backend's connection (a proxied watch ends at both ends)."""
        response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        connection_listed = {h.strip().lower() for v in upstream.headers.getall("Connection", []) for h in v.split(",")}
        for key, value in upstream.headers.items():
            low = key.lower()
            if low not in HOP_BY_HOP and low not in connection_listed:
                response.headers.add(key, value)
        bodyless = request.method == "HEAD" or upstream.status in (204, 304) or 100 <= upstream.status < 200
        if bodyless:
            if upstream.content_length is not None:
                response.headers["Content-Length"] = str(upstream.content_length)
            await response.prepare(request)
            await response.write_eof()
            return response
        if upstream.content_length is not None and "chunked" not in upstream.headers.get("Transfer-Encoding", "").lower():
            response.content_length = upstream.content_length
        else:
            response.enable_chunked_encoding()
        await response.prepare(request)
        watching = asyncio.create_task(_close_when_gone(request, upstream))
        try:
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
        except (aiohttp.ClientError, asyncio.TimeoutError):
            if response.content_length is not None or request.transport is None:
                _abort(request)  # a body cut short must not look complete
                return response
        except ConnectionResetError:
            return response  # the client went away
        finally:
            watching.cancel()
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response


def _proxied_path(path: str) -> tuple[str, str] | None:
    """(group, version) of ``/apis/<group>/<version>[/...]`` and of its OpenAPI document
    ``/openapi/v3/apis/<group>/<version>``; None for anything else."""
    if path.startswith("/apis/"):
        parts = path.split("/", 4)
    elif path.startswith("/openapi/v3/apis/"):
        parts = path[len("/openapi/v3"):].split("/", 4)
        if len(parts) > 4:
            return None
    else:
        return None
    if len(parts) < 4 or not parts[2] or not parts[3]:
        return None
    return parts[2], parts[3]


def _to_itself(path: str, location: str) -> bool:
    """An OpenAPI document's redirect to the same document (its current hash) on this server."""
    target = urlsplit(location)
    return path.startswith("/openapi/v3/") and not target.scheme and not target.netloc and target.path == path


async def _close_when_gone(request: web.Request, upstream: aiohttp.ClientResponse, every: float = 0.25) -> None:
    """aiohttp does not cancel a handler whose client disconnects; watch for it, and close the
    backend's connection then, which ends the relay loop."""
    while True:
        await asyncio.sleep(every)
        transport = request.transport
        if transport is None or transport.is_closing():
            upstream.close()
            return


def _abort(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()

