"""Connection-level protections aiohttp lacks: a header-read deadline, a body-read deadline and a
cap on open connections, as Go's ``http.Server`` gives kube-apiserver ``ReadHeaderTimeout`` and
the operating system's file limit bounds it.

aiohttp's ``RequestHandler`` only has ``keepalive_timeout`` (an idle connection is closed), so a
client that sends its headers a byte at a time, or a body that never ends, holds a connection and
a file descriptor for as long as it likes. :class:`GuardedRequestHandler` adds the deadlines:

- the headers of a request must be complete ``header_timeout`` seconds after its first byte
  arrived, else the connection is closed without an answer (Go does the same);
- the body must be complete ``body_timeout`` seconds after the headers, else reading it fails
  with :class:`BodyReadTimeout` (answered 408 by :mod:`kplane.core.server.filters`) and the connection
  is closed after the answer.

Past ``max_connections`` open TCP connections, ``probe_connections`` more are accepted for health
probes and the server's own loopback clients only (:mod:`kplane.core.server.filters` refuses anything
else on them). When those are taken too, a new connection replaces the oldest of them that is not
being served (idle, or still sending its headers: what a flood of slow clients leaves there), or
is closed at once if there is none; so the process keeps descriptors for what it serves instead of
failing every ``accept()``, and a probe gets in however many clients hold connections open.
"""

from __future__ import annotations

import asyncio
import resource
from dataclasses import dataclass, field
from typing import Any

from aiohttp import web
from aiohttp.http_exceptions import HttpProcessingError, LineTooLong
from aiohttp.web_protocol import RequestHandler
from aiohttp.web_request import BaseRequest

from kplane.core.meta import errors
from kplane.core.server.negotiation import encode_json

_FILE_HEADROOM = 128  # descriptors kept for storage, the loopback clients and the aggregator's proxy


def default_max_connections() -> int:
    """Comfortably below the process' open-file limit (``ulimit -n``), at most 4096."""
    soft, _ = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft == resource.RLIM_INFINITY:
        return 4096
    return max(16, min(4096, soft - _FILE_HEADROOM - 64))


@dataclass
class ConnectionLimits:
    header_timeout: float = 32.0  # kube-apiserver's ReadHeaderTimeout
    body_timeout: float = 60.0
    idle_timeout: float = 90.0  # kube-apiserver's IdleTimeout: a keep-alive connection with no request
    # A request line may be long (label selectors with many values); Go allows 1 MiB of headers.
    max_request_line: int = 64 * 1024
    max_connections: int = field(default_factory=default_max_connections)  # 0: no cap
    probe_connections: int = 64  # beyond the cap, for health probes and loopback clients only


class BodyReadTimeout(TimeoutError):
    """The request body did not arrive within the body-read deadline."""

    def __init__(self, seconds: float) -> None:
        super().__init__(f"the request body was not received within {seconds:g}s")


