"""``kplane serve --workers 2`` on SQLite (the default) and on a real etcd: two processes on one
port, each with its own watch cache, serving one cluster; the controllers run once; a storage
not known to take writes from several processes is refused."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import subprocess
import sys
import uuid
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from tests.builders import configmap, deployment
from tests.crds import CRDS, collection, crd_body
from tests import etcd_process
from tests.servers import Served, serving
from tests.waiting import eventually

CMS = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
REPLICASETS = "/apis/apps/v1/namespaces/default/replicasets"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kplane-controller-manager"


@pytest.fixture(scope="module", params=["sqlite", "etcd"])
def served(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    storage = []
    if request.param == "etcd":
        if etcd_process.ETCD is None:
            pytest.skip("etcd is not on PATH (.ci/run installs the etcd-server package)")
        etcd_server = etcd_process.shared()
        storage = ["--storage", f"etcd://127.0.0.1:{etcd_server.client_port}/kplane-{uuid.uuid4().hex[:8]}"]
    with serving(tmp_path_factory.mktemp("workers"), "--workers", "2", *storage) as server:
        yield server


async def _worker_of(session: aiohttp.ClientSession, url: str) -> int:
    async with session.get(f"{url}/debug/worker") as reply:
        assert reply.status == 200
        return int((await reply.json())["pid"])


@pytest.fixture
async def pinned(served: Served) -> AsyncIterator[dict[int, aiohttp.ClientSession]]:
    """One session per worker process, each over one kept-alive connection that landed on it."""
    sessions: dict[int, aiohttp.ClientSession] = {}
    spare: list[aiohttp.ClientSession] = []
    try:
        for _ in range(200):  # the kernel spreads connections by their hash: a few tries land on both
            session = aiohttp.ClientSession(base_url=served.url, connector=aiohttp.TCPConnector(limit=1),
                                            timeout=aiohttp.ClientTimeout(total=30))
            pid = await _worker_of(session, "")
            if pid in sessions:
                spare.append(session)
            else:
                sessions[pid] = session
            if len(sessions) == 2:
                break
        assert len(sessions) == 2, sessions.keys()
        yield sessions
    finally:
        for session in [*sessions.values(), *spare]:
            await session.close()


def _parent(pid: int) -> int:
    return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])


async def test_both_workers_answer_on_the_one_port(served: Served, pinned: dict[int, aiohttp.ClientSession]) -> None:
    assert all(_parent(pid) == served.process.pid for pid in pinned)


async def test_a_write_through_one_worker_is_read_and_watched_through_the_other(
        pinned: dict[int, aiohttp.ClientSession]) -> None:
    one, other = pinned.values()
    async with other.get(CMS) as reply:
        since = (await reply.json())["metadata"]["resourceVersion"]
    stream = await other.get(CMS, params={"watch": "1", "resourceVersion": since},
                             timeout=aiohttp.ClientTimeout(total=None, sock_read=30))
    async with one.post(CMS, json=configmap("across", {"k": "v"})) as reply:
        assert reply.status == 201
        created = await reply.json()
    async with aiohttp.ClientSession(base_url=str(stream.url.origin())) as watcher:  # the watch holds `other`'s connection
        async with watcher.get(f"{CMS}/across") as reply:  # the read: any worker but quorum-consistent
            assert (await reply.json())["metadata"]["uid"] == created["metadata"]["uid"]
    event = json.loads(await asyncio.wait_for(stream.content.readline(), 10))
    stream.close()
    assert (event["type"], event["object"]["metadata"]["uid"]) == ("ADDED", created["metadata"]["uid"])
    async with other.get(f"{CMS}/across") as reply:
        assert (await reply.json())["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
    async with other.get(f"{CMS}/across", params={"resourceVersion": "0"}) as reply:  # from its watch cache, which saw it
        assert (await reply.json())["metadata"]["uid"] == created["metadata"]["uid"]


async def test_the_controllers_run_once(pinned: dict[int, aiohttp.ClientSession]) -> None:
    one, other = pinned.values()

    async def holder() -> str:
        async with other.get(LEASE) as reply:
            return (await reply.json()).get("spec", {}).get("holderIdentity", "") if reply.status == 200 else ""

    assert await eventually(holder, 30, what="a Lease holder")
    async with one.post(DEPLOYMENTS, json=deployment("once", replicas=1)) as reply:
        assert reply.status == 201

    async def available() -> bool:
        async with other.get(f"{DEPLOYMENTS}/once") as reply:
            return (await reply.json()).get("status", {}).get("availableReplicas") == 1

    await eventually(available, 30, what="the Deployment available")
    async with one.get(REPLICASETS, params={"labelSelector": "app=once"}) as reply:
        assert len((await reply.json())["items"]) == 1


async def test_a_crd_created_through_one_worker_is_served_by_every_worker(
        pinned: dict[int, aiohttp.ClientSession]) -> None:
    body = crd_body("workers.example.com", "widgets", "Widget", {"type": "object", "x-kubernetes-preserve-unknown-fields": True})
    one = next(iter(pinned.values()))
    async with one.post(CRDS, json=body) as reply:
        assert reply.status == 201
    path = collection(body)
    for worker, session in pinned.items():
        async def served_here(session: aiohttp.ClientSession = session) -> bool:
            async with session.get(path) as reply:
                return reply.status == 200

        await eventually(served_here, 15, what=f"{path} on worker {worker}")
        widget = {"apiVersion": "workers.example.com/v1", "kind": "Widget", "metadata": {"name": f"w{worker}"}}
        async with session.post(path, json=widget) as reply:
            assert reply.status == 201, await reply.text()
    for session in pinned.values():
        async with session.get(path) as reply:
            assert len((await reply.json())["items"]) == 2


async def test_a_serviceaccount_token_issued_by_one_worker_authenticates_on_the_other(
        pinned: dict[int, aiohttp.ClientSession]) -> None:
    one, other = pinned.values()
    token_path = "/api/v1/namespaces/default/serviceaccounts/default/token"

    async def issued() -> str:
        async with one.post(token_path, json={"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                                              "spec": {}}) as reply:
            return (await reply.json())["status"]["token"] if reply.status == 201 else ""

    token = await eventually(issued, 30, what="a token of the default ServiceAccount")
    review = {"apiVersion": "authentication.k8s.io/v1", "kind": "SelfSubjectReview"}
    async with other.post("/apis/authentication.k8s.io/v1/selfsubjectreviews", json=review,
                          headers={"Authorization": f"Bearer {token}"}) as reply:
        assert reply.status == 201, await reply.text()
        user = (await reply.json())["status"]["userInfo"]["username"]
    assert user == "system:serviceaccount:default:default"


async def test_sigterm_stops_every_worker(served: Served, pinned: dict[int, aiohttp.ClientSession]) -> None:
    served.process.terminate()
    assert served.process.wait(timeout=30) == 0
    assert not any(Path(f"/proc/{pid}").exists() for pid in pinned)
    logs = "".join(served.logs)  # the start-up of both, racing on one etcd, let nothing through
    assert "Traceback" not in logs and " ERROR " not in logs, logs


def test_a_worker_that_dies_stops_the_server(tmp_path: Path) -> None:
    """Not restarted: the parent stops the other worker and exits 1, for its supervisor to act."""
    assert etcd_process.ETCD is not None
    storage = f"etcd://127.0.0.1:{etcd_process.shared().client_port}/kplane-{uuid.uuid4().hex[:8]}"
    with serving(tmp_path, "--workers", "2", "--storage", storage, "--no-controllers", "--plugins", "core") as server:
        workers = [int(pid) for pid in subprocess.run(["pgrep", "-P", str(server.process.pid)], capture_output=True,
                                                      text=True).stdout.split()]
        assert len(workers) == 2
        os.kill(workers[0], signal.SIGKILL)
        assert server.process.wait(timeout=30) == 1
        assert not Path(f"/proc/{workers[1]}").exists()


def test_several_workers_on_a_storage_not_known_to_take_them_are_refused(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--workers", "2", "--http", "--plugins", "core",
                           "--data-dir", str(tmp_path), "--port", "0", "--storage", "journal://x"],
                          capture_output=True, text=True, timeout=60, env={**os.environ})
    assert done.returncode == 2
    assert "--workers above 1 needs the storage to take writes from several processes" in done.stderr


def test_a_worker_that_cannot_start_stops_the_server_with_its_reason(tmp_path: Path) -> None:
    """Here the database is a lone server's (the workers' shared lock cannot be had beside its
    exclusive one): each worker says why it stopped, in one line, and the parent exits 1."""
    with serving(tmp_path / "lone", "--no-controllers", "--plugins", "core"):
        done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--workers", "2", "--http",
                               "--plugins", "core", "--no-controllers", "--data-dir", str(tmp_path / "lone"),
                               "--port", "0"], capture_output=True, text=True, timeout=60, env={**os.environ})
    assert done.returncode == 1
    assert f"kplane: {tmp_path / 'lone' / 'state.db'} is in use by another process" in done.stderr
    assert "Traceback" not in done.stderr, done.stderr
