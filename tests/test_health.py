"""/healthz, /livez and /readyz as kube-apiserver answers them: named checks, ``?verbose``,
``?exclude=``, single checks, and readiness that follows the storage (a stopped etcd)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import aiohttp

from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client
from tests.etcd_process import EtcdProcess
from tests.servers import server_config

READY_VERBOSE = "[+]ping ok\n[+]etcd ok\n[+]poststarthook/kplane-start ok\n[+]shutdown ok\nreadyz check passed\n"


async def text(session: aiohttp.ClientSession | Client, path: str) -> tuple[int, str, str]:
    http = session.session if isinstance(session, Client) else session
    async with http.get(path) as reply:
        return reply.status, await reply.text(), reply.headers.get("Content-Type", "")


async def test_probes_pass_quietly_and_list_their_checks_when_verbose(api: Client) -> None:
    for path in ("/healthz", "/livez", "/readyz"):
        assert (await text(api, path))[:2] == (200, "ok")
    status, body, content_type = await text(api, "/readyz?verbose")
    assert (status, body, content_type) == (200, READY_VERBOSE, "text/plain; charset=utf-8")
    assert (await text(api, "/livez?verbose"))[:2] == (200, "[+]ping ok\nlivez check passed\n")
    assert (await text(api, "/healthz?verbose"))[1] == READY_VERBOSE.replace("readyz", "healthz")


async def test_exclude_skips_a_check_and_warns_about_unknown_names(api: Client) -> None:
    status, body, _ = await text(api, "/readyz?verbose&exclude=etcd&exclude=nope")
    assert status == 200
    assert body == ("[+]ping ok\n[+]etcd excluded: ok\n[+]poststarthook/kplane-start ok\n[+]shutdown ok\n"
                    'warn: some health checks cannot be excluded: no matches for "nope"\nreadyz check passed\n')


async def test_single_checks_are_served_and_unknown_ones_are_404(api: Client) -> None:
    for path in ("/readyz/etcd", "/readyz/ping", "/readyz/shutdown", "/readyz/poststarthook/kplane-start",
                 "/livez/ping", "/healthz/etcd"):
        assert (await text(api, path))[:2] == (200, "ok"), path
    for path in ("/livez/etcd", "/readyz/nope", "/healthz/", "/livez/", "/readyz/"):  # as kube's exact mux
        assert (await text(api, path))[0] == 404, path


async def test_readyz_fails_while_etcd_is_down_and_livez_does_not(private_etcd: EtcdProcess, tmp_path: Path) -> None:
    server = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=False,
                                     storage_url=f"etcd://127.0.0.1:{private_etcd.client_port}/health"))
    await server.start()
    try:
        async with aiohttp.ClientSession(base_url=server.url) as session:
            assert (await text(session, "/readyz"))[:2] == (200, "ok")
            await asyncio.to_thread(private_etcd.stop)

            status, body, _ = await text(session, "/readyz")
            assert status == 503  # unavailable (kube's healthz says 500: see core/server/health.py)
            assert body == ("[+]ping ok\n[-]etcd failed: reason withheld\n[+]poststarthook/kplane-start ok\n"
                            "[+]shutdown ok\nreadyz check failed\n")
            assert (await text(session, "/healthz"))[0] == 503
            assert (await text(session, "/readyz/etcd"))[:2] == (503, "internal server error: the storage is unavailable\n")
            assert (await text(session, "/readyz?exclude=etcd"))[:2] == (200, "ok")
            assert (await text(session, "/livez"))[:2] == (200, "ok")
            assert "127.0.0.1" not in body

            await asyncio.to_thread(private_etcd.start)
            assert (await text(session, "/readyz"))[:2] == (200, "ok")
    finally:
        await server.stop()
