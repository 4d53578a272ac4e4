"""``/metrics`` of a component without an API server of its own: the stand-alone
``kplane controller-manager``. Plain HTTP, so only on a loopback address (kube-controller-manager
serves it over HTTPS with delegated authorization; here whoever can reach loopback may read it)."""

from __future__ import annotations

import ipaddress

from aiohttp import web
from prometheus_client import CollectorRegistry

from kplane.core.metrics.families import CONTENT_TYPE, exposition


def check_address(address: str) -> None:
    """ValueError unless ``address`` is a loopback address (or ``localhost``)."""
    try:
        loopback = address == "localhost" or ipaddress.ip_address(address).is_loopback
    except ValueError:
        loopback = False
    if not loopback:
        raise ValueError(f"--metrics-address serves plain HTTP: only a loopback address, not {address!r}")


async def serve_metrics(registry: CollectorRegistry, address: str, port: int) -> web.AppRunner:
    """Serve ``GET /metrics`` (and ``/healthz``) on ``address:port`` until the runner is cleaned up."""
    check_address(address)

    async def metrics(request: web.Request) -> web.Response:
        return web.Response(body=exposition(registry), headers={"Content-Type": CONTENT_TYPE})

    async def healthz(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    app = web.Application()
    app.router.add_get("/metrics", metrics)
    app.router.add_get("/healthz", healthz)
    runner = web.AppRunner(app, access_log=None, handle_signals=False)
    await runner.setup()
    await web.TCPSite(runner, address, port).start()
    return runner
