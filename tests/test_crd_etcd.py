"""CRDs on etcd with two `kplane serve` processes: a CRD created through one is served by the
other, its objects are shared, and deleted through the other it goes from both."""

from __future__ import annotations

from pathlib import Path

import aiohttp
from tests.conftest import Client
from tests.etcd_process import EtcdProcess
from tests.servers import serving
from tests.test_crd_lifecycle import CRDS, GROUP, cr, crd, established, gone, not_served_anywhere, served_everywhere
from tests.test_etcd_servers import storage_url
from tests.waiting import eventually


async def test_a_crd_made_through_one_server_is_served_by_the_other_and_deleted_through_it(
        etcd_server: EtcdProcess, tmp_path: Path) -> None:
    url = storage_url(etcd_server)
    with serving(tmp_path / "a", "--storage", url, "--no-controllers") as a, \
            serving(tmp_path / "b", "--storage", url, "--no-controllers") as b:
        async with aiohttp.ClientSession(base_url=a.url) as sa, aiohttp.ClientSession(base_url=b.url) as sb:
            one, other = Client(sa), Client(sb)
            assert (await one.post(CRDS, crd("shared", "Shared"))).status == 201
            await established(other, f"shared.{GROUP}")
            await eventually(lambda: served_everywhere(other, GROUP, "v1", "shared"), what="served by the other server")
            path = f"/apis/{GROUP}/v1/namespaces/default/shared"
            assert (await other.post(path, cr("Shared", "s1"))).status == 201
            reply = await one.get(f"{path}/s1")
            assert reply.status == 200 and reply.body["spec"] == {"n": 1}

            assert (await other.delete(f"{CRDS}/shared.{GROUP}")).status == 200
            for api in (one, other):
                await eventually(lambda: gone(api, f"{CRDS}/shared.{GROUP}"), timeout=20, what="the CRD gone")
                await eventually(lambda: not_served_anywhere(api, GROUP, "v1", "shared"), what="unserved")
                assert (await api.get(path)).status == 404
