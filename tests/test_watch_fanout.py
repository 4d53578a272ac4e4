"""Watch fan-out through a real server: events that are ready together go out in one write, and
every watcher still gets every event once, in resourceVersion order. One server for the module."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator

import aiohttp
import pytest

from tests.builders import configmap
from tests.servers import Served, serving

CMS = "/api/v1/namespaces/{namespace}/configmaps"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("fanout") / "data", "--no-controllers") as running:
        yield running


async def create_namespace(session: aiohttp.ClientSession, name: str) -> None:
    async with session.post("/api/v1/namespaces", json={"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}) as reply:
        assert reply.status == 201, await reply.text()


async def create(session: aiohttp.ClientSession, namespace: str, name: str, data: dict[str, str] | None = None) -> int:
    async with session.post(CMS.format(namespace=namespace), json=configmap(name, data)) as reply:
        body = await reply.json()
        assert reply.status == 201, body
        return int(body["metadata"]["resourceVersion"])


@contextlib.asynccontextmanager
async def chunks(port: int, path: str) -> AsyncIterator[asyncio.Queue[bytes]]:
    """A raw HTTP/1.1 watch: each chunk of the chunked body as the server wrote it."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
    head = await reader.readuntil(b"\r\n\r\n")
    assert head.startswith(b"HTTP/1.1 200") and b"chunked" in head.lower(), head
    out: asyncio.Queue[bytes] = asyncio.Queue()

    async def read() -> None:
        while size := int((await reader.readuntil(b"\r\n")).strip(), 16):
            out.put_nowait((await reader.readexactly(size + 2))[:-2])

    task = asyncio.create_task(read())
    try:
        yield out
    finally:
        task.cancel()
        writer.close()


def versions(chunk: bytes) -> list[int]:
    return [int(json.loads(line)["object"]["metadata"]["resourceVersion"]) for line in chunk.splitlines()]


async def test_a_watch_resumed_from_an_older_version_gets_what_it_missed_in_one_write(served: Served) -> None:
    async with aiohttp.ClientSession(base_url=served.url) as session:
        await create_namespace(session, "resumed")
        written = [await create(session, "resumed", f"cm-{i}") for i in range(20)]
        async with chunks(served.port, f"{CMS.format(namespace='resumed')}?watch=1&resourceVersion={written[0]}") as got:
            assert versions(await asyncio.wait_for(got.get(), 10)) == written[1:]


async def test_every_watcher_gets_events_written_together_once_in_order(served: Served) -> None:
    async with aiohttp.ClientSession(base_url=served.url, connector=aiohttp.TCPConnector(limit=0)) as session:
        await create_namespace(session, "together")
        async with session.get(CMS.format(namespace="together")) as reply:
            since = (await reply.json())["metadata"]["resourceVersion"]
        async with contextlib.AsyncExitStack() as stack:
            path = f"{CMS.format(namespace='together')}?watch=1&resourceVersion={since}"
            streams = [await stack.enter_async_context(chunks(served.port, path)) for _ in range(20)]
            written = sorted(await asyncio.gather(*(create(session, "together", f"cm-{i}") for i in range(30))))
            for got in streams:
                seen: list[int] = []
                while len(seen) < len(written):
                    seen += versions(await asyncio.wait_for(got.get(), 10))
                assert seen == written


async def test_a_selector_filters_what_is_ready_together(served: Served) -> None:
    """A batch whose events a label selector all rejects writes nothing; the matching one comes alone."""
    async with aiohttp.ClientSession(base_url=served.url) as session:
        await create_namespace(session, "picked")
        async with session.get(CMS.format(namespace="picked")) as reply:
            since = (await reply.json())["metadata"]["resourceVersion"]
        path = f"{CMS.format(namespace='picked')}?watch=1&resourceVersion={since}&labelSelector=pick%3Dyes"
        async with chunks(served.port, path) as got:
            await asyncio.gather(*(create(session, "picked", f"other-{i}") for i in range(5)))
            picked = configmap("picked")
            picked["metadata"]["labels"] = {"pick": "yes"}
            async with session.post(CMS.format(namespace="picked"), json=picked) as reply:
                rv = int((await reply.json())["metadata"]["resourceVersion"])
            assert versions(await asyncio.wait_for(got.get(), 10)) == [rv]


async def test_a_client_that_stops_reading_gets_every_event_once_in_order_when_it_reads_again(served: Served) -> None:
    """Events meant for a socket that is full wait in the watch (the fan-out never blocks on one
    client), and go out after those already written: 20 MB land while the client reads nothing."""
    async with aiohttp.ClientSession(base_url=served.url) as session:
        await create_namespace(session, "stalled")
        async with session.get(CMS.format(namespace="stalled")) as reply:
            since = (await reply.json())["metadata"]["resourceVersion"]
        reader, writer = await asyncio.open_connection("127.0.0.1", served.port, limit=2**24)
        try:
            path = f"{CMS.format(namespace='stalled')}?watch=1&resourceVersion={since}"
            writer.write(f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
            assert (await reader.readuntil(b"\r\n\r\n")).startswith(b"HTTP/1.1 200")
            writer.transport.pause_reading()  # the client stops reading: the server's socket fills
            written = [await create(session, "stalled", f"cm-{i}", {"big": "x" * 100_000}) for i in range(200)]
            writer.transport.resume_reading()
            seen: list[int] = []
            while len(seen) < len(written):
                size = int((await asyncio.wait_for(reader.readuntil(b"\r\n"), 10)).strip(), 16)
                seen += versions((await reader.readexactly(size + 2))[:-2])
            assert seen == written
        finally:
            writer.close()
