"""HA on a 3-member etcd cluster: kplane's etcd client settles writes whose member froze; then,
behind two `kplane serve` processes, the etcd leader dies under a 16-writer load, and the server
running the controllers dies (tests/ha_scenario.py drives both).

The invariants: no acknowledged create is lost, requests fail (503/504, never 500) only after the
leader's kill, a watch on each server sees every object exactly once and in revision order; the
survivor of the kplane kill keeps serving, takes the controllers' Lease and its controllers act.
"""

from __future__ import annotations

import asyncio
import sys
import uuid
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from pathlib import Path

import aiohttp
import pytest

from tests import etcd_process
from kplane.core.storage.etcd import EtcdStorage
from kplane.core.storage.interface import EventType, WatchEvent
from tests.etcd_process import EtcdCluster, EtcdProcess
from tests.ha_scenario import LEASE_DURATION, kill_controller_leader, kill_etcd_leader_under_load, two_servers
from tests.servers import Served
from tests.waiting import eventually

pytestmark = pytest.mark.skipif(etcd_process.ETCD is None,
                                reason="etcd is not on PATH (.ci/run installs the etcd-server package)")


@pytest.fixture(scope="module")
def cluster() -> Iterator[EtcdCluster]:
    cluster = EtcdCluster(3)
    cluster.start()
    try:
        yield cluster
    finally:
        cluster.cleanup()


@pytest.fixture(scope="module")
def servers(cluster: EtcdCluster, tmp_path_factory: pytest.TempPathFactory) -> Iterator[list[Served]]:
    with two_servers(cluster, Path(tmp_path_factory.mktemp("ha"))) as servers:
        yield servers


OpenFirst = Callable[[EtcdProcess], Awaitable[EtcdStorage]]


@pytest.fixture
async def open_first(cluster: EtcdCluster) -> AsyncIterator[OpenFirst]:
    """Opens storages on every member, ``first`` the one tried first, all under one prefix."""
    prefix, opened = f"/ha-{uuid.uuid4().hex[:8]}", []

    async def open_storage(first: EtcdProcess) -> EtcdStorage:
        others = [member.endpoint for member in cluster.members if member is not first]
        opened.append(await EtcdStorage.open([first.endpoint, *others], prefix=prefix, compact_interval=0))
        return opened[-1]

    yield open_storage
    for storage in opened:
        await storage.close()


async def test_writes_sent_to_a_frozen_member_are_settled_on_another_and_applied_once(
        cluster: EtcdCluster, open_first: OpenFirst) -> None:
    for member in cluster.members:  # an earlier test may have killed one
        if not member.running:
            await asyncio.to_thread(cluster.start_member, member)
    leader = await asyncio.to_thread(cluster.leader)
    follower = next(member for member in cluster.members if member is not leader)
    watcher, creator, updater = [await open_first(follower) for _ in range(3)]  # each tries it first
    watch = watcher.watch("/registry/", from_revision=await watcher.current_revision())
    events: list[WatchEvent] = []

    async def collect() -> None:
        async for event in watch:
            events.append(event)

    consumer = asyncio.create_task(collect())
    follower.pause()  # it accepts the connection and the request, and answers nothing: an unknown outcome
    try:
        created = await creator.create("/registry/cm/a", b"v1")
        updated = await updater.update("/registry/cm/a", b"v2", expected_revision=created.mod_revision)
    finally:
        follower.resume()  # it now runs the frozen txns: their compares fail
    sentinel = await watcher.create("/registry/cm/sentinel", b"after the frozen txns")

    async def through_sentinel() -> bool:
        return any(event.kv.key == sentinel.key for event in events)

    await eventually(through_sentinel, 20)
    consumer.cancel()
    assert [(e.type, e.kv.value, e.revision) for e in events if e.kv.key == "/registry/cm/a"] == [
        (EventType.ADDED, b"v1", created.mod_revision), (EventType.MODIFIED, b"v2", updated.mod_revision)]
    assert await watcher.get("/registry/cm/a") == updated


@pytest.fixture
async def session() -> AsyncIterator[aiohttp.ClientSession]:
    async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
        yield session


async def test_killing_the_etcd_leader_under_load_loses_no_acknowledged_write_and_leaves_no_watch_gap(
        cluster: EtcdCluster, servers: list[Served], session: aiohttp.ClientSession) -> None:
    run = await kill_etcd_leader_under_load(session, cluster, servers, writers=16)
    failed = run.failed
    window = (f"{min(w.began for w in failed) - run.killed_at:+.2f}s..{max(w.ended for w in failed) - run.killed_at:+.2f}s"
              if failed else "none")
    print(f"\n{len(run.acknowledged)} creates acknowledged, {len(failed)} failed (window around the kill: {window}),"
          f" election {run.election:.2f}s, longest stretch without an acknowledgement {run.longest_stall():.2f}s",
          file=sys.stderr)
    assert len(run.acknowledged) > 16
    assert run.lost() == []
    assert {w.status for w in failed} <= {503, 504}, [(w.name, w.status) for w in failed]
    assert all(w.ended > run.killed_at for w in failed), "a request failed before the leader was killed"
    for server in range(len(servers)):
        assert run.watch_gaps(server) == []
    # every acknowledged create is one of the listed objects, which both watches saw once each
    assert {w.name for w in run.acknowledged} <= set(run.listed[0]) == set(run.listed[1])


async def test_killing_the_server_that_runs_the_controllers_moves_them_to_the_other(
        servers: list[Served], session: aiohttp.ClientSession) -> None:
    failover = await kill_controller_leader(session, servers)
    print(f"\nLease moved from {failover.killed} to {failover.holder} {failover.took_over:.2f}s after the kill"
          f" (lease duration {LEASE_DURATION:g}s); the ReplicaSet appeared after {failover.acted:.2f}s", file=sys.stderr)
    assert failover.holder != failover.killed and failover.took_over > 0
    assert failover.acted > 0
    assert set(failover.survivor_statuses) == {200, 201}
