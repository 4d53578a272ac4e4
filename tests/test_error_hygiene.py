"""Error responses say what went wrong in words safe to show anyone: no storage endpoint, no file
path, no Python repr or traceback. The server's log keeps the detail."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from kplane.core.serving.apiserver import APIServer
from kplane.core.registry.storeerr import STORAGE_TIMEOUT, STORAGE_UNAVAILABLE
from kplane.core.server.app import UNEXPECTED, status_errors
from tests.etcd_process import EtcdProcess
from tests.servers import server_config

CMS = "/api/v1/namespaces/default/configmaps"


def configmap(name: str) -> dict:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name}, "data": {"k": "v"}}


@pytest.fixture(params=[True, False], ids=["watch-cache", "no-watch-cache"])
async def on_etcd(request: pytest.FixtureRequest, private_etcd: EtcdProcess, tmp_path: Path) -> AsyncIterator[APIServer]:
    server = APIServer(server_config(data_dir=tmp_path, storage_url=f"etcd://127.0.0.1:{private_etcd.client_port}/hygiene",
                                     port=0, run_controllers=False, watch_cache=request.param))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_storage_failures_do_not_reveal_the_etcd_address(on_etcd: APIServer, private_etcd: EtcdProcess,
                                                               caplog: pytest.LogCaptureFixture) -> None:
    async with aiohttp.ClientSession(base_url=on_etcd.url) as session:
        async with session.post(CMS, json=configmap("kept")) as reply:
            assert reply.status == 201
        await asyncio.to_thread(private_etcd.stop)
        requests = [("GET", f"{CMS}/kept", None), ("GET", CMS, None), ("POST", CMS, configmap("new")),
                    ("PUT", f"{CMS}/kept", configmap("kept")), ("DELETE", f"{CMS}/kept", None),
                    ("GET", "/api/v1/namespaces/default/secrets", None)]
        failed = []
        for method, path, body in requests:
            async with session.request(method, path, json=body) as reply:
                text = await reply.text()
                status = await reply.json()
            assert reply.status in (503, 504), (method, path, text)
            failed.append(status)
            assert str(private_etcd.client_port) not in text and "127.0.0.1" not in text, text
            assert status["kind"] == "Status" and status["status"] == "Failure"
            assert (status["code"], status["reason"], status["message"]) in (
                (503, "ServiceUnavailable", STORAGE_UNAVAILABLE), (504, "Timeout", f"Timeout: {STORAGE_TIMEOUT}")), status
            assert status["details"]["retryAfterSeconds"] == 1
    assert len(failed) == len(requests)
    assert f"127.0.0.1:{private_etcd.client_port}" in caplog.text  # the operator still learns which etcd failed


async def test_an_unexpected_exception_is_a_500_without_its_repr(caplog: pytest.LogCaptureFixture) -> None:
    """No input is known to make the server fail unexpectedly any more, so a handler that raises
    stands in for one, behind the server's own error middleware."""
    async def broken(request: web.Request) -> web.Response:
        raise FileNotFoundError(2, "No such file or directory", "/var/lib/kplane/state.db")

    app = web.Application(middlewares=[status_errors])
    app.router.add_get("/api/v1/namespaces/default/configmaps", broken)
    async with TestServer(app) as server, aiohttp.ClientSession() as session:
        with caplog.at_level(logging.ERROR, logger="kplane.core.server.app"):
            async with session.get(server.make_url(CMS)) as reply:
                text = await reply.text()
                status = await reply.json()
    assert reply.status == 500
    assert status == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Failure",
                      "message": f"Internal error occurred: {UNEXPECTED}", "reason": "InternalError", "code": 500}
    assert "/var/lib" not in text and "FileNotFoundError" not in text and "Errno" not in text
    assert "unhandled error in GET /api/v1/namespaces/default/configmaps" in caplog.text
    assert "FileNotFoundError: [Errno 2] No such file or directory: '/var/lib/kplane/state.db'" in caplog.text