class GuardedRequestHandler(RequestHandler):
    """aiohttp's per-connection protocol with header and body read deadlines and the cap's
    bookkeeping. It reads a few of RequestHandler's private fields (the queue of parsed
    messages, the request being handled); tests/test_protections.py pins the behaviour.
    Slotted as RequestHandler is: a server holds one per open connection (each watch)."""

    __slots__ = ("_limits", "_server", "_counted", "_refused", "_header_timer", "reserved")

    def __init__(self, manager: GuardedServer, *, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(manager, **kwargs)
        self._limits = limits
        self._server = manager
        self._counted = False  # a TCP connection counted against the cap
        self._refused = False
        self._header_timer: asyncio.TimerHandle | None = None
        # Past the cap: only health probes and loopback clients may use this connection.
        self.reserved = False

    @property
    def busy(self) -> bool:
        """A request of this connection is being handled (or waits to be)."""
        return self._current_request is not None or bool(self._messages)

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        server, cap = self._server, self._limits.max_connections
        if cap and isinstance(transport.get_extra_info("peername"), tuple):  # TCP, not a Unix socket
            if server.open_connections >= cap + self._limits.probe_connections and not server.evict_idle_reserved():
                self._refused = True
                transport.close()  # refused; asyncio still calls connection_lost
                return
            if server.open_connections >= cap:
                self.reserved = True
                server.reserve[self] = None
            server.open_connections += 1
            self._counted = True
        super().connection_made(transport)

    def handle_error(self, request: BaseRequest, status: int = 500, exc: BaseException | None = None,
                     message: str | None = None) -> web.StreamResponse:
        """What aiohttp answers by itself (a request it cannot parse, a line too long) as a
        400 Status: aiohttp's own text quotes the raw bytes it read."""
        super().handle_error(request, status, exc, message)  # logs it; raises if an answer was begun
        if isinstance(exc, LineTooLong):
            why = (f"the request line may be at most {self._limits.max_request_line} bytes long, "
                   "and each header field at most 8190")
        else:
            why = "the request is not valid HTTP/1.1"
        error = errors.bad_request(why) if status < 500 else errors.internal_error("the request could not be handled")
        response = web.Response(status=error.code, body=encode_json(error.status()), content_type="application/json")
        response.force_close()
        return response

    def log_exception(self, *args: Any, **kw: Any) -> None:
        """A request aiohttp could not parse is the client's doing: one line, not a traceback
        (a hostile client must not fill the log with them); anything else as aiohttp logs it."""
        exc = kw.get("exc_info")
        if isinstance(exc, HttpProcessingError):
            self.logger.info("refused a malformed request (%s): %s", args[1] if len(args) > 1 else "?", exc.message)
            return
        super().log_exception(*args, **kw)

    def exempt(self) -> None:
        """This connection carries the server's own loopback traffic: it no longer counts
        against the cap (nor takes a place in the reserve)."""
        self._uncount()

    def _uncount(self) -> None:
        if self._counted:
            self._server.open_connections -= 1
            self._counted = False
        self._server.reserve.pop(self, None)
        self.reserved = False

    def connection_lost(self, exc: BaseException | None) -> None:
        if self._refused:
            return
        self._uncount()
        self._cancel_header_timer()
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        between_requests = not self.busy
        parsed = self._request_count
        super().data_received(data)
        if self._request_count != parsed:  # headers complete: the body's deadline starts
            self._cancel_header_timer()
            for _, payload in list(self._messages)[parsed - self._request_count:]:
                self._watch_body(payload)
        elif between_requests and self._header_timer is None and data:
            self._header_timer = self._loop.call_later(self._limits.header_timeout, self._headers_late, parsed)

    def _headers_late(self, parsed: int) -> None:
        self._header_timer = None
        if self._request_count == parsed and not self.busy:  # still no complete header
            self.force_close()

    def _cancel_header_timer(self) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None

    def _watch_body(self, payload: Any) -> None:
        if payload.is_eof():
            return
        timeout = self._limits.body_timeout

        def late() -> None:
            if not payload.is_eof():
                payload.set_exception(BodyReadTimeout(timeout))
                self.close()  # the rest of the body is not worth waiting for: close after the answer

        timer = self._loop.call_later(timeout, late)
        payload.on_eof(timer.cancel)


class GuardedServer(web.Server):
    """aiohttp's protocol factory, making :class:`GuardedRequestHandler` connections."""

    def __init__(self, *args: Any, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(*args, keepalive_timeout=limits.idle_timeout, max_line_size=limits.max_request_line, **kwargs)
        self.limits = limits
        self.open_connections = 0  # TCP connections counted against the cap
        self.reserve: dict[GuardedRequestHandler, None] = {}  # connections past the cap, oldest first

    def __call__(self) -> RequestHandler:
        return GuardedRequestHandler(self, loop=self._loop, limits=self.limits, **self._kwargs)

    def evict_idle_reserved(self) -> bool:
        """Close the oldest connection of the reserve that handles no request (one that idles or
        trickles its headers), so that a full reserve still takes a probe; False if none."""
        for handler in self.reserve:
            if not handler.busy:
                del self.reserve[handler]
                handler.force_close()
                return True
        return False


class GuardedRunner(web.AppRunner):
    """An AppRunner whose server is a :class:`GuardedServer`."""

    def __init__(self, app: web.Application, *, limits: ConnectionLimits, **kwargs: Any) -> None:
        super().__init__(app, **kwargs)
        self._limits = limits

    async def _make_server(self) -> web.Server:
        plain = await super()._make_server()  # the application's start-up, then its request handler
        return GuardedServer(plain.request_handler, request_factory=plain.request_factory,
                             handler_cancellation=plain.handler_cancellation, loop=asyncio.get_running_loop(),
                             limits=self._limits, **self._kwargs)
