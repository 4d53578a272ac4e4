"""What only the etcd backend promises, checked against a real etcd: key prefixes on the wire,
several clients on one etcd, endpoint failover, outages and restarts, and compaction that another
client or the periodic compactor ran.
"""

from __future__ import annotations

import asyncio
import base64
import itertools
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

import aiohttp
import pytest

from kplane.core.storage.etcd import EtcdStorage
from kplane.core.storage.factory import StorageURLError, open_storage
from kplane.core.storage.interface import (
    CompactedError,
    ConflictError,
    EventType,
    StorageError,
    UnavailableError,
    WatchEvent,
)
from tests.etcd_process import ETCD, EtcdProcess, free_port
from tests.waiting import eventually

pytestmark = pytest.mark.skipif(
    ETCD is None, reason="etcd is not on PATH (.ci/run installs the etcd-server package)"
)

OpenEtcd = Callable[..., Awaitable[EtcdStorage]]

_prefixes = itertools.count()
OUTAGE_BOUND = 10.0  # seconds a request may take while etcd is down: "does not hang"


@pytest.fixture
async def open_etcd() -> AsyncIterator[OpenEtcd]:
    """Opens EtcdStorages (a fresh prefix unless given, no periodic compaction unless asked);
    closes them after the test."""
    opened: list[EtcdStorage] = []

    async def make(endpoints: list[str], **options: Any) -> EtcdStorage:
        options.setdefault("prefix", f"/etcd-test-{next(_prefixes)}")
        options.setdefault("compact_interval", 0)
        storage = await EtcdStorage.open(endpoints, **options)
        opened.append(storage)
        return storage

    yield make
    for storage in opened:
        await storage.close()


@pytest.fixture
async def proxy(etcd_server: EtcdProcess) -> AsyncIterator[Proxy]:
    """A relay to the shared etcd, listening until the test ends."""
    relay = Proxy(etcd_server.client_port)
    await relay.restore()
    yield relay
    await relay.cut()


class Proxy:
    """A TCP relay in front of etcd that a test can cut (dropping every connection and refusing
    new ones) and restore, to break a client's streams while etcd keeps running."""

    def __init__(self, target_port: int) -> None:
        self._target_port = target_port
        self.port = free_port()
        self._server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def restore(self) -> None:
        self._server = await asyncio.start_server(self._relay, "127.0.0.1", self.port)

    async def cut(self) -> None:
        if self._server is None:
            return
        server, self._server = self._server, None
        server.close()
        for writer in list(self._writers):
            writer.transport.abort()
        await server.wait_closed()

    async def _relay(
        self, client_in: asyncio.StreamReader, client_out: asyncio.StreamWriter
    ) -> None:
        etcd_in, etcd_out = await asyncio.open_connection("127.0.0.1", self._target_port)
        self._writers |= {client_out, etcd_out}
        await asyncio.gather(
            self._pipe(client_in, etcd_out), self._pipe(etcd_in, client_out), return_exceptions=True
        )
        self._writers -= {client_out, etcd_out}

    @staticmethod
    async def _pipe(source: asyncio.StreamReader, sink: asyncio.StreamWriter) -> None:
        try:
            while data := await source.read(65536):
                sink.write(data)
                await sink.drain()
        finally:
            sink.transport.abort()


async def raw_range(endpoint: str, key: str) -> list[dict[str, str]]:
    """The kvs etcd itself holds at ``key``, read straight from the gateway."""
    body = {"key": base64.b64encode(key.encode()).decode()}
    async with aiohttp.ClientSession() as session:
        async with session.post(f"{endpoint}/v3/kv/range", json=body) as response:
            return list((await response.json()).get("kvs", []))


async def collect(watch: AsyncIterator[WatchEvent], into: list[WatchEvent]) -> None:
    async for event in watch:
        into.append(event)


async def wait_for_events(received: list[WatchEvent], count: int, timeout: float = 10.0) -> None:
    """Wait (bounded) until ``received`` holds ``count`` events."""
    await eventually(lambda: len(received) >= count, timeout, what=f"{count} events")


# --- prefixes and several clients ------------------------------------------------------------


async def test_keys_live_under_the_prefix_on_the_wire(
    etcd_server: EtcdProcess, open_etcd: OpenEtcd
) -> None:
    tenant = await open_etcd([etcd_server.endpoint], prefix="/tenant-a")
    other = await open_etcd([etcd_server.endpoint], prefix="/tenant-b")
    kv = await tenant.create("/registry/pods/default/web", b"spec")

    [raw] = await raw_range(etcd_server.endpoint, "/tenant-a/registry/pods/default/web")
    assert base64.b64decode(raw["value"]) == b"spec"
    assert int(raw["mod_revision"]) == kv.mod_revision
    assert await raw_range(etcd_server.endpoint, "/registry/pods/default/web") == []
    listed = await tenant.list("/registry/")
    assert [item.key for item in listed.items] == ["/registry/pods/default/web"]
    assert (await other.list("/registry/")).items == []
    assert await other.get("/registry/pods/default/web") is None


