"""The floor of a create in Python: bare aiohttp, JSON and kplane's storage client, nothing else.

Each POST is read, parsed, given the metadata a server must set (uid, namespace, creation time),
encoded, created in the storage and answered with its bytes: no validation, defaulting,
admission, managedFields, authentication or metrics. What a kplane create costs beyond this is
what the API machinery costs; the storage's own rate is measured apart (``backends_bench.py``).

    python bench/floor_server.py PORT STORAGE_URL   (sqlite:///path or etcd://host:port/prefix)
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
import uuid

from aiohttp import web

from kplane.core.storage.factory import open_storage


async def main(port: int, storage_url: str) -> None:
    storage = await open_storage(storage_url)
    app = web.Application()

    async def ready(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def create(request: web.Request) -> web.Response:
        obj = json.loads(await request.read())
        meta = obj["metadata"]
        meta.update(namespace="default", uid=str(uuid.uuid4()), creationTimestamp=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))
        body = json.dumps(obj).encode()
        await storage.create(f"/registry/apps/deployments/default/{meta['name']}", body)
        return web.Response(status=201, body=body, content_type="application/json")

    app.router.add_get("/readyz", ready)
    app.router.add_post("/apis/apps/v1/namespaces/default/deployments", create)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", port).start()
    try:
        await asyncio.Event().wait()
    finally:
        await storage.close()


if __name__ == "__main__":
    asyncio.run(main(int(sys.argv[1]), sys.argv[2]))
