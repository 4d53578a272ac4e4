"""The ``default/kubernetes`` Service kube-apiserver makes at start (kr8s and Kubernetes'
``test/cmd`` scripts look it up by name)."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlsplit

import aiohttp

from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client
from tests.servers import server_config

PATH = "/api/v1/namespaces/default/services/kubernetes"


async def test_it_points_at_the_server_from_the_first_address_of_the_range(api: Client, server: APIServer) -> None:
    reply = await api.get(PATH)
    assert reply.status == 200, reply
    service = reply.body
    assert service["metadata"]["labels"] == {"component": "apiserver", "provider": "kubernetes"}
    spec = service["spec"]
    assert spec["ports"] == [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": urlsplit(server.url).port}]
    assert (spec["type"], spec["clusterIP"], spec["clusterIPs"], spec["sessionAffinity"]) == ("ClusterIP", "10.96.0.1", ["10.96.0.1"], "None")
    assert "selector" not in spec


async def test_a_restart_on_another_port_puts_its_port_back(tmp_path: Path) -> None:
    async def target_port_after_start() -> tuple[int, int]:
        srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=False))
        await srv.start()
        try:
            async with aiohttp.ClientSession(base_url=srv.url) as session:
                reply = await Client(session).get(PATH)
            return urlsplit(srv.url).port or 0, reply.body["spec"]["ports"][0]["targetPort"]
        finally:
            await srv.stop()

    first_port, first_target = await target_port_after_start()
    second_port, second_target = await target_port_after_start()
    assert first_port != second_port
    assert (first_target, second_target) == (first_port, second_port)
