"""The watch fan-out's upper bound: bare aiohttp encoding each event once and writing the same
bytes to every watcher, with no API machinery, storage or watch cache.

Its Deployments are the one kplane served (``template.json`` in the data directory, captured
from kplane in the same run), renamed, so a watcher reads about the bytes kplane sends.

    python bench/fanout_server.py --port PORT --data-dir DIR
"""

from __future__ import annotations

import argparse
import asyncio
import copy
import json
from pathlib import Path
from typing import Any

import orjson
from aiohttp import web

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"


def main(port: int, data: Path) -> None:
    template = json.loads((data / "template.json").read_text())
    objects: dict[str, dict[str, Any]] = {}
    watchers: set[web.StreamResponse] = set()
    revision = 1

    def bump(obj: dict[str, Any]) -> bytes:
        nonlocal revision
        revision += 1
        obj["metadata"]["resourceVersion"] = str(revision)
        return orjson.dumps(obj)

    async def ready(request: web.Request) -> web.Response:
        return web.Response(text="ok")

    async def create(request: web.Request) -> web.Response:
        name = (await request.json())["metadata"]["name"]
        obj = objects[name] = copy.deepcopy(template)
        obj["metadata"]["name"] = name
        return web.Response(status=201, body=bump(obj), content_type="application/json")

    async def list_or_watch(request: web.Request) -> web.StreamResponse:
        if "watch" not in request.query:
            body = {"kind": "DeploymentList", "apiVersion": "apps/v1", "metadata": {"resourceVersion": str(revision)},
                    "items": list(objects.values())}
            return web.Response(body=orjson.dumps(body), content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        watchers.add(response)
        try:
            await asyncio.Event().wait()  # until the server stops
        finally:
            watchers.discard(response)
        return response

    async def patch(request: web.Request) -> web.Response:
        obj = objects[request.match_info["name"]]
        annotations = (await request.json())["metadata"]["annotations"]
        obj["metadata"].setdefault("annotations", {}).update(annotations)
        body = bump(obj)
        line = b'{"type":"MODIFIED","object":' + body + b"}\n"  # encoded once for every watcher
        for watcher in list(watchers):
            try:
                await watcher.write(line)
            except ConnectionResetError:
                watchers.discard(watcher)
        return web.Response(body=body, content_type="application/json")

    app = web.Application()
    app.router.add_get("/readyz", ready)
    app.router.add_post(DEPLOYMENTS, create)
    app.router.add_get(DEPLOYMENTS, list_or_watch)
    app.router.add_patch(DEPLOYMENTS + "/{name}", patch)
    web.run_app(app, host="127.0.0.1", port=port, print=None, access_log=None, shutdown_timeout=1)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--data-dir", type=Path, required=True)
    parser.add_argument("--http", action="store_true", help=argparse.SUPPRESS)  # what kplane() passes
    args = parser.parse_args()
    main(args.port, args.data_dir)
