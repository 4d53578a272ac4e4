"""Serving a :class:`~kplane.core.registry.rest.Connecter`: aiohttp's request adapted to the
registry's :class:`~kplane.core.registry.rest.Exchange`, so connecters never import aiohttp.
A connecter may accept a WebSocket upgrade instead (``pods/exec`` and the other streaming
subresources): aiohttp's WebSocket, bounded to :data:`MAX_MESSAGE` bytes a message, then carries
the exchange (:class:`AioWebSocket`).

Until the connecter starts its answer, an APIError it raises is the request's Status, as for any
other verb; after, the status line is sent and a failure can only end the stream (logged: an
APIError as a warning, anything else with its traceback). A
client that goes away ends it quietly: the connecter's next write raises ConnectionResetError.
"""

from __future__ import annotations

import contextlib
import logging
import re
from typing import Any

from aiohttp import WSMsgType, web

from kplane.core.meta import errors
from kplane.core.registry.rest import Connecter
from kplane.core.registry.strategy import RequestContext
from kplane.core.runtime.gvk import GroupVersionKind
from kplane.core.server import negotiation

log = logging.getLogger(__name__)

#: The largest WebSocket message a client may send (kubectl's stdin chunks are 32 KiB at most).
MAX_MESSAGE = 1 << 20
#: What a header value may not hold (as HTTP/1.1's field-value: no CR, LF or other controls).
_CONTROL = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
#: What a header name may be (HTTP/1.1's token).
_TOKEN = re.compile(r"[!#$%&'*+.^_`|~0-9A-Za-z-]+")


#: The connect options' fields that are lists, booleans or integers (the rest are strings),
#: as PodExecOptions, PodAttachOptions, PodPortForwardOptions and the proxies' options have them.
_LISTS = frozenset({"command", "ports"})
_BOOLS = frozenset({"stdin", "stdout", "stderr", "tty"})
_INTS = frozenset({"ports"})


def options_object(kind: GroupVersionKind, request: web.Request, subpath: str) -> dict[str, Any]:
    """A connect's options as the wire object admission sees (``PodExecOptions`` from the query,
    a proxy's ``path`` from its subpath)."""
    out: dict[str, Any] = {"kind": kind.kind, "apiVersion": kind.api_version}
    for key in dict.fromkeys(request.query):
        values = request.query.getall(key)
        if key in _INTS:
            out[key] = [int(v) for v in values if v.isdigit()]
        elif key in _LISTS:
            out[key] = list(values)
        elif key in _BOOLS:
            out[key] = values[-1].lower() in ("true", "1")
        else:
            out[key] = values[-1]
    if subpath or kind.kind.endswith("ProxyOptions"):
        out["path"] = "/" + subpath.lstrip("/") if subpath else ""
    return out


