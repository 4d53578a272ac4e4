"""A watch response written from the watch cache's fan-out, not from a task per event.

A caught-up watch is the sink of its event queue (``EventQueue.deliver``): the fan-out hands it
each event, already filtered, and it adds the event's line (encoded once for every watcher of
that event) to what its socket gets next. Once per loop turn the Flusher writes every response
with lines waiting, as one HTTP chunk each. The response's task wakes only for what the sink
refuses: a socket with more than ``SOCKET_LIMIT`` bytes unsent (the events queue, within the
watch's capacity, and the task writes them and waits for the socket), a closed connection, a
line that failed to encode (the task meets the error again and answers it).

Why the chunk framing is written here: aiohttp's ``StreamResponse.write`` is a coroutine, and
a coroutine per watcher per event is the cost this removes. The headers went out at
``prepare()``; every other write goes through the response after what the sink took, and
``write_eof`` ends the chunks, so the body stays one well-formed chunked stream.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Hashable

from aiohttp import web

from kplane.core.metrics.families import Tally
from kplane.core.registry.store import WatchEvent

#: Unsent bytes on a socket past which the sink refuses events (aiohttp's own drain threshold).
SOCKET_LIMIT = 64 * 1024


class Flusher:
    """Writes, once per loop turn, every watch response that took lines in it."""

    __slots__ = ("_waiting",)

    def __init__(self) -> None:
        self._waiting: list[WatchStream] = []

    def want(self, stream: WatchStream) -> None:
        if not self._waiting:
            asyncio.get_running_loop().call_soon(self._flush)
        self._waiting.append(stream)

    def _flush(self) -> None:
        waiting, self._waiting = self._waiting, []
        now = asyncio.get_running_loop().time()
        for stream in waiting:
            stream.flush(now)


class WatchStream:
    """The body of one watch response: lines the sink took wait for the Flusher; the task's own
    writes (what the sink refused, bookmarks, an error) go out after them."""

    __slots__ = ("_response", "_transport", "_flusher", "_line", "_tally", "_counted", "_lines",
                 "_unsent", "_closed", "last_rv", "quiet_since")

    def __init__(self, response: web.StreamResponse, transport: asyncio.BaseTransport, flusher: Flusher,
                 line: Callable[[WatchEvent], bytes], *, last_rv: int | str,
                 tally: Tally | None, counted: tuple[Hashable, ...]) -> None:
        """``line`` encodes one event; ``tally`` (when metrics are on) counts the events sent
        under ``counted``; ``last_rv`` is the resourceVersion the client is up to date with.
        Thousands of idle watches each hold one: slotted, with no list until a line waits."""
        assert isinstance(transport, asyncio.WriteTransport)
        self._response = response
        self._transport = transport
        self._flusher = flusher
        self._line = line
        self._tally = tally
        self._counted = counted
        self._lines: list[bytes] | None = None  # what the sink took, until the Flusher writes it
        self._unsent = 0  # bytes of ``_lines``
        self._closed = False
        self.last_rv = last_rv  # of the newest event written: what a bookmark says
        self.quiet_since = asyncio.get_running_loop().time()  # when the newest write went out

    def offer(self, event: WatchEvent) -> bool:
        """The sink: take ``event`` if the socket has room for it. Never raises (it runs in the
        fan-out, for every watcher)."""
        transport = self._transport
        if self._closed or transport.is_closing() or transport.get_write_buffer_size() + self._unsent > SOCKET_LIMIT:
            return False
        try:
            line = self._line(event)
        except Exception:  # the task encodes it again, and answers the error
            return False
        if self._lines is None:
            self._lines = [line]
            self._flusher.want(self)
        else:
            self._lines.append(line)
        self._unsent += len(line)
        self.last_rv = event.obj.revision
        return True

    def flush(self, now: float) -> None:
        """Write what the sink took as one chunk (dropped if the client has gone)."""
        lines = self._lines
        if lines is None:
            return
        data = b"".join(lines)
        self._lines, self._unsent = None, 0
        if not self._transport.is_closing():
            self._transport.write(b"%x\r\n%b\r\n" % (len(data), data))
        self.quiet_since = now
        if self._tally is not None:
            self._tally.add(self._counted, len(lines))

    async def write(self, events: list[WatchEvent]) -> None:
        """The task's way for events: after what the sink took, waiting for a full socket."""
        await self.write_line(b"".join([self._line(event) for event in events]))
        self.last_rv = events[-1].obj.revision
        if self._tally is not None:
            self._tally.add(self._counted, len(events))

    async def write_line(self, data: bytes) -> None:
        """Any other write (a bookmark, an error), after what the sink took."""
        loop = asyncio.get_running_loop()
        self.flush(loop.time())
        await self._response.write(data)
        self.quiet_since = loop.time()

    def close(self) -> None:
        """Write what the sink took and take no more: the stream's end follows."""
        self.flush(asyncio.get_running_loop().time())
        self._closed = True
