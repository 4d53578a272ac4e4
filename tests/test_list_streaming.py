"""LISTs written in pieces (kplane.core.server.listing), through real sockets: the bytes are those of the
whole list (Go's escapes included, across pieces), large ones chunked, YAML and Tables alike; and
slow readers beyond the read-only limit are refused with 429 while the ones admitted are held,
and probes, writes and the server's own clients are still answered meanwhile."""

from __future__ import annotations

import asyncio
import json
import socket
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import yaml

from kplane.core.server import listing
from kplane.core.serving.apiserver import APIServer
from kplane.core.server.filters import RequestLimits
from tests.servers import server_config

CM = "/api/v1/namespaces/default/configmaps"
BOUND = 15.0  # generous: only a hang fails it
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


@pytest.fixture
async def two_readers(tmp_path: Path) -> AsyncIterator[APIServer]:
    """Two read-only requests at a time."""
    server = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=False,
                                     limits=RequestLimits(max_requests_inflight=2, max_mutating_requests_inflight=2)))
    await server.start()
    yield server
    await server.stop()


async def _create(session: aiohttp.ClientSession, count: int, data: dict[str, str]) -> None:
    for i in range(count):
        async with session.post(CM, json={"metadata": {"name": f"cm-{i:03d}"}, "data": data}) as reply:
            assert reply.status == 201, await reply.text()


async def test_a_list_of_many_pieces_is_the_objects_bytes_chunked(api) -> None:
    """Go's escapes in every object, across piece boundaries: the LIST holds exactly the bytes a
    GET of each object gives (less its newline), and only a list of one piece has a length."""
    count = listing.PIECE_ITEMS * 2 + 7
    await _create(api.session, count, {"html": "<a href='x'>&</a>", "separators": "\u2028\u2029"})
    singles = []
    for i in range(count):
        async with api.session.get(f"{CM}/cm-{i:03d}") as reply:
            singles.append((await reply.read()).removesuffix(b"\n"))
    async with api.session.get(CM) as reply:
        assert reply.status == 200
        assert reply.headers["Transfer-Encoding"] == "chunked" and "Content-Length" not in reply.headers
        body = await reply.read()
    rv = json.loads(body)["metadata"]["resourceVersion"]
    assert body == (b'{"kind":"ConfigMapList","apiVersion":"v1","metadata":{"resourceVersion":"%s"},"items":[' % rv.encode()
                    + b",".join(singles) + b"]}\n")
    assert b"<" not in body and b"&" not in body and "\u2028".encode() not in body
    async with api.session.get(CM, params={"limit": "3"}) as reply:
        assert "Transfer-Encoding" not in reply.headers and int(reply.headers["Content-Length"]) == len(await reply.read())


async def test_yaml_and_tables_of_many_pieces_hold_every_object(api) -> None:
    count = listing.PIECE_ITEMS + 1
    await _create(api.session, count, {"k": "<v>"})
    async with api.session.get(CM) as reply:
        listed = json.loads(await reply.read())
    async with api.session.get(CM, headers={"Accept": "application/yaml"}) as reply:
        assert reply.headers["Content-Type"].startswith("application/yaml")
        assert yaml.safe_load(await reply.read()) == listed
    async with api.session.get(CM, headers={"Accept": TABLE}, params={"includeObject": "Object"}) as reply:
        assert reply.headers["Content-Type"] == TABLE
        table = json.loads(await reply.read())
    assert [row["cells"][0] for row in table["rows"]] == [f"cm-{i:03d}" for i in range(count)]
    assert [row["object"] for row in table["rows"]] == listed["items"]


def _slow_list_request(server: APIServer) -> socket.socket:
    """A LIST whose answer nobody reads, through a tiny receive buffer."""
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    sock = socket.socket()
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
    sock.settimeout(BOUND)
    sock.connect((host, int(port)))
    sock.sendall(f"GET {CM} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    return sock


def _status(sock: socket.socket) -> int:
    head = b""
    while len(head) < 12:
        head += sock.recv(12 - len(head))
    return int(head.split()[1])


async def test_slow_list_readers_beyond_the_limit_get_429_while_the_admitted_are_held(two_readers: APIServer) -> None:
    async with aiohttp.ClientSession(base_url=two_readers.url) as session:
        await _create(session, 12, {"k": "x" * 900_000})  # a list of 10 MB: more than socket buffers hold
        readers = [await asyncio.to_thread(_slow_list_request, two_readers) for _ in range(10)]
        try:
            statuses = [await asyncio.to_thread(_status, sock) for sock in readers]
            assert sorted(statuses) == [200, 200] + [429] * 8
            # The two admitted are still being sent; every other read-only request is refused at
            # once, while probes, writes and the server's own (loopback) clients are answered.
            async with session.get(f"{CM}/cm-000") as reply:
                assert reply.status == 429 and reply.headers["Retry-After"] == "1"
            for probe in ("/healthz", "/livez", "/readyz"):
                async with session.get(probe) as reply:
                    assert reply.status == 200, probe
            async with session.post(CM, json={"metadata": {"name": "a-write"}}) as reply:
                assert reply.status == 201
            token = {"Authorization": f"Bearer {two_readers.security.loopback_token}"}
            async with session.get(f"{CM}/a-write", headers=token) as reply:
                assert reply.status == 200
        finally:
            for sock in readers:
                sock.close()
        for _ in range(int(BOUND / 0.05)):  # the readers gone, their places are free again
            async with session.get(CM, params={"limit": "1"}) as reply:
                if reply.status == 200:
                    break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the read-only places were never freed")
