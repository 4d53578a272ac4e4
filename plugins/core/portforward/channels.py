"""The WebSocket channel protocol of a port-forward (the kubelet's ``portforward/websocket.go``):
the ports are the request's, each with a data channel (2i) and an error channel (2i+1), every
message a channel byte and then its data. The server starts each channel with its port as two
little-endian bytes; the base64 form (``v4.base64.channel.k8s.io``) sends text messages, the
channel as an ASCII digit and the data base64-encoded. A port that cannot be forwarded says why
on its error channel; the WebSocket closes once every port's connection is over.
"""

from __future__ import annotations

import base64
import binascii
import struct

from kplane.api import WebSocket
from kplane.plugins.core.containers.endpoint import Connection
from kplane.plugins.core.portforward.forward import ForwardError, chunks
from kplane.plugins.core.portforward.session import Opener

BINARY = "v4.channel.k8s.io"
BASE64 = "v4.base64.channel.k8s.io"
PROTOCOLS = (BINARY, BASE64)


class Channels:
    """One WebSocket's channels."""

    def __init__(self, ws: WebSocket, encoded: bool) -> None:
        self.ws, self.encoded = ws, encoded

    async def send(self, channel: int, data: bytes) -> None:
        if self.encoded:
            await self.ws.send(bytes([ord("0") + channel]) + base64.b64encode(data))
        else:
            await self.ws.send(bytes([channel]) + data)

    def decode(self, message: bytes) -> tuple[int, bytes] | None:
        """The channel and data of a client's message; None for one that is malformed."""
        if not message:
            return None
        if not self.encoded:
            return message[0], message[1:]
        try:
            return message[0] - ord("0"), base64.b64decode(message[1:], validate=True)
        except binascii.Error:
            return None


async def serve(ws: WebSocket, ports: list[int], opener: Opener) -> None:
    """Forward ``ports`` over ``ws`` until the client closes it or every connection is over."""
    channels = Channels(ws, ws.protocol == BASE64)
    connections: list[Connection | None] = []
    for index, port in enumerate(ports):
        prefix = struct.pack("<H", port)
        await channels.send(2 * index, prefix)
        await channels.send(2 * index + 1, prefix)
        try:
            connections.append(await opener(port))
        except ForwardError as err:
            await channels.send(2 * index + 1, str(err).encode())
            connections.append(None)
    while any(connection is not None for connection in connections):
        message = await ws.receive()
        if message is None:
            return
        decoded = channels.decode(message)
        if decoded is None or decoded[0] % 2 or decoded[0] // 2 >= len(connections):
            continue  # nothing is read from error channels, nor from channels that are not there
        index, data = decoded[0] // 2, decoded[1]
        connection = connections[index]
        if connection is None:
            continue
        for chunk in chunks(connection.receive(data)):
            await channels.send(2 * index, chunk)
        if connection.closed:
            connections[index] = None
