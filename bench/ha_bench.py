"""HA on a 3-member etcd cluster: two `kplane serve` processes on it (each given all three
endpoints), 16 writers creating ConfigMaps through both, and the etcd leader killed; then the
server that runs the controllers killed (the scenario of tests/ha_scenario.py).

Per round (the killed member is restarted between rounds, and the next leader killed):

* write throughput (acknowledged creates/s) before the kill, during (from the kill until 2 s
  after the new leader: the time a write waits on a member before it is settled) and after,
  with during/before and after/before ratios;
* etcd's election time (from the kill until the surviving members' ``/v3/maintenance/status``
  name one new leader) against the longest stretch without an acknowledged write, and the
  failed requests (count, and the window they fall in);
* lost acknowledged writes and watch gaps (both must be 0).

Then the controllers' failover: seconds from the kill of the Lease holder until the other server
holds the Lease, against the lease duration, and until a Deployment created after the kill has
its ReplicaSet.

etcd keeps its data on disk (the temp dir), with fsync, as in production.

    python bench/ha_bench.py [--rounds 3] [--seconds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
from pathlib import Path

import aiohttp

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
from tests.etcd_process import EtcdCluster  # noqa: E402
from tests.ha_scenario import (  # noqa: E402
    LEASE_DURATION,
    LeaderKill,
    kill_controller_leader,
    kill_etcd_leader_under_load,
    two_servers,
)

WRITE_SETTLE = 2.0  # seconds: kplane's etcd client gives a write this long on one member
ELECTION_TIMEOUT = 1.0  # seconds: etcd's default --election-timeout, which the members run with


def row(number: int, run: LeaderKill) -> str:
    during_end = run.elected_at + WRITE_SETTLE
    before = run.throughput(run.started + 0.5, run.killed_at)  # past the warm-up
    during = run.throughput(run.killed_at, during_end)
    after = run.throughput(during_end, run.ended)
    failed = run.failed
    window = (f"{min(w.began for w in failed) - run.killed_at:+.2f}..{max(w.ended for w in failed) - run.killed_at:+.2f}"
              if failed else "-")
    gaps = sum(len(run.watch_gaps(server)) for server in range(len(run.listed)))
    return (f"{number:>5} {before:>8.0f} {during:>8.0f} {after:>8.0f} {during / before:>7.2f} {after / before:>7.2f}"
            f" {run.election:>9.2f} {run.longest_stall():>7.2f} {len(failed):>6} {window:>13}"
            f" {len(run.lost()):>5} {gaps:>5}")


async def main(rounds: int, seconds: float) -> None:
    with tempfile.TemporaryDirectory(prefix="kplane-ha-bench-") as work:
        cluster = EtcdCluster(3, parent=work)
        cluster.start()
        try:
            with two_servers(cluster, Path(work)) as servers:
                async with aiohttp.ClientSession(timeout=aiohttp.ClientTimeout(total=60)) as session:
                    print("creates/s through both servers, 16 writers; seconds relative to the kill of the etcd leader")
                    print("round   before   during    after  dur/bf  aft/bf  election   stall failed  fail window"
                          "  lost  gaps")
                    for number in range(1, rounds + 1):
                        run = await kill_etcd_leader_under_load(session, cluster, servers, before=seconds,
                                                                after=seconds)
                        print(row(number, run), flush=True)
                        for member in cluster.members:
                            if not member.running:
                                await asyncio.to_thread(cluster.start_member, member)
                        await asyncio.to_thread(cluster.leader)
                    failover = await kill_controller_leader(session, servers)
                    print(f"etcd election timeout {ELECTION_TIMEOUT:g}s; a write is settled after {WRITE_SETTLE:g}s"
                          " on a member that does not answer")
                    print(f"controllers: Lease taken over {failover.took_over:.2f}s after the kill of {failover.killed}"
                          f" (lease duration {LEASE_DURATION:g}s, ratio {failover.took_over / LEASE_DURATION:.2f});"
                          f" ReplicaSet of a new Deployment after {failover.acted:.2f}s")
        finally:
            cluster.cleanup()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=3.0, help="load before the kill and after the election")
    arguments = parser.parse_args()
    asyncio.run(main(arguments.rounds, arguments.seconds))