async def test_two_storages_on_one_etcd_share_writes_and_conflicts(
    etcd_server: EtcdProcess, open_etcd: OpenEtcd
) -> None:
    first = await open_etcd([etcd_server.endpoint], prefix="/shared")
    second = await open_etcd([etcd_server.endpoint], prefix="/shared")
    watch = first.watch("/registry/", from_revision=await first.current_revision())

    created = await first.create("/registry/k", b"1")
    assert await second.get("/registry/k") == created
    won = await second.update("/registry/k", b"2", expected_revision=created.mod_revision)
    with pytest.raises(ConflictError) as caught:
        await first.update("/registry/k", b"3", expected_revision=created.mod_revision)
    assert (caught.value.expected, caught.value.actual) == (created.mod_revision, won.mod_revision)
    events = [await asyncio.wait_for(anext(watch), 5) for _ in range(2)]
    assert [(e.type, e.kv) for e in events] == [
        (EventType.ADDED, created),
        (EventType.MODIFIED, won),
    ]
    await watch.aclose()  # type: ignore[attr-defined]


async def test_dead_first_endpoint_falls_through_to_the_next(
    etcd_server: EtcdProcess, open_etcd: OpenEtcd
) -> None:
    dead = f"http://127.0.0.1:{free_port()}"  # nothing listens there: connections are refused
    storage = await open_etcd([dead, etcd_server.endpoint])
    kv = await storage.create("/registry/k", b"x")
    assert await storage.get("/registry/k") == kv
    watch = storage.watch("/registry/", from_revision=0)
    later = await storage.create("/registry/later", b"x")
    assert (await asyncio.wait_for(anext(watch), 5)).kv == later
    await watch.aclose()  # type: ignore[attr-defined]


async def test_open_storage_parses_etcd_urls(etcd_server: EtcdProcess) -> None:
    host = etcd_server.endpoint.removeprefix("http://")
    storage = await open_storage(f"etcd://127.0.0.1:{free_port()},{host}/from-url")
    try:
        await storage.create("/registry/k", b"x")
        assert await raw_range(etcd_server.endpoint, "/from-url/registry/k") != []
    finally:
        await storage.close()
    with pytest.raises(StorageURLError, match="etcds://"):
        await open_storage(f"etcd://{host}?ca=/ca.pem")
    with pytest.raises(StorageURLError, match="sqlite:///.*etcd://"):
        await open_storage("redis://localhost")


# --- outages and restarts --------------------------------------------------------------------


async def test_requests_fail_fast_while_etcd_is_down_and_work_after_restart(
    private_etcd: EtcdProcess, open_etcd: OpenEtcd
) -> None:
    storage = await open_etcd([private_etcd.endpoint], request_timeout=2.0)
    kv = await storage.create("/registry/k", b"before")
    await asyncio.to_thread(private_etcd.stop)
    for attempt in (storage.get("/registry/k"), storage.create("/registry/other", b"x")):
        with pytest.raises(UnavailableError):  # StorageTimeoutError is an UnavailableError
            await asyncio.wait_for(attempt, OUTAGE_BOUND)
    await asyncio.to_thread(private_etcd.start)
    assert await storage.get("/registry/k") == kv
    updated = await storage.update("/registry/k", b"after", expected_revision=kv.mod_revision)
    assert updated.mod_revision > kv.mod_revision


async def test_frozen_etcd_times_out_instead_of_hanging(
    private_etcd: EtcdProcess, open_etcd: OpenEtcd
) -> None:
    storage = await open_etcd([private_etcd.endpoint], request_timeout=0.5)
    await storage.create("/registry/k", b"x")
    private_etcd.pause()
    try:
        with pytest.raises(UnavailableError):
            await asyncio.wait_for(storage.get("/registry/k"), OUTAGE_BOUND)
    finally:
        private_etcd.resume()
    assert (await storage.get("/registry/k")) is not None


