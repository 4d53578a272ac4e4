"""kplane on etcd, end to end: two `kplane serve` processes sharing one real etcd, and a server
that lives through an etcd restart."""

from __future__ import annotations

import asyncio
import json
import time
import uuid
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest

from tests.builders import configmap, deployment
from tests.etcd_process import EtcdProcess
from tests.servers import Served, serving
from tests.waiting import eventually

CMS = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
PODS = "/api/v1/namespaces/default/pods"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kplane-controller-manager"


def storage_url(etcd: EtcdProcess) -> str:
    return f"etcd://127.0.0.1:{etcd.client_port}/kplane-{uuid.uuid4().hex[:8]}"


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=30)) as session:
        yield session


async def watch_lines(session: aiohttp.ClientSession, url: str, since: str) -> aiohttp.ClientResponse:
    reply = await session.get(url, params={"watch": "1", "resourceVersion": since},
                              timeout=aiohttp.ClientTimeout(total=None, sock_read=30))
    assert reply.status == 200
    return reply


async def test_a_write_through_one_server_reaches_a_watch_on_the_other(etcd_server: EtcdProcess, tmp_path: Path,
                                                                      session: aiohttp.ClientSession) -> None:
    url = storage_url(etcd_server)
    with serving(tmp_path / "a", "--storage", url, "--no-controllers") as a, \
            serving(tmp_path / "b", "--storage", url, "--no-controllers") as b:
        async with session.get(b.url + CMS) as reply:
            since = (await reply.json())["metadata"]["resourceVersion"]
        stream = await watch_lines(session, b.url + CMS, since)
        async with session.post(a.url + CMS, json=configmap("shared", {"k": "v"})) as reply:
            assert reply.status == 201
            created = await reply.json()
        event = json.loads(await asyncio.wait_for(stream.content.readline(), 10))
        stream.close()
        assert event["type"] == "ADDED"
        assert event["object"]["metadata"]["uid"] == created["metadata"]["uid"]
        assert event["object"]["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]
        async with session.get(f"{b.url}{CMS}/shared") as reply:  # and a plain read agrees
            assert (await reply.json())["metadata"]["resourceVersion"] == created["metadata"]["resourceVersion"]


async def test_concurrent_updates_through_both_servers_conflict_and_lose_nothing(
        etcd_server: EtcdProcess, tmp_path: Path, session: aiohttp.ClientSession) -> None:
    url = storage_url(etcd_server)
    with serving(tmp_path / "a", "--storage", url, "--no-controllers") as a, \
            serving(tmp_path / "b", "--storage", url, "--no-controllers") as b:
        async with session.post(a.url + CMS, json=configmap("counter", {"n": "0"})) as reply:
            assert reply.status == 201
        conflicts = 0

        async def increment(server: Served) -> None:
            nonlocal conflicts
            while True:  # read-modify-write with the resourceVersion read: optimistic concurrency
                async with session.get(f"{server.url}{CMS}/counter") as reply:
                    obj = await reply.json()
                obj["data"]["n"] = str(int(obj["data"]["n"]) + 1)
                async with session.put(f"{server.url}{CMS}/counter", json=obj) as reply:
                    if reply.status == 200:
                        return
                    body = await reply.json()
                    assert (reply.status, body["reason"]) == (409, "Conflict"), body
                    conflicts += 1

        await asyncio.gather(*(increment(server) for _ in range(20) for server in (a, b)))
        for server in (a, b):
            async with session.get(f"{server.url}{CMS}/counter") as reply:
                assert (await reply.json())["data"]["n"] == "40"
        assert conflicts > 0  # 40 concurrent writers of one object cannot all have won first time


async def test_only_one_servers_controllers_lead_and_the_other_takes_over(
        etcd_server: EtcdProcess, tmp_path: Path, session: aiohttp.ClientSession) -> None:
    url = storage_url(etcd_server)
    fast = ("--leader-elect-lease-duration", "3", "--leader-elect-renew-deadline", "2",
            "--leader-elect-retry-period", "0.5", "--simulated-nodes", "2")
    with serving(tmp_path / "a", "--storage", url, "--identity", "server-a", *fast) as a, \
            serving(tmp_path / "b", "--storage", url, "--identity", "server-b", *fast) as b:

        async def holder() -> str:
            async with session.get(a.url + LEASE) as reply:
                return (await reply.json())["spec"].get("holderIdentity", "") if reply.status == 200 else ""

        leader = await eventually(holder, 20)
        assert leader in ("server-a", "server-b")
        body = deployment("web", replicas=3)
        async with session.post(a.url + DEPLOYMENTS, json=body) as reply:
            assert reply.status == 201

        async def three_pods() -> bool:
            return await pod_count(session, b) >= 3

        await eventually(three_pods, 20)
        await asyncio.sleep(2)  # two leaders' ReplicaSet controllers would each create the 3 pods
        assert await pod_count(session, b) == 3
        assert await holder() == leader

        (a if leader == "server-a" else b).process.terminate()  # the leader goes away (and hands the Lease back)
        survivor = b if leader == "server-a" else a

        async def new_holder() -> str:
            async with session.get(survivor.url + LEASE) as reply:
                held = (await reply.json())["spec"].get("holderIdentity", "")
            return held if held and held != leader else ""

        assert await eventually(new_holder, 20) != leader
        async with session.patch(f"{survivor.url}{DEPLOYMENTS}/web", json={"spec": {"replicas": 5}},
                                 headers={"Content-Type": "application/merge-patch+json"}) as reply:
            assert reply.status == 200

        async def five_pods() -> bool:  # the new leader's controllers act
            return await pod_count(session, survivor) == 5

        await eventually(five_pods, 20)


async def pod_count(session: aiohttp.ClientSession, server: Served) -> int:
    async with session.get(server.url + PODS) as reply:
        return len((await reply.json())["items"])


async def test_the_server_lives_through_an_etcd_restart(private_etcd: EtcdProcess, tmp_path: Path,
                                                        session: aiohttp.ClientSession) -> None:
    etcd = private_etcd
    with serving(tmp_path / "a", "--storage", storage_url(etcd), "--no-controllers") as a:
        async with session.post(a.url + CMS, json=configmap("before", {"k": "v"})) as reply:
            assert reply.status == 201
            since = (await reply.json())["metadata"]["resourceVersion"]
        stream = await watch_lines(session, a.url + CMS, since)

        etcd.stop()
        began = time.monotonic()
        async with session.get(f"{a.url}{CMS}/before") as reply:
            status = await reply.json()
        assert reply.status in (503, 504), status
        assert status["kind"] == "Status" and status["reason"] in ("ServiceUnavailable", "Timeout")
        async with session.post(a.url + CMS, json=configmap("while-down")) as reply:
            assert reply.status in (503, 504)
        assert time.monotonic() - began < 15  # failed promptly, did not hang

        etcd.start()

        async def served() -> bool:
            async with session.get(f"{a.url}{CMS}/before") as reply:
                return reply.status == 200

        await eventually(served, 20)
        async with session.post(a.url + CMS, json=configmap("after", {"k": "v"})) as reply:
            assert reply.status == 201
            after = await reply.json()

        # The watch opened before the restart either carries on or ends, so the client watches
        # again from the last resourceVersion it saw; either way it sees the new object.
        line = await asyncio.wait_for(stream.content.readline(), 15)
        if not line:
            stream = await watch_lines(session, a.url + CMS, since)
            line = await asyncio.wait_for(stream.content.readline(), 15)
        stream.close()
        event = json.loads(line)
        assert event["type"] in ("ADDED", "ERROR"), event
        if event["type"] == "ERROR":  # history gone: a 410 tells the client to relist
            assert event["object"]["code"] == 410
        else:
            assert event["object"]["metadata"]["name"] == "after"
            assert event["object"]["metadata"]["resourceVersion"] == after["metadata"]["resourceVersion"]
