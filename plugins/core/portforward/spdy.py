"""SPDY/3.1 framing, as kubectl's port-forward speaks it (moby/spdystream, Go's old spdy package).

No well-kept Python SPDY library exists, so the frames are here: an 8-byte header, then a
control frame's fields or a data frame's bytes. :class:`FrameReader` takes the byte stream in
pieces of any size (a WebSocket tunnel cuts it wherever the client's writes fell) and hands out
whole frames; :func:`encode` makes the bytes of one. Header blocks are compressed with one zlib
stream per direction for the whole connection, primed with SPDY/3's dictionary and flushed
after each block (:class:`HeaderCodec`). Everything read is bounded: a frame's length, a header
block's inflated size, the number of headers.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

VERSION = 3

# Control frame types.
SYN_STREAM = 1
SYN_REPLY = 2
RST_STREAM = 3
SETTINGS = 4
PING = 6
GOAWAY = 7
HEADERS = 8
WINDOW_UPDATE = 9

FLAG_FIN = 0x01
FLAG_UNIDIRECTIONAL = 0x02

# RST_STREAM status codes.
PROTOCOL_ERROR = 1
INVALID_STREAM = 2
REFUSED_STREAM = 3
CANCEL = 5
FLOW_CONTROL_ERROR = 7
FRAME_TOO_LARGE = 11

# GOAWAY status codes.
GOAWAY_OK = 0
GOAWAY_PROTOCOL_ERROR = 1

#: The largest frame accepted (header excluded): kubectl writes 32 KiB at most.
MAX_FRAME = 1 << 20
#: The most a header block may inflate to, and the most headers it may name.
MAX_HEADER_BYTES = 64 << 10
MAX_HEADERS = 100

_WORDS = (
    "options head post put delete trace accept accept-charset accept-encoding accept-language "
    "accept-ranges age allow authorization cache-control connection content-base content-encoding "
    "content-language content-length content-location content-md5 content-range content-type date "
    "etag expect expires from host if-match if-modified-since if-none-match if-range "
    "if-unmodified-since last-modified location max-forwards pragma proxy-authenticate "
    "proxy-authorization range referer retry-after server te trailer transfer-encoding upgrade "
    "user-agent vary via warning www-authenticate method get status 200_OK version HTTP/1.1 url "
    "public set-cookie keep-alive origin"
)
_TAIL = (
    "100101201202205206300302303304305306307402405406407408409410411412413414415416417502504505"
    "203 Non-Authoritative Information204 No Content301 Moved Permanently400 Bad Request401 "
    "Unauthorized403 Forbidden404 Not Found500 Internal Server Error501 Not Implemented503 Service "
    "UnavailableJan Feb Mar Apr May Jun Jul Aug Sept Oct Nov Dec 00:00:00 Mon, Tue, Wed, Thu, Fri, "
    "Sat, Sun, GMTchunked,text/html,image/png,image/jpg,image/gif,application/xml,"
    "application/xhtml+xml,text/plain,text/javascript,publicprivatemax-age=gzip,deflate,sdch"
    "charset=utf-8charset=iso-8859-1,utf-,*,enq=0."
)
#: SPDY/3's header compression dictionary (draft 3, section 2.6.10.1): each word with its
#: 4-byte length, then the status lines, dates and media types as they are (1423 bytes).
DICTIONARY = b"".join(struct.pack(">I", len(w)) + w.encode() for w in (w.replace("_", " ") for w in _WORDS.split())) + _TAIL.encode()
assert len(DICTIONARY) == 1423


class ProtocolError(Exception):
    """The peer broke SPDY: the session answers with GOAWAY and ends."""


@dataclass(slots=True)
class Frame:
    """One frame. A data frame has ``kind`` 0 and its ``data``; a control frame its type and the
    fields that type has (``stream_id`` of the stream frames, ``headers`` of SYN_STREAM,
    SYN_REPLY and HEADERS, ``status`` of RST_STREAM and GOAWAY, ``value`` of PING's id and
    WINDOW_UPDATE's delta)."""

    kind: int
    stream_id: int = 0
    flags: int = 0
    data: bytes = b""
    headers: dict[str, list[str]] = field(default_factory=dict)
    status: int = 0
    value: int = 0

    @property
    def fin(self) -> bool:
        return bool(self.flags & FLAG_FIN)


class HeaderCodec:
    """The two zlib streams of one connection's header blocks."""

    def __init__(self) -> None:
        self._inflate = zlib.decompressobj(zdict=DICTIONARY)
        self._deflate = zlib.compressobj(zlib.Z_BEST_COMPRESSION, zlib.DEFLATED, 15, 8, zlib.Z_DEFAULT_STRATEGY, DICTIONARY)

    def decode(self, block: bytes) -> dict[str, list[str]]:
        """The headers of a block: lowercase names, each with its NUL-separated values."""
        try:
            raw = self._inflate.decompress(block, MAX_HEADER_BYTES + 1)
        except zlib.error as err:
            raise ProtocolError(f"a header block does not inflate: {err}") from None
        if len(raw) > MAX_HEADER_BYTES or self._inflate.unconsumed_tail:
            raise ProtocolError(f"a header block inflates past {MAX_HEADER_BYTES} bytes")
        reader = _Fields(raw)
        count = reader.u32()
        if count > MAX_HEADERS:
            raise ProtocolError(f"a header block names {count} headers, more than {MAX_HEADERS}")
        headers: dict[str, list[str]] = {}
        for _ in range(count):
            name, value = reader.string(), reader.string()
            if not name or name != name.lower():
                raise ProtocolError(f"the header name {name!r} is empty or not lowercase")
            if name in headers:
                raise ProtocolError(f"the header {name!r} is sent twice")
            headers[name] = value.split("\x00")
        if not reader.done():
            raise ProtocolError("a header block has bytes after its headers")
        return headers

    def encode(self, headers: dict[str, list[str]]) -> bytes:
        raw = [struct.pack(">I", len(headers))]
        for name, values in headers.items():
            for text in (name.lower(), "\x00".join(values)):
                data = text.encode()
                raw.append(struct.pack(">I", len(data)) + data)
        return self._deflate.compress(b"".join(raw)) + self._deflate.flush(zlib.Z_SYNC_FLUSH)


class _Fields:
    """Big-endian fields of a byte string, read in turn; ProtocolError when they run out."""

    def __init__(self, data: bytes) -> None:
        self.data, self.at = data, 0

    def take(self, size: int) -> bytes:
        if self.at + size > len(self.data):
            raise ProtocolError("a frame ends in the middle of a field")
        chunk = self.data[self.at : self.at + size]
        self.at += size
        return chunk

    def u32(self) -> int:
        return int(struct.unpack(">I", self.take(4))[0])

    def string(self) -> str:
        try:
            return self.take(self.u32()).decode()
        except UnicodeDecodeError:
            raise ProtocolError("a header is not UTF-8") from None

    def rest(self) -> bytes:
        chunk, self.at = self.data[self.at :], len(self.data)
        return chunk

    def done(self) -> bool:
        return self.at == len(self.data)


class FrameReader:
    """Whole frames out of a byte stream fed in pieces."""

    def __init__(self, codec: HeaderCodec) -> None:
        self.codec = codec
        self._buffer = bytearray()

    def feed(self, data: bytes) -> list[Frame]:
        self._buffer += data
        frames = []
        while len(self._buffer) >= 8:
            length = int.from_bytes(self._buffer[5:8], "big")
            if length > MAX_FRAME:
                raise ProtocolError(f"a frame of {length} bytes is larger than {MAX_FRAME}")
            if len(self._buffer) < 8 + length:
                break
            head, body = bytes(self._buffer[:8]), bytes(self._buffer[8 : 8 + length])
            del self._buffer[: 8 + length]
            frames.append(self._frame(head, body))
        return frames

    def _frame(self, head: bytes, body: bytes) -> Frame:
        first, flags = int.from_bytes(head[:4], "big"), head[4]
        if not first & 0x80000000:
            return Frame(0, stream_id=first, flags=flags, data=body)
        version, kind = (first >> 16) & 0x7FFF, first & 0xFFFF
        if version != VERSION:
            raise ProtocolError(f"SPDY version {version} is not 3")
        fields = _Fields(body)
        frame = Frame(kind, flags=flags)
        if kind == SYN_STREAM:
            frame.stream_id = fields.u32() & 0x7FFFFFFF
            fields.take(6)  # associated stream, priority, slot: nothing a port-forward uses
            frame.headers = self.codec.decode(fields.rest())
        elif kind in (SYN_REPLY, HEADERS):
            frame.stream_id = fields.u32() & 0x7FFFFFFF
            frame.headers = self.codec.decode(fields.rest())
        elif kind == RST_STREAM:
            frame.stream_id, frame.status = fields.u32() & 0x7FFFFFFF, fields.u32()
        elif kind == PING:
            frame.value = fields.u32()
        elif kind == GOAWAY:
            frame.stream_id, frame.status = fields.u32() & 0x7FFFFFFF, fields.u32()
        elif kind == WINDOW_UPDATE:
            frame.stream_id, frame.value = fields.u32() & 0x7FFFFFFF, fields.u32() & 0x7FFFFFFF
        # SETTINGS and unknown types carry nothing this server acts on (SPDY says to ignore them).
        return frame


def encode(frame: Frame, codec: HeaderCodec) -> bytes:
    """The bytes of ``frame`` (a data frame's payload must fit :data:`MAX_FRAME`)."""
    if frame.kind == 0:
        return struct.pack(">IB", frame.stream_id & 0x7FFFFFFF, frame.flags) + len(frame.data).to_bytes(3, "big") + frame.data
    if frame.kind == SYN_STREAM:
        body = struct.pack(">IIBB", frame.stream_id, 0, 0, 0) + codec.encode(frame.headers)
    elif frame.kind in (SYN_REPLY, HEADERS):
        body = struct.pack(">I", frame.stream_id) + codec.encode(frame.headers)
    elif frame.kind in (RST_STREAM, GOAWAY):
        body = struct.pack(">II", frame.stream_id, frame.status)
    elif frame.kind == PING:
        body = struct.pack(">I", frame.value)
    elif frame.kind == WINDOW_UPDATE:
        body = struct.pack(">II", frame.stream_id, frame.value)
    elif frame.kind == SETTINGS:
        body = struct.pack(">I", 0)
    else:
        raise ValueError(f"no frame of type {frame.kind} is sent")
    return struct.pack(">HHB", 0x8000 | VERSION, frame.kind, frame.flags) + len(body).to_bytes(3, "big") + body
