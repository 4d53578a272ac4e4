"""Shared fixtures: a real server on a free loopback port, with real SQLite in a temp folder."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import AsyncIterator, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import aiohttp
import pytest
from hypothesis import HealthCheck, settings

from kplane.core.client.kubeconfig import load_kubeconfig
from kplane.core.runtime.scheme import parse_runtime_config
from kplane.core.serving.apiserver import APIServer
from tests import etcd_process
from tests.etcd_process import EtcdProcess
from tests.kubectl_cli import Kubectl
from tests.servers import server_config, serving

# The suite shares two cores between two workers and the servers they start: Hypothesis' own
# timing checks (how fast it generates examples, a deadline per example) would fail a correct
# property on a busy machine. Properties are checked, not timed.
settings.register_profile("kplane", deadline=None, suppress_health_check=[HealthCheck.too_slow])
settings.load_profile("kplane")


@dataclass
class Reply:
    status: int
    body: Any
    headers: Any

    def __repr__(self) -> str:  # readable assertion failures
        return f"Reply({self.status}, {json.dumps(self.body)[:600]})"


class Client:
    """A thin HTTP helper: JSON in, JSON out, nothing clever, so tests see the wire."""

    def __init__(self, session: aiohttp.ClientSession) -> None:
        self.session = session

    async def request(self, method: str, path: str, body: Any = None, *, raw: bytes | None = None,
                      content_type: str | None = "application/json", headers: dict[str, str] | None = None,
                      params: dict[str, str] | None = None) -> Reply:
        data = raw if raw is not None else (json.dumps(body).encode() if body is not None else None)
        sent = dict(headers or {})
        if content_type and data is not None:
            sent["Content-Type"] = content_type
        skip = () if content_type else ("Content-Type",)  # as the Python client sends: none at all
        async with self.session.request(method, path, data=data, headers=sent, params=params, skip_auto_headers=skip) as resp:
            text = await resp.read()
            try:
                parsed = json.loads(text) if text else None
            except ValueError:
                parsed = text.decode()
            return Reply(resp.status, parsed, resp.headers)

    async def get(self, path: str, **kw: Any) -> Reply:
        return await self.request("GET", path, **kw)

    async def post(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return await self.request("POST", path, body, **kw)

    async def put(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return await self.request("PUT", path, body, **kw)

    async def patch(self, path: str, body: Any, content_type: str = "application/merge-patch+json", **kw: Any) -> Reply:
        return await self.request("PATCH", path, body, content_type=content_type, **kw)

    async def delete(self, path: str, body: Any = None, **kw: Any) -> Reply:
        return await self.request("DELETE", path, body, **kw)


@pytest.fixture
async def server(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[APIServer]:
    """A server; its controller-manager runs only for tests marked ``controllers``, so API tests
    see exactly the writes they make; ``@pytest.mark.runtime_config("apps/v1beta2=true")`` is
    its ``--runtime-config``, ``@pytest.mark.no_apiservice_backends`` its ``--no-enable-apiservice-backends``;
    ``@pytest.mark.secure`` serves as ``kplane serve`` does (HTTPS; else plain HTTP, quicker);
    ``@pytest.mark.flowcontrol`` makes the bootstrap flow-control objects (else they are left out)."""
    controllers = request.node.get_closest_marker("controllers") is not None
    secure = request.node.get_closest_marker("secure") is not None
    runtime = request.node.get_closest_marker("runtime_config")
    backends = request.node.get_closest_marker("no_apiservice_backends") is None
    flowcontrol = request.node.get_closest_marker("flowcontrol") is not None  # 21 objects less to write at each start
    srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=controllers, secure=secure,
                                  runtime_config=parse_runtime_config(runtime.args[0]) if runtime else {},
                                  plugin_settings={"apiregistration": {"backends": backends},
                                                   "flowcontrol": {"flowcontrol_enabled": flowcontrol}}))
    await srv.start()
    try:
        yield srv
    finally:
        await srv.stop()


@pytest.fixture
async def api(server: APIServer) -> AsyncIterator[Client]:
    """Requests to ``server``; over HTTPS as its kubeconfig says (verifying it, as the admin)."""
    tls = load_kubeconfig(server.kubeconfig_path).ssl if server.url.startswith("https://") else None
    async with aiohttp.ClientSession(base_url=server.url, connector=aiohttp.TCPConnector(ssl=tls) if tls else None) as session:
        yield Client(session)


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """The real kubectl, configured for a `kplane serve` process shared by the module's tests."""
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    workdir = tmp_path_factory.mktemp("kubectl")
    with serving(workdir / "data") as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir)}
        yield Kubectl(env, workdir)


@pytest.fixture(scope="session", autouse=True)
def _stop_shared_etcd() -> Iterator[None]:
    yield
    etcd_process.stop_shared()


@pytest.fixture
def etcd_server() -> EtcdProcess:
    """The session's shared etcd (started on first use; tests use their own key prefixes)."""
    if etcd_process.ETCD is None:
        pytest.skip("etcd is not on PATH (.ci/run installs the etcd-server package)")
    return etcd_process.shared()


@pytest.fixture
def private_etcd() -> Iterator[EtcdProcess]:
    """An etcd of the test's own, which it may stop, kill and restart."""
    if etcd_process.ETCD is None:
        pytest.skip("etcd is not on PATH (.ci/run installs the etcd-server package)")
    process = EtcdProcess()
    process.start()
    try:
        yield process
    finally:
        process.cleanup()
