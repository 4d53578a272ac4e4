"""The endpoint behind every port of a simulated pod: what ``kubectl port-forward``, the Python
client's ``portforward()`` and the ``pods/proxy`` and ``services/proxy`` routes reach.

Nothing listens on the host. Every port of a Running pod answers (a real container would refuse
a port nothing listens on; a simulated one has no such thing to know):

* a connection whose first bytes are an HTTP/1.x request line gets HTTP answers, one per request
  (keep-alive unless the client asks to close or speaks HTTP/1.0): ``200 OK``, ``text/plain``,
  a body naming the pod, its IP, the port and what was asked for, as :func:`http_answer` writes it;
* anything else is echoed back byte for byte (``nc``, a test's raw socket).

Requests are bounded: a request head of more than :data:`MAX_HEAD` bytes, a body of more than
:data:`MAX_BODY` or a chunked body is answered with a 4xx and the connection closes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

Obj = dict[str, Any]

MAX_HEAD = 16 << 10
MAX_BODY = 1 << 20
#: How an HTTP request line starts: a method token and a space.
_METHOD = re.compile(rb"[A-Z]{1,16} ")
_REQUEST_LINE = re.compile(rb"([A-Z]{1,16}) (\S+) HTTP/1\.([01])")
_REASONS = {200: "OK", 400: "Bad Request", 411: "Length Required", 413: "Request Entity Too Large",
            431: "Request Header Fields Too Large", 501: "Not Implemented"}


@dataclass(slots=True)
class Answer:
    """One HTTP answer of the endpoint."""

    status: int
    body: bytes
    headers: dict[str, str] = field(default_factory=dict)

    def encode(self, head_only: bool, close: bool) -> bytes:
        headers = {"Content-Type": "text/plain; charset=utf-8", "Content-Length": str(len(self.body)), **self.headers}
        if close:
            headers["Connection"] = "close"
        lines = [f"HTTP/1.1 {self.status} {_REASONS.get(self.status, '')}"] + [f"{k}: {v}" for k, v in headers.items()]
        return ("\r\n".join(lines) + "\r\n\r\n").encode() + (b"" if head_only else self.body)


def describe(pod: Obj, port: int | str) -> str:
    """The line naming the pod and port, first in every HTTP answer."""
    meta, status = pod.get("metadata") or {}, pod.get("status") or {}
    where = ", ".join(part for part in (f"IP {status['podIP']}" if status.get("podIP") else "",
                                        f"node {(pod.get('spec') or {}).get('nodeName')}"
                                        if (pod.get("spec") or {}).get("nodeName") else "") if part)
    return f"pod {meta.get('namespace', '')}/{meta.get('name', '')}{f' ({where})' if where else ''} port {port}"


def http_answer(pod: Obj, port: int | str, method: str, target: str) -> Answer:
    """What the endpoint answers to ``method target``: the pod and port, then the request."""
    return Answer(200, f"Hello from the simulated {describe(pod, port)}\n{method} {target}\n".encode())


class Connection:
    """One connection to a pod's port: bytes in, the endpoint's bytes out, no task of its own
    (the caller feeds what arrives and sends what comes back)."""

    def __init__(self, pod: Obj, port: int) -> None:
        self.pod, self.port = pod, port
        self.mode: str | None = None  # "http" or "echo", once the first bytes tell
        self.closed = False  # the endpoint has closed its side: nothing more will come
        self._buffer = bytearray()
        self._body_left = 0

    def receive(self, data: bytes) -> bytes:
        """What the endpoint sends back for ``data``."""
        if self.closed:
            return b""
        if self.mode == "echo":
            return data
        self._buffer += data
        if self.mode is None:
            self.mode = self._sniff()
            if self.mode is None:
                return b""
            if self.mode == "echo":
                echoed, self._buffer = bytes(self._buffer), bytearray()
                return echoed
        return self._serve()

    def finish(self) -> bytes:
        """The client has sent all it will: whatever is still to say, then the endpoint closes."""
        out = b"" if self.closed or self.mode == "http" else bytes(self._buffer)  # a lone partial line is echoed
        self.closed, self._buffer = True, bytearray()
        return out

    def _sniff(self) -> str | None:
        head = bytes(self._buffer[:18])
        if _METHOD.match(head):
            return "http"
        if re.fullmatch(rb"[A-Z]{0,16}", head) and len(self._buffer) < 18:
            return None  # still could be a method
        return "echo"

    def _serve(self) -> bytes:
        out = bytearray()
        while not self.closed:
            if self._body_left:
                dropped = min(self._body_left, len(self._buffer))
                del self._buffer[:dropped]
                self._body_left -= dropped
                if self._body_left:
                    break
            end = self._buffer.find(b"\r\n\r\n")
            if end < 0:
                if len(self._buffer) > MAX_HEAD:
                    out += self._refuse(431, "the request head is too large")
                break
            head, self._buffer = bytes(self._buffer[:end]), self._buffer[end + 4 :]
            out += self._request(head)
        return bytes(out)

    def _request(self, head: bytes) -> bytes:
        line, *lines = head.decode("latin-1").split("\r\n")
        found = _REQUEST_LINE.fullmatch(line.encode("latin-1"))
        if found is None:
            return self._refuse(400, "malformed request line")
        headers = {}
        for header in lines:
            name, sep, value = header.partition(":")
            if not sep:
                return self._refuse(400, "malformed header line")
            headers[name.strip().lower()] = value.strip()
        if "chunked" in headers.get("transfer-encoding", "").lower():
            return self._refuse(411, "chunked request bodies are not read; send Content-Length")
        try:
            length = int(headers.get("content-length", "0"))
        except ValueError:
            return self._refuse(400, "malformed Content-Length")
        if not 0 <= length <= MAX_BODY:
            return self._refuse(413, f"request bodies are at most {MAX_BODY} bytes")
        self._body_left = length
        method, target = found.group(1).decode(), found.group(2).decode("latin-1")
        connection = headers.get("connection", "").lower()
        close = connection == "close" or (found.group(3) == b"0" and connection != "keep-alive")
        answer = http_answer(self.pod, self.port, method, target).encode(method == "HEAD", close)
        self.closed = close
        return answer

    def _refuse(self, status: int, why: str) -> bytes:
        self.closed = True
        return Answer(status, f"{why}\n".encode()).encode(False, True)
