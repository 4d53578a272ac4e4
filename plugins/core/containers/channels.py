"""Kubernetes' WebSocket channel protocols, the server's side (``k8s.io/apiserver``'s ``wsstream``
and the kubelet's ``remotecommand``), as ``pods/exec`` and ``pods/attach`` speak them.

Every message carries one channel: 0 stdin, 1 stdout, 2 stderr, 3 error, 4 resize. In the binary
protocols the first byte is the channel; in the ``base64`` ones the message is text: the
channel's digit, then the data in base64. The subprotocol is the first the client offers of
:data:`PROTOCOLS` (none offered: ``channel.k8s.io``'s framing):

* ``v5.channel.k8s.io``: v4, and the client may close a stream: ``[255, channel]`` ends stdin;
* ``v4.channel.k8s.io``, ``v4.base64.channel.k8s.io``: the error channel carries the outcome as a
  JSON ``metav1.Status``, Success too; a non-zero exit is reason ``NonZeroExitCode`` with an
  ``ExitCode`` cause holding the code;
* ``v3.channel.k8s.io``, ``v2.channel.k8s.io``, ``channel.k8s.io``, ``base64.channel.k8s.io``:
  the error channel carries only a failure's message, as text.

On connect the server sends an empty message on the first output channel the client asked for
(stdout, else stderr, else error), as the kubelet does, so the client knows the stream is open.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import contextlib
import json
from dataclasses import dataclass
from typing import Any

from kplane.api import WebSocket

STDIN, STDOUT, STDERR, ERROR, RESIZE = 0, 1, 2, 3, 4
CLOSE = 255
V5 = "v5.channel.k8s.io"
#: The subprotocols served, each with whether it is base64 text and whether its error channel is a Status.
PROTOCOLS: dict[str, tuple[bool, bool]] = {
    V5: (False, True),
    "v4.channel.k8s.io": (False, True),
    "v4.base64.channel.k8s.io": (True, True),
    "v3.channel.k8s.io": (False, False),
    "v2.channel.k8s.io": (False, False),
    "channel.k8s.io": (False, False),
    "base64.channel.k8s.io": (True, False),
}
#: The most stdin bytes buffered before the server stops reading (the client then waits).
MAX_PENDING = 16


def choose(offered: list[str]) -> str | None:
    """The subprotocol to agree on: the first offered that is served; "" when none is offered
    (the pre-v4 binary framing, unnamed); None when none offered is served."""
    if not offered:
        return ""
    return next((p for p in offered if p in PROTOCOLS), None)


def unsupported(offered: list[str]) -> str:
    return f"requested protocol(s) are not supported: {offered}; supports {list(PROTOCOLS)}"


@dataclass(frozen=True, slots=True)
class Size:
    width: int
    height: int


class Channels:
    """One accepted WebSocket speaking a channel protocol: output written per channel, input
    read by a task of its own into stdin (a queue; None at its end) and terminal sizes."""

    def __init__(self, ws: WebSocket, protocol: str) -> None:
        self.ws = ws
        self.protocol = protocol
        self.base64, self.status_errors = PROTOCOLS.get(protocol, (False, False))
        self.stdin: asyncio.Queue[bytes | None] = asyncio.Queue(MAX_PENDING)
        self.sizes: list[Size] = []
        self.closed = asyncio.Event()  # the client has gone, or closed its side
        self._reader: asyncio.Task[None] | None = None

    def start(self) -> None:
        self._reader = asyncio.create_task(self._read())

    async def stop(self) -> None:
        if self._reader is not None:
            self._reader.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._reader

    async def send(self, channel: int, data: bytes) -> None:
        if self.base64:
            await self.ws.send_text(str(channel) + base64.b64encode(data).decode())
        else:
            await self.ws.send(bytes((channel,)) + data)

    async def finish(self, exit_code: int, message: str = "") -> None:
        """The outcome on the error channel (the exit code; ``message`` says why it is not 0), then close."""
        status: dict[str, Any] = {"metadata": {}, "status": "Success"}
        if exit_code:
            status = {"metadata": {}, "status": "Failure",
                      "message": f"command terminated with non-zero exit code: {message or f'exit status {exit_code}'}",
                      "reason": "NonZeroExitCode",
                      "details": {"causes": [{"reason": "ExitCode", "message": str(exit_code)}]}}
        with contextlib.suppress(ConnectionResetError):
            if self.status_errors:
                await self.send(ERROR, json.dumps(status, separators=(",", ":")).encode())
            elif exit_code:
                await self.send(ERROR, status["message"].encode())
            await self.ws.close()

    async def _read(self) -> None:
        try:
            while (message := await self.ws.receive()) is not None:
                channel, data = self._decode(message)
                if channel == STDIN:
                    await self.stdin.put(data)
                elif channel == RESIZE:
                    self._resize(data)
                elif channel == CLOSE and self.protocol == V5 and data[:1] == bytes((STDIN,)):
                    await self.stdin.put(None)
        finally:
            self.closed.set()
            with contextlib.suppress(asyncio.QueueFull):
                self.stdin.put_nowait(None)

    def _decode(self, message: bytes) -> tuple[int, bytes]:
        if not message:
            return -1, b""
        if not self.base64:
            return message[0], message[1:]
        try:
            return int(chr(message[0])), base64.b64decode(message[1:])
        except (ValueError, binascii.Error):
            return -1, b""

    def _resize(self, data: bytes) -> None:
        with contextlib.suppress(ValueError, TypeError, AttributeError):
            size = json.loads(data)
            self.sizes = [*self.sizes[-9:], Size(int(size.get("Width") or 0), int(size.get("Height") or 0))]
