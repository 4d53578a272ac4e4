"""LIST responses built and sent piece by piece, so that a flood of large LISTs holds neither the
event loop nor memory.

A LIST of a thousand objects is milliseconds of CPU work on the one event loop, and a body of
megabytes. Built and sent whole like any other response, two thousand of them at once keep every
other request (a GET, ``/readyz``, the controllers' own traffic) waiting behind all of that work
(seconds), and every body and its copies in memory at once. Here instead:

- **Turns.** At most :data:`ENCODERS` LISTs do CPU work (the storage read, encoding a piece) at a
  time; the others wait for a turn while counted in flight, so that beyond the max in-flight
  limit the filter answers 429 at once, as kube-apiserver does, and a request that needs no turn
  waits for a few pieces of others' work at most. Turns go round (the semaphore is fair), so
  in-flight LISTs share the CPU as goroutines would.
- **Pieces.** Items are encoded :data:`PIECE_ITEMS` (at most about :data:`PIECE_BYTES`) per turn;
  each piece is written with backpressure (a slow reader holds its own request and in-flight
  place, not the loop) and then dropped, so a request being sent holds a piece, not its body.
- A body of one piece is answered as before, with a Content-Length; a longer one with chunked
  transfer encoding, as Go's http server sends a body larger than its buffer. The bytes are
  those :func:`negotiation.encode_json` gives for the whole list, either way.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import AsyncIterator, Callable
from typing import Any, TypeVar

import orjson
from aiohttp import web

from kplane.core.server import negotiation

log = logging.getLogger(__name__)

T = TypeVar("T")

ENCODERS = 2  # LISTs doing CPU work at once: more than one, so a storage read overlaps encoding
PIECE_ITEMS = 100
PIECE_BYTES = 256 * 1024


def list_meta(resource_version: str, token: str) -> dict[str, Any]:
    """A list's ``metadata`` (ListMeta): its resourceVersion and continue token, when it has them."""
    meta: dict[str, Any] = {"resourceVersion": resource_version} if resource_version else {}
    if token:
        meta["continue"] = token
    return meta


class ListWriter:
    """The turns of one server's LIST handlers, and the writing of their bodies."""

    def __init__(self, encoders: int = ENCODERS) -> None:
        self._turns = asyncio.Semaphore(encoders)

    @contextlib.asynccontextmanager
    async def turn(self) -> AsyncIterator[None]:
        """``async with writer.turn():`` around a piece of a LIST's CPU work (its storage read).
        The turn is held until the loop has run everyone else once: released at once, the next
        LIST would take it in the same pass of the loop, and they would all run back to back."""
        async with self._turns:
            yield
            await asyncio.sleep(0)

    async def send(self, request: web.Request, status: int, envelope: dict[str, Any], items: list[T],
                   encode: Callable[[T], bytes], content_type: str = negotiation.JSON) -> web.StreamResponse:
        """``envelope`` with ``items`` encoded (``encode`` gives one item's JSON) as its last field,
        which holds ``[]``; YAML when the client prefers it and ``content_type`` is JSON.
        ``items`` is consumed: each piece is dropped once written."""
        head, tail = _split(envelope)
        if content_type == negotiation.JSON and negotiation.wants_yaml(request):
            return await self._yaml(status, head, tail, items, encode)
        first = await self._piece(items, encode)
        if not items:
            return web.Response(status=status, body=head + first + tail, headers={"Content-Type": content_type})
        response = web.StreamResponse(status=status, headers={"Content-Type": content_type})
        response.enable_chunked_encoding()
        await response.prepare(request)
        try:
            await response.write(head + first)
            while items:
                await response.write(b"," + await self._piece(items, encode))
            await response.write_eof(tail)
        except ConnectionError:
            pass  # the client went away; nothing more to say to it
        except Exception:
            # The status line has gone: all that is left is to hang up, leaving the chunked body
            # unterminated, so the client knows it is incomplete (as Go's server does).
            log.exception("%s %s failed while its answer was being sent", request.method, request.path)
            request.protocol.force_close()
        return response

    async def _piece(self, items: list[T], encode: Callable[[T], bytes]) -> bytes:
        """The next items' JSON, comma-separated and escaped as Go escapes, in one turn; they are
        removed from ``items``."""
        async with self.turn():
            parts, size = [], 0
            for item in items:
                if len(parts) == PIECE_ITEMS or size >= PIECE_BYTES:
                    break
                data = encode(item)
                parts.append(data)
                size += len(data)
            del items[: len(parts)]
            piece = negotiation.go_escape(b",".join(parts))
        return piece

    async def _yaml(self, status: int, head: bytes, tail: bytes, items: list[T], encode: Callable[[T], bytes]) -> web.Response:
        """The list as YAML: JSON in pieces as for JSON, then PyYAML (seconds for a large list) in
        a worker thread, so the loop goes on meanwhile."""
        pieces = []
        while items:
            pieces.append(await self._piece(items, encode))
        document = head + b",".join(pieces) + tail
        body = await asyncio.to_thread(negotiation.encode_yaml, orjson.Fragment(document))
        return web.Response(status=status, body=body, content_type=negotiation.YAML)


def _split(envelope: dict[str, Any]) -> tuple[bytes, bytes]:
    """The bytes of ``envelope`` before and after the ``[]`` of its last field."""
    data = negotiation.encode_json(envelope)
    if not data.endswith(b"[]}\n"):
        raise ValueError("the last field of a list envelope must be an empty list")
    return data[:-3], data[-3:]
