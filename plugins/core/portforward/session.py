"""A SPDY port-forward session, as the kubelet serves one (``portforward/httpstream.go``).

The client opens two streams per forwarded connection, told apart by their headers: ``streamtype``
``error`` then ``data``, the same ``port`` and ``requestid``. Once both are there the port is
opened; the data stream then carries the connection's bytes each way, and the error stream, which
the client never writes to, carries a message if the port cannot be forwarded. The server ends
both (FIN) when the endpoint closes its side or the client has closed the data stream. Streams
with missing or bad headers are reset, as kube's stream handler rejects them; PINGs are answered.

The session is fed the peer's bytes as they come and answers through ``send`` with whole frames;
it has no task of its own, since the endpoint answers at once.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field

from kplane.plugins.core.containers.endpoint import Connection
from kplane.plugins.core.portforward import spdy
from kplane.plugins.core.portforward.forward import ForwardError, chunks, parse_port

log = logging.getLogger(__name__)

#: Open streams a session may have at once, and data buffered for a pair not yet complete.
MAX_STREAMS = 256
MAX_PENDING = 1 << 20

#: Opens a port of the pod: a connection, or ForwardError.
Opener = Callable[[int], Awaitable[Connection]]
Sender = Callable[[bytes], Awaitable[None]]


@dataclass(slots=True)
class Pair:
    """The two streams of one forwarded connection."""

    request_id: str
    port: int
    error: int = 0  # stream ids, 0 until the client opens them
    data: int = 0
    connection: Connection | None = None
    pending: bytearray = field(default_factory=bytearray)  # data sent before the pair was complete
    client_done: bool = False  # the client has closed the data stream
    ended: bool = False


class Session:
    """One SPDY connection's port-forward streams."""

    def __init__(self, send: Sender, opener: Opener) -> None:
        self._send, self._open = send, opener
        self.codec = spdy.HeaderCodec()
        self.reader = spdy.FrameReader(self.codec)
        self.streams: dict[int, Pair] = {}  # stream id -> its pair
        self.pairs: dict[str, Pair] = {}
        self.last_stream = 0
        self.over = False  # GOAWAY sent or received: the caller closes the connection
        self._out: list[bytes] = []

    async def feed(self, data: bytes) -> None:
        """Handle the peer's ``data`` and send what it calls for."""
        try:
            for frame in self.reader.feed(data):
                await self._handle(frame)
        except spdy.ProtocolError as err:
            log.info("a port-forward client broke SPDY: %s", err)
            self._frame(spdy.Frame(spdy.GOAWAY, stream_id=self.last_stream, status=spdy.GOAWAY_PROTOCOL_ERROR))
            self.over = True
        await self.flush()

    async def flush(self) -> None:
        out, self._out = self._out, []
        for chunk in out:
            await self._send(chunk)

    def _frame(self, frame: spdy.Frame) -> None:
        self._out.append(spdy.encode(frame, self.codec))

    def _reset(self, stream_id: int, status: int) -> None:
        self._frame(spdy.Frame(spdy.RST_STREAM, stream_id=stream_id, status=status))

    async def _handle(self, frame: spdy.Frame) -> None:
        if frame.kind == 0:
            await self._data(frame)
        elif frame.kind == spdy.SYN_STREAM:
            await self._syn_stream(frame)
        elif frame.kind == spdy.RST_STREAM:
            pair = self.streams.get(frame.stream_id)
            if pair is not None:
                self._end(pair, reply=False)
        elif frame.kind == spdy.PING:
            if frame.value % 2:  # the client's (odd) pings are echoed; this server sends none
                self._frame(frame)
        elif frame.kind == spdy.GOAWAY:
            self.over = True
        # SYN_REPLY, HEADERS, SETTINGS and WINDOW_UPDATE ask nothing of a port-forward server.

    async def _syn_stream(self, frame: spdy.Frame) -> None:
        sid = frame.stream_id
        if sid % 2 == 0 or sid <= self.last_stream:
            raise spdy.ProtocolError(f"stream {sid} is not a new client stream")
        self.last_stream = sid
        if len(self.streams) >= MAX_STREAMS:
            self._reset(sid, spdy.REFUSED_STREAM)
            return
        headers = {name: values[0] for name, values in frame.headers.items()}
        kind = headers.get("streamtype", "")
        try:
            port = parse_port(headers.get("port", ""))
        except ValueError:
            port = 0
        request_id = headers.get("requestid") or str(sid if kind == "error" else sid - 2)  # kube's guess for old clients
        pair = self.pairs.get(request_id)
        if not port or kind not in ("error", "data") or (pair is not None and (getattr(pair, kind) or pair.port != port)):
            self._reset(sid, spdy.CANCEL)  # kube's handler rejects it: missing or bad headers, or a stream twice
            return
        if pair is None:
            if len(self.pairs) >= MAX_STREAMS // 2:
                self._reset(sid, spdy.REFUSED_STREAM)
                return
            pair = self.pairs[request_id] = Pair(request_id, port)
        setattr(pair, kind, sid)
        self.streams[sid] = pair
        self._frame(spdy.Frame(spdy.SYN_REPLY, stream_id=sid))
        if pair.error and pair.data:
            await self._start(pair)

    async def _start(self, pair: Pair) -> None:
        try:
            pair.connection = await self._open(pair.port)
        except ForwardError as err:
            self._frame(spdy.Frame(0, stream_id=pair.error, data=str(err).encode()))
            self._end(pair)
            return
        pending, pair.pending = bytes(pair.pending), bytearray()
        self._answer(pair, pair.connection.receive(pending) if pending else b"")
        if pair.client_done and not pair.ended:
            self._answer(pair, pair.connection.finish())
            self._end(pair)

    async def _data(self, frame: spdy.Frame) -> None:
        pair = self.streams.get(frame.stream_id)
        if pair is None or pair.ended or frame.stream_id != pair.data:
            return  # the error stream's FIN, or a stream already gone: nothing to do
        if pair.connection is None:
            if len(pair.pending) + len(frame.data) > MAX_PENDING:
                self._reset(frame.stream_id, spdy.FLOW_CONTROL_ERROR)
                self._end(pair, reply=False)
                return
            pair.pending += frame.data
            pair.client_done = frame.fin
            return
        self._answer(pair, pair.connection.receive(frame.data) if frame.data else b"")
        if frame.fin and not pair.ended:
            self._answer(pair, pair.connection.finish())
            self._end(pair)

    def _answer(self, pair: Pair, data: bytes) -> None:
        for chunk in chunks(data):
            self._frame(spdy.Frame(0, stream_id=pair.data, data=chunk))
        if pair.connection is not None and pair.connection.closed and not pair.ended:
            self._end(pair)

    def _end(self, pair: Pair, reply: bool = True) -> None:
        """The forwarded connection is over: both streams end (FIN) and are forgotten."""
        pair.ended = True
        for sid in (pair.data, pair.error):
            if sid and reply:
                self._frame(spdy.Frame(0, stream_id=sid, flags=spdy.FLAG_FIN))
            self.streams.pop(sid, None)
        self.pairs.pop(pair.request_id, None)