async def test_open_watch_survives_an_etcd_restart(
    private_etcd: EtcdProcess, open_etcd: OpenEtcd
) -> None:
    storage = await open_etcd([private_etcd.endpoint])
    written = [await storage.create("/registry/w/before", b"x")]
    watch = storage.watch("/registry/w/", from_revision=written[0].mod_revision - 1)
    received: list[WatchEvent] = []
    consumer = asyncio.create_task(collect(watch, received))
    written.append(await storage.create("/registry/w/before-2", b"x"))
    await wait_for_events(received, 2)

    await asyncio.to_thread(private_etcd.kill)
    await asyncio.sleep(0.3)  # the watch notices and retries against a dead endpoint
    await asyncio.to_thread(private_etcd.start)
    for i in range(5):  # some land before the watch is back, some after
        written.append(await storage.create(f"/registry/w/after-{i}", b"x"))
        await storage.create(f"/registry/elsewhere-{i}", b"x")
        await asyncio.sleep(0.05)
    await wait_for_events(received, len(written))
    await asyncio.sleep(0.1)  # room for a duplicate to show up, were there one
    await watch.aclose()  # type: ignore[attr-defined]
    await asyncio.wait_for(consumer, 5)
    assert [e.kv for e in received] == written


async def test_watch_resumed_across_a_compaction_raises_compacted(
    etcd_server: EtcdProcess, proxy: Proxy, open_etcd: OpenEtcd
) -> None:
    watched = await open_etcd([proxy.endpoint], prefix="/compacted")
    writer = await open_etcd([etcd_server.endpoint], prefix="/compacted")
    first = await writer.create("/registry/w/0", b"x")
    watch = watched.watch("/registry/w/", from_revision=first.mod_revision - 1)
    assert (await asyncio.wait_for(anext(watch), 5)).kv == first

    await proxy.cut()  # the stream breaks; reconnects are refused while etcd runs on
    for i in range(1, 4):
        await writer.create(f"/registry/w/{i}", b"x")
    compacted = await writer.current_revision()
    await writer.compact(compacted)
    await proxy.restore()
    with pytest.raises(CompactedError) as caught:
        await asyncio.wait_for(anext(watch), OUTAGE_BOUND)
    assert (caught.value.requested, caught.value.compacted) == (first.mod_revision, compacted)
    with pytest.raises(StopAsyncIteration):
        await anext(watch)
    # A client that has not seen the compaction learns the compacted revision from etcd.
    bystander = await open_etcd([etcd_server.endpoint], prefix="/compacted")
    with pytest.raises(CompactedError) as listed:
        await bystander.list("/registry/", revision=first.mod_revision)
    assert (listed.value.requested, listed.value.compacted) == (first.mod_revision, compacted)


async def test_periodic_compaction_keeps_the_newest_revisions(
    etcd_server: EtcdProcess, open_etcd: OpenEtcd
) -> None:
    storage = await open_etcd([etcd_server.endpoint], compact_interval=0.05, keep_revisions=10)
    base = await storage.current_revision()
    kv = await storage.create("/registry/k", b"0")
    for i in range(1, 30):
        kv = await storage.update("/registry/k", str(i).encode(), expected_revision=kv.mod_revision)
    deadline = time.monotonic() + OUTAGE_BOUND
    while True:
        try:
            await storage.list("/registry/", revision=base + 1)
        except CompactedError as caught:
            assert base + 1 <= caught.compacted <= kv.mod_revision - 10
            break
        assert time.monotonic() < deadline, "history was never compacted"
        await asyncio.sleep(0.02)
    await asyncio.sleep(0.2)  # several more ticks: still nothing newer than keep_revisions goes
    oldest_kept = await storage.list("/registry/", revision=kv.mod_revision - 9)
    assert oldest_kept.items[0].value == b"20"


async def test_closed_storage_refuses_calls(
    etcd_server: EtcdProcess, open_etcd: OpenEtcd
) -> None:
    storage = await open_etcd([etcd_server.endpoint])
    await storage.close()
    with pytest.raises(StorageError):
        await storage.get("/registry/k")
    with pytest.raises(StorageError):
        storage.watch("/registry/", from_revision=0)


def test_an_etcd_started_on_a_taken_port_moves_to_ports_of_its_own(private_etcd: EtcdProcess) -> None:
    """The suite's workers pick free ports independently: an etcd told to listen where another
    already does must not take the other's answers for its own (pausing it would pause nothing)."""
    late = EtcdProcess()
    late.client_port, late.endpoint = private_etcd.client_port, private_etcd.endpoint
    # what tells them apart however slowly the late one exits: the member answering is not it
    assert private_etcd._answers_as_itself() and not late._answers_as_itself()
    try:
        late.start()
        assert late.endpoint != private_etcd.endpoint
        late.pause()
        try:
            private_etcd.status()  # the first one still answers on its port
            with pytest.raises(OSError):
                late.status(timeout=0.5)
        finally:
            late.resume()
    finally:
        late.cleanup()
