"""Reads and watches from a resourceVersion the storage has not reached yet, as kube-apiserver 1.32
answers them.

* A watch from a future resourceVersion is accepted and waits: it delivers the events after that
  revision once the storage gets there, none before (the cacher's and etcd's watch alike; only a
  ``sendInitialEvents`` watch-list request ends with a "Too large resource version" ERROR).
* A list with ``resourceVersion`` N (NotOlderThan) in the future: the watch cache waits up to 3 s
  for N (``waitUntilFreshAndBlock``), then answers 504 Timeout "Too large resource version" with
  ``retryAfterSeconds`` 1 and the cause ResourceVersionTooLarge; a list that N reaches meanwhile is
  answered normally.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from kplane.core.serving.apiserver import APIServer
from tests.servers import server_config

CMS = "/api/v1/namespaces/default/configmaps"


@pytest.fixture(params=[True, False], ids=["watch-cache", "no-watch-cache"])
async def session(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[aiohttp.ClientSession]:
    server = APIServer(server_config(data_dir=tmp_path, port=0, run_controllers=False, watch_cache=request.param))
    await server.start()
    try:
        async with aiohttp.ClientSession(base_url=server.url) as client:
            yield client
    finally:
        await server.stop()


async def create(session: aiohttp.ClientSession, name: str) -> int:
    async with session.post(CMS, json={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}}) as reply:
        assert reply.status == 201
        return int((await reply.json())["metadata"]["resourceVersion"])


async def test_a_watch_from_a_future_revision_waits_for_it(session: aiohttp.ClientSession) -> None:
    now = await create(session, "before")
    async with session.get(CMS, params={"watch": "1", "resourceVersion": str(now + 2)}) as reply:
        assert reply.status == 200 and reply.content_type == "application/json"
        for name in ("at-plus-1", "at-plus-2", "at-plus-3", "at-plus-4"):
            await create(session, name)
        seen = [json.loads(await asyncio.wait_for(reply.content.readline(), 10)) for _ in range(2)]
    assert [(e["type"], e["object"]["metadata"]["name"]) for e in seen] == [("ADDED", "at-plus-3"), ("ADDED", "at-plus-4")]
    assert [int(e["object"]["metadata"]["resourceVersion"]) for e in seen] == [now + 3, now + 4]


def too_large(requested: int, current: int) -> dict:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
            "message": f"Timeout: Too large resource version: {requested}, current: {current}", "reason": "Timeout",
            "details": {"causes": [{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}],
                        "retryAfterSeconds": 1},
            "code": 504}


@pytest.mark.parametrize("selector", [{}, {"fieldSelector": "metadata.name=before"}], ids=["all", "by-name"])
async def test_a_list_from_a_future_revision_is_a_504_too_large(session: aiohttp.ClientSession, selector: dict) -> None:
    now = await create(session, "before")
    async with session.get(CMS, params={"resourceVersion": str(now + 1), **selector}) as reply:
        assert reply.status == 504
        assert await reply.json() == too_large(now + 1, now)
    async with session.get(CMS, params={"resourceVersion": str(now), **selector}) as reply:
        assert reply.status == 200  # the current revision itself is fine


async def test_with_the_watch_cache_a_list_waits_for_its_revision(tmp_path: Path) -> None:
    server = APIServer(server_config(data_dir=tmp_path, port=0, run_controllers=False))
    await server.start()
    try:
        async with aiohttp.ClientSession(base_url=server.url) as client:
            now = await create(client, "before")

            async def listed() -> tuple[int, dict]:
                async with client.get(CMS, params={"resourceVersion": str(now + 1)}) as reply:
                    return reply.status, await reply.json()

            waiting = asyncio.create_task(listed())
            await asyncio.sleep(0.3)  # the list is now waiting for revision now+1 (it would succeed anyway)
            await create(client, "after")
            status, body = await waiting
    finally:
        await server.stop()
    assert status == 200, body
    assert int(body["metadata"]["resourceVersion"]) >= now + 1
    assert [item["metadata"]["name"] for item in body["items"]] == ["after", "before"]


async def test_the_python_client_gets_a_504_for_a_list_from_the_future(tmp_path: Path) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    server = APIServer(server_config(data_dir=tmp_path, port=0, run_controllers=False))
    await server.start()
    try:
        async with aiohttp.ClientSession(base_url=server.url) as client:
            now = await create(client, "before")
        config = kubernetes.client.Configuration(host=server.url)
        api = kubernetes.client.CoreV1Api(kubernetes.client.ApiClient(config))
        with pytest.raises(kubernetes.client.ApiException) as raised:
            await asyncio.to_thread(api.list_namespaced_config_map, "default", resource_version=str(now + 5))
    finally:
        await server.stop()
    assert raised.value.status == 504
    assert json.loads(raised.value.body) == too_large(now + 5, now)
