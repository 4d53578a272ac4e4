"""Serving a :class:`~kplane.core.registry.rest.Connecter`: aiohttp's request adapted to the
registry's :class:`~kplane.core.registry.rest.Exchange`, so connecters never import aiohttp.

Until the connecter starts its answer, an APIError it raises is the request's Status, as for any
other verb; after, the status line is sent and a failure can only end the stream (logged). A
client that goes away ends it quietly: the connecter's next write raises ConnectionResetError.
"""

from __future__ import annotations

import contextlib
import logging

from aiohttp import web

from kplane.core.registry.rest import Connecter
from kplane.core.registry.strategy import RequestContext
from kplane.core.server import negotiation

log = logging.getLogger(__name__)


class HTTPExchange:
    """An :class:`~kplane.core.registry.rest.Exchange` over one aiohttp request."""

    def __init__(self, request: web.Request) -> None:
        self.request = request
        self.method = request.method
        self.response: web.StreamResponse | None = None

    def query(self, name: str) -> list[str]:
        return self.request.query.getall(name, [])

    async def read(self) -> bytes:
        return await negotiation.read_body(self.request)

    async def start(self, content_type: str = "text/plain", status: int = 200) -> None:
        if self.response is not None:
            raise RuntimeError("the answer has started already")
        self.response = web.StreamResponse(status=status, headers={"Content-Type": content_type, "Cache-Control": "no-cache"})
        self.response.enable_chunked_encoding()
        await self.response.prepare(self.request)

    async def write(self, chunk: bytes) -> None:
        if self.response is None:
            await self.start()
        assert self.response is not None
        await self.response.write(chunk)


async def connect(request: web.Request, ctx: RequestContext, served: Connecter) -> web.StreamResponse:
    """Hand the request to ``served`` and send what it streams back, until it returns."""
    exchange = HTTPExchange(request)
    try:
        await served.connect(ctx, ctx.name, exchange)
    except ConnectionResetError:
        pass  # the client went away; nothing more to say to it
    except Exception:
        if exchange.response is None:
            raise  # still a Status (an APIError), or a logged 500
        log.exception("%s %s failed while streaming its answer", request.method, request.path)
    with contextlib.suppress(ConnectionResetError):
        if exchange.response is None:
            await exchange.start()  # it wrote nothing: an empty answer
        assert exchange.response is not None
        await exchange.response.write_eof()
    assert exchange.response is not None
    return exchange.response