class HTTPExchange:
    """An :class:`~kplane.core.registry.rest.Exchange` over one aiohttp request."""

    def __init__(self, request: web.Request, path: str = "") -> None:
        self.request = request
        self.method = request.method
        self.path = path
        self.query_string = request.rel_url.raw_query_string
        self.response: web.StreamResponse | None = None  # set once its status line is sent
        self._body: bytes | None = None

    def query(self, name: str) -> list[str]:
        return self.request.query.getall(name, [])

    async def read(self) -> bytes:
        if self._body is None:  # the stream is read once; every call answers the whole body
            self._body = await negotiation.read_body(self.request)
        return self._body

    async def start(self, content_type: str = "text/plain", status: int = 200,
                    headers: dict[str, str] | None = None) -> None:
        if self.response is not None:
            raise RuntimeError("the answer has started already")
        if not 100 <= status <= 599:
            raise ValueError(f"the status {status} is not an HTTP status")
        if _CONTROL.search(content_type):
            raise ValueError(f"the content type {content_type!r} has control characters")
        if any(_CONTROL.search(f"{name}{value}") or not _TOKEN.fullmatch(name) for name, value in (headers or {}).items()):
            raise ValueError("a header of the answer is malformed or has control characters")
        response = web.StreamResponse(status=status, headers={"Content-Type": content_type, "Cache-Control": "no-cache"})
        response.headers.update(headers or {})
        response.enable_chunked_encoding()
        await response.prepare(self.request)
        self.response = response  # only now: a failed prepare is still answered as a Status

    async def write(self, chunk: bytes) -> None:
        if self.response is None:
            await self.start()
        assert self.response is not None
        if self.method != "HEAD":  # a HEAD answer has no body: the connection's next answer would follow it
            await self.response.write(chunk)

    def header(self, name: str) -> str | None:
        return self.request.headers.get(name)

    def client_gone(self) -> bool:
        transport = self.request.transport
        return transport is None or transport.is_closing()

    def websocket_protocols(self) -> list[str] | None:
        headers = self.request.headers
        if headers.get("Upgrade", "").lower() != "websocket" or "upgrade" not in headers.get("Connection", "").lower():
            return None
        offered = ",".join(headers.getall("Sec-WebSocket-Protocol", []))
        return [p.strip() for p in offered.split(",") if p.strip()]

    async def websocket(self, protocol: str | None) -> AioWebSocket:
        if self.response is not None:
            raise RuntimeError("the answer has started already")
        offered = self.websocket_protocols()
        if offered is None:
            raise ValueError("the request asks for no WebSocket")
        if protocol is not None and protocol not in offered:
            raise ValueError(f"the client did not offer the subprotocol {protocol!r}")
        ws = web.WebSocketResponse(protocols=(protocol,) if protocol else (), max_msg_size=MAX_MESSAGE, autoping=True)
        await ws.prepare(self.request)
        self.response = ws
        return AioWebSocket(ws)


class AioWebSocket:
    """A :class:`~kplane.core.registry.rest.WebSocket` over aiohttp's."""

    def __init__(self, ws: web.WebSocketResponse) -> None:
        self.ws = ws
        self.protocol = ws.ws_protocol

    async def send(self, data: bytes) -> None:
        if self.ws.closed:
            raise ConnectionResetError("the WebSocket is closed")
        await self.ws.send_bytes(data)

    async def send_text(self, data: str) -> None:
        if self.ws.closed:
            raise ConnectionResetError("the WebSocket is closed")
        await self.ws.send_str(data)

    async def receive(self) -> bytes | None:
        if self.ws.closed:
            return None
        message = await self.ws.receive()
        if message.type == WSMsgType.BINARY:
            return bytes(message.data)
        if message.type == WSMsgType.TEXT:
            return str(message.data).encode()
        return None  # closing, closed or an error: the conversation is over

    async def close(self, code: int = 1000, reason: str = "") -> None:
        await self.ws.close(code=code, message=reason.encode()[:123])


async def connect(request: web.Request, ctx: RequestContext, served: Connecter, path: str = "") -> web.StreamResponse:
    """Hand the request to ``served`` (with ``path``, what the URL names below the subresource)
    and send what it streams back, until it returns."""
    exchange = HTTPExchange(request, path)
    try:
        await served.connect(ctx, ctx.name, exchange)
    except ConnectionResetError:
        pass  # the client went away; nothing more to say to it
    except errors.APIError as err:
        if exchange.response is None:
            raise  # still a Status
        log.warning("%s %s ended its started answer with %s: %s", request.method, request.path, err.code, err)
    except Exception:
        if exchange.response is None:
            raise  # a logged 500
        log.exception("%s %s failed while streaming its answer", request.method, request.path)
    if isinstance(exchange.response, web.WebSocketResponse):
        await exchange.response.close()
        return exchange.response
    with contextlib.suppress(ConnectionResetError):
        if exchange.response is None:
            await exchange.start()  # it wrote nothing: an empty answer
        assert exchange.response is not None
        await exchange.response.write_eof()
    assert exchange.response is not None
    return exchange.response
