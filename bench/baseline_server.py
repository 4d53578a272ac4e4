"""The baseline: bare aiohttp answering with bytes captured from kplane, no API machinery.

    python bench/baseline_server.py PORT BODIES_DIR   (files: get, create, list)
"""

from __future__ import annotations

import sys
from pathlib import Path

from aiohttp import web


def main(port: int, bodies: Path) -> None:
    one, created, listed = ((bodies / name).read_bytes() for name in ("get", "create", "list"))
    app = web.Application()

    async def ready(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def get(request: web.Request) -> web.Response:
        return web.Response(body=one, content_type="application/json")

    async def create(request: web.Request) -> web.Response:
        await request.read()
        return web.Response(status=201, body=created, content_type="application/json")

    async def list_all(request: web.Request) -> web.Response:
        return web.Response(body=listed, content_type="application/json")

    app.router.add_get("/readyz", ready)
    app.router.add_get("/apis/apps/v1/namespaces/default/deployments/{name}", get)
    app.router.add_post("/apis/apps/v1/namespaces/default/deployments", create)
    app.router.add_get("/apis/apps/v1/namespaces/default/deployments", list_all)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None)


if __name__ == "__main__":
    main(int(sys.argv[1]), Path(sys.argv[2]))
