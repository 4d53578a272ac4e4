"""The HA scenario that tests/test_etcd_ha.py checks and bench/ha_bench.py measures: two
`kplane serve` processes on a 3-member etcd cluster; writers create ConfigMaps through both while
the etcd leader is killed, and a watch on each server records what it saw; then the server whose
controllers hold the Lease is killed and the other's take over.

Everything is recorded with ``time.monotonic()`` stamps; what to assert or print is the caller's.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import aiohttp

from tests.builders import configmap, deployment
from tests.etcd_process import EtcdCluster
from tests.servers import Served, serving

NAMESPACE = "default"
CMS = f"/api/v1/namespaces/{NAMESPACE}/configmaps"
DEPLOYMENTS = f"/apis/apps/v1/namespaces/{NAMESPACE}/deployments"
REPLICASETS = f"/apis/apps/v1/namespaces/{NAMESPACE}/replicasets"
LEASE = "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kplane-controller-manager"
LEASE_DURATION = 4.0  # seconds: --leader-elect-lease-duration of both servers


def leader_election_flags(lease_duration: float = LEASE_DURATION) -> tuple[str, ...]:
    """A short Lease, renewed well within it (kube's defaults keep the same proportions)."""
    return ("--leader-elect-lease-duration", f"{lease_duration:g}",
            "--leader-elect-renew-deadline", f"{lease_duration * 2 / 3:g}",
            "--leader-elect-retry-period", f"{lease_duration / 8:g}")


@contextlib.contextmanager
def two_servers(cluster: EtcdCluster, data: Path, prefix: str = "/kplane-ha",
                lease_duration: float = LEASE_DURATION) -> Iterator[list[Served]]:
    """``server-0`` and ``server-1``, each with every member of ``cluster`` as its storage."""
    url = f"etcd://{cluster.storage_hosts()}{prefix}"
    flags = ("--storage", url, "--simulated-nodes", "0", *leader_election_flags(lease_duration))
    with serving(data / "server-0", *flags, "--identity", "server-0") as first, \
            serving(data / "server-1", *flags, "--identity", "server-1") as second:
        yield [first, second]


@dataclass
class Write:
    """One create: which server took it, its HTTP status, when it began and ended."""

    server: int
    name: str
    status: int
    began: float
    ended: float
    resource_version: str = ""


@dataclass
class LeaderKill:
    """What happened around the kill of the etcd leader."""

    writes: list[Write]
    started: float
    killed_at: float
    elected_at: float  # when the surviving members agreed on a new leader
    ended: float
    #: per server: the (type, name, resourceVersion) of each event its watch delivered
    events: list[list[tuple[str, str, str]]]
    #: per server: name -> resourceVersion of every ConfigMap listed afterwards
    listed: list[dict[str, str]]

    @property
    def acknowledged(self) -> list[Write]:
        return [write for write in self.writes if write.status == 201]

    @property
    def failed(self) -> list[Write]:
        return [write for write in self.writes if write.status != 201]

    @property
    def election(self) -> float:
        return self.elected_at - self.killed_at

    def lost(self) -> list[Write]:
        """Acknowledged creates that some server's list does not have, at their resourceVersion."""
        return [write for write in self.acknowledged
                if any(listed.get(write.name) != write.resource_version for listed in self.listed)]

    def watch_gaps(self, server: int) -> list[str]:
        """What is wrong with ``server``'s watch: a listed object it missed or saw twice, or an
        event out of revision order."""
        problems: list[str] = []
        seen: dict[str, int] = {}
        previous = 0
        for kind, name, version in self.events[server]:
            seen[name] = seen.get(name, 0) + 1
            if int(version) <= previous:
                problems.append(f"{kind} {name} at {version} after {previous}")
            previous = int(version)
        for name, version in self.listed[server].items():
            if seen.get(name) != 1:
                problems.append(f"{name} (at {version}) seen {seen.get(name, 0)} times")
        return problems

    def longest_stall(self) -> float:
        """The longest stretch (seconds) in which no create was acknowledged."""
        ends = sorted([self.started, *(write.ended for write in self.acknowledged), self.ended])
        return max(later - earlier for earlier, later in zip(ends, ends[1:]))

    def throughput(self, begin: float, end: float) -> float:
        """Acknowledged creates per second that ended between ``begin`` and ``end``."""
        count = sum(1 for write in self.acknowledged if begin <= write.ended < end)
        return count / (end - begin) if end > begin else 0.0


async def _record_watch(session: aiohttp.ClientSession, server: Served, since: str,
                        into: list[tuple[str, str, str]], opened: asyncio.Event) -> None:
    params = {"watch": "1", "resourceVersion": since}
    async with session.get(server.url + CMS, params=params,
                           timeout=aiohttp.ClientTimeout(total=None, sock_read=None)) as reply:
        assert reply.status == 200, await reply.text()
        opened.set()
        async for line in reply.content:
            event = json.loads(line)
            meta = event["object"]["metadata"]
            into.append((event["type"], meta.get("name", ""), meta.get("resourceVersion", "0")))


async def _write_until(session: aiohttp.ClientSession, servers: list[Served], run: str, writer: int,
                       stop: asyncio.Event, into: list[Write]) -> None:
    server = writer % len(servers)
    count = 0
    while not stop.is_set():
        name = f"ha-{run}-{writer}-{count}"
        count += 1
        began = time.monotonic()
        try:
            async with session.post(servers[server].url + CMS, json=configmap(name, {"n": str(count)})) as reply:
                body = await reply.json()
                status = reply.status
        except (aiohttp.ClientError, TimeoutError):
            body, status = {}, 0
        version = body.get("metadata", {}).get("resourceVersion", "") if status == 201 else ""
        into.append(Write(server, name, status, began, time.monotonic(), version))


async def list_names(session: aiohttp.ClientSession, server: Served) -> tuple[str, dict[str, str]]:
    """A server's ConfigMaps: the list's resourceVersion and name -> resourceVersion."""
    async with session.get(server.url + CMS) as reply:
        assert reply.status == 200, await reply.text()
        body = await reply.json()
    items = {item["metadata"]["name"]: item["metadata"]["resourceVersion"] for item in body["items"]}
    return body["metadata"]["resourceVersion"], items


async def kill_etcd_leader_under_load(session: aiohttp.ClientSession, cluster: EtcdCluster,
                                      servers: list[Served], *, writers: int = 16,
                                      before: float = 1.0, after: float = 1.0) -> LeaderKill:
    """``writers`` concurrent creates (spread over ``servers``) for ``before`` seconds, the kill
    of the etcd leader, the election, ``after`` more seconds; then what the watches and lists
    say once every watch has caught up with the final list (or 30 s passed)."""
    since, _ = await list_names(session, servers[0])
    events: list[list[tuple[str, str, str]]] = [[] for _ in servers]
    opened = [asyncio.Event() for _ in servers]
    watches = [asyncio.create_task(_record_watch(session, server, since, into, ready))
               for server, into, ready in zip(servers, events, opened)]
    try:
        await asyncio.wait_for(asyncio.gather(*(ready.wait() for ready in opened)), 10)
        stop, writes = asyncio.Event(), []
        started = time.monotonic()
        run = uuid.uuid4().hex[:6]  # names of this run's own: a round after another creates anew
        load = [asyncio.create_task(_write_until(session, servers, run, n, stop, writes)) for n in range(writers)]
        await asyncio.sleep(before)
        leader = await asyncio.to_thread(cluster.leader)
        killed_at = time.monotonic()
        await asyncio.to_thread(cluster.kill, leader)
        await asyncio.to_thread(cluster.leader)
        elected_at = time.monotonic()
        await asyncio.sleep(after)
        stop.set()
        await asyncio.gather(*load)
        ended = time.monotonic()
        listed = [{name: version for name, version in (await list_names(session, server))[1].items()
                   if name.startswith(f"ha-{run}-")} for server in servers]
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline and any(
                not set(final) <= {name for _, name, _ in seen} for seen, final in zip(events, listed)):
            await asyncio.sleep(0.05)
    finally:
        for watch in watches:
            watch.cancel()
        await asyncio.gather(*watches, return_exceptions=True)
    return LeaderKill(writes, started, killed_at, elected_at, ended, events, listed)


@dataclass
class ControllerFailover:
    """What happened when the server holding the controllers' Lease was killed."""

    killed: str  # the holder identity of the killed server
    holder: str  # the identity that holds the Lease afterwards
    took_over: float  # seconds from the kill until the Lease named another holder
    acted: float  # seconds from the kill until a Deployment created after it had its ReplicaSet
    survivor_statuses: list[int] = field(default_factory=list)  # of requests to the survivor


async def _holder(session: aiohttp.ClientSession, server: Served) -> str:
    async with session.get(server.url + LEASE) as reply:
        if reply.status != 200:
            return ""
        return str((await reply.json())["spec"].get("holderIdentity", ""))


async def kill_controller_leader(session: aiohttp.ClientSession, servers: list[Served],
                                 timeout: float = 30.0) -> ControllerFailover:
    """SIGKILL the server whose identity holds the Lease (``server-N``); then poll the survivor
    for the Lease's new holder and for the ReplicaSet of a Deployment created right after."""
    deadline = time.monotonic() + timeout
    killed = ""
    while not killed.startswith("server-"):
        assert time.monotonic() < deadline, "no server holds the controllers' Lease"
        killed = await _holder(session, servers[0])
        await asyncio.sleep(0.05)
    victim = servers[int(killed.removeprefix("server-"))]
    survivor = next(server for server in servers if server is not victim)
    victim.process.kill()
    victim.process.wait(timeout=10)
    killed_at = time.monotonic()
    statuses: list[int] = []
    async with session.post(survivor.url + DEPLOYMENTS, json=deployment("after-failover", replicas=1)) as reply:
        statuses.append(reply.status)
    holder, took_over, acted = killed, 0.0, 0.0
    while (not took_over or not acted) and time.monotonic() < deadline:
        if not took_over:
            holder = await _holder(session, survivor)
            if holder and holder != killed:
                took_over = time.monotonic() - killed_at
        if not acted:
            async with session.get(survivor.url + REPLICASETS,
                                   params={"labelSelector": "app=after-failover"}) as reply:
                statuses.append(reply.status)
                if reply.status == 200 and (await reply.json())["items"]:
                    acted = time.monotonic() - killed_at
        await asyncio.sleep(0.05)
    return ControllerFailover(killed, holder, took_over, acted, statuses)
