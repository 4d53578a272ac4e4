"""HA on a 3-member etcd cluster behind two `kplane serve` processes: the etcd leader dies under a
16-writer load, then the server running the controllers dies (tests/ha_scenario.py drives both).

The invariants: no acknowledged create is lost, requests fail (503/504, never 500) only after the
leader's kill, a watch on each server sees every object exactly once and in revision order; the
survivor of the kplane kill keeps serving, takes the controllers' Lease and its controllers act.
"""

from __future__ import annotations

import sys
from collections.abc import AsyncIterator, Iterator
from pathlib import Path

import aiohttp
import pytest

from tests import etcd_process
from tests.etcd_process import EtcdCluster
from tests.ha_scenario import LEASE_DURATION, kill_controller_leader, kill_etcd_leader_under_load, two_servers
from tests.servers import Served

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
