"""The ``pods/portforward`` subresource (kube's ``PortForwardREST``): GET and POST, each a
WebSocket upgrade choosing the protocol by its subprotocols, in the client's order:

* ``SPDY/3.1+portforward.k8s.io``: SPDY tunnelled through the WebSocket's binary messages, what
  kubectl 1.32 dials first (:mod:`.session`);
* ``v4.channel.k8s.io``, ``v4.base64.channel.k8s.io`` or none: the channel protocol over the
  ports of the ``ports`` query (:mod:`.channels`).

A request that is no upgrade is refused as kube-apiserver refuses it ("Upgrade request required").
The pod must be bound to a node; each connection then reaches the pod as it is at that moment.
A GET (a WebSocket upgrade) is authorized as ``get`` and also as ``create`` on the subresource, as
kube 1.35's ``AuthorizePodWebsocketUpgradeCreatePermission`` does, so forwarding always needs
``create`` on ``pods/portforward``.
"""

from __future__ import annotations

from typing import cast

from kplane.api import Exchange, Getter, GroupVersionKind, Registry, RequestContext, Served, WebSocket, errors
from kplane.plugins.core.containers.endpoint import Connection
from kplane.plugins.core.portforward import channels
from kplane.plugins.core.portforward.forward import open_port, parse_port
from kplane.plugins.core.portforward.session import Opener, Session

#: What kubectl's tunnelling dialer puts before the stream protocol (``portforward.k8s.io``).
SPDY_TUNNEL = "SPDY/3.1+portforward.k8s.io"


class PortForwardREST(Served):
    connect_methods = frozenset({"GET", "POST"})
    kind = GroupVersionKind("", "v1", "PodPortForwardOptions")  # kube's connect options, as discovery names them

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None:
        if exchange.method == "GET" and ctx.authorize_create is not None:
            await ctx.authorize_create()  # the upgrade's GET must be allowed to create, as exec's
        pods = cast(Getter, self.registry.rest("", "pods"))
        pod = (await pods.get(ctx, name)).obj
        if not (pod.get("spec") or {}).get("nodeName"):
            raise errors.bad_request(f"pod {name} does not have a host assigned")

        async def opener(port: int) -> Connection:
            return open_port((await pods.get(ctx, name)).obj, port)

        offered = exchange.websocket_protocols()
        if offered is None:
            raise errors.bad_request("Upgrade request required")
        if SPDY_TUNNEL in offered:
            await tunnel(await exchange.websocket(SPDY_TUNNEL), opener)
            return
        protocol = next((p for p in offered if p in channels.PROTOCOLS), None)
        if offered and protocol is None:
            raise errors.bad_request(f"requested protocol(s) are not supported: {offered}; "
                                     f"supports {[SPDY_TUNNEL, *channels.PROTOCOLS]}")
        ports = requested_ports(exchange)
        await channels.serve(await exchange.websocket(protocol), ports, opener)


def requested_ports(exchange: Exchange) -> list[int]:
    """The ``ports`` of the query (repeated or comma-separated, as the kubelet reads ``port``)."""
    values = exchange.query("ports")
    if not values:
        raise errors.bad_request('query parameter "ports" is required')
    ports = []
    for value in values:
        for text in value.split(","):
            try:
                ports.append(parse_port(text))
            except ValueError as err:
                raise errors.bad_request(str(err)) from None
    if len(ports) > 128:  # two channels a port, one byte a channel
        raise errors.bad_request("at most 128 ports are forwarded at once")
    return ports


async def tunnel(ws: WebSocket, opener: Opener) -> None:
    """A SPDY session over ``ws`` until either side ends it."""
    session = Session(ws.send, opener)
    while not session.over:
        data = await ws.receive()
        if data is None:
            return
        await session.feed(data)
