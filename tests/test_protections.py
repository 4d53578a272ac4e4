"""Overload and slow-client protections (kplane.core.server.filters, kplane.core.server.connections), through real
sockets: max in-flight (429 + Retry-After), watches and probes not counted, the request timeout
(504) and ``?timeout=``, header and body read deadlines, and the connection cap."""

from __future__ import annotations

import asyncio
import logging
import json
import socket
import subprocess
import sys
from collections.abc import AsyncIterator
from pathlib import Path
from urllib.parse import quote

import aiohttp
import pytest

from kplane.core.serving.apiserver import APIServer
from kplane.core.server.connections import ConnectionLimits
from kplane.core.server.filters import RequestLimits
from tests.kubectl_cli import Kubectl
from tests.servers import server_config, serving

BOUND = 15.0  # generous: only a hang fails it
CM = "/api/v1/namespaces/default/configmaps"


async def started(tmp_path: Path, **config: object) -> APIServer:
    server = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=False, **config))  # type: ignore[arg-type]
    await server.start()
    return server


@pytest.fixture
async def limited(tmp_path: Path) -> AsyncIterator[APIServer]:
    """One mutating request at a time, one read-only; a request times out after 2 s."""
    server = await started(tmp_path, limits=RequestLimits(max_requests_inflight=1, max_mutating_requests_inflight=1,
                                                          request_timeout=2.0))
    yield server
    await server.stop()


def _address(server: APIServer) -> tuple[str, int]:
    host, port = server.url.removeprefix("http://").rsplit(":", 1)
    return host, int(port)


async def connect(server: APIServer) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    return await asyncio.open_connection(*_address(server))


async def held_post(server: APIServer, path: str = CM) -> tuple[asyncio.StreamReader, asyncio.StreamWriter]:
    """A POST whose body is promised but only half sent: its request is in flight meanwhile."""
    body = json.dumps({"metadata": {"name": "held"}, "data": {}}).encode()
    reader, writer = await connect(server)
    writer.write(f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                 f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:5])
    await writer.drain()
    return reader, writer


async def answer(reader: asyncio.StreamReader) -> tuple[int, dict[str, str], bytes]:
    """Status, headers and body of one HTTP/1.1 answer with a Content-Length."""
    head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), BOUND)
    lines = head.decode().split("\r\n")
    status = int(lines[0].split()[1])
    headers = {k.lower(): v.strip() for k, v in (line.split(":", 1) for line in lines[1:] if line)}
    body = await asyncio.wait_for(reader.readexactly(int(headers.get("content-length", "0"))), BOUND)
    return status, headers, body


async def closed(reader: asyncio.StreamReader) -> bool:
    """True once the server has closed the connection (EOF or reset)."""
    try:
        return await asyncio.wait_for(reader.read(65536), BOUND) == b"" or await closed(reader)
    except ConnectionResetError:
        return True


async def until_in_flight(session: aiohttp.ClientSession, path: str = CM) -> aiohttp.ClientResponse:
    """A POST answered 429 (retried while the held request has not reached the filter yet)."""
    for _ in range(int(BOUND / 0.05)):
        reply = await session.post(path, json={"metadata": {"name": "second"}})
        if reply.status == 429:
            return reply
        reply.release()
        await asyncio.sleep(0.05)
    raise AssertionError("the limit never refused a request")


async def test_a_mutating_request_beyond_the_limit_is_429_with_retry_after(limited: APIServer) -> None:
    _, held = await held_post(limited)
    async with aiohttp.ClientSession(base_url=limited.url) as session:
        refused = await until_in_flight(session)
        assert refused.headers["Retry-After"] == "1"
        status = await refused.json()
        assert (status["kind"], status["code"], status["reason"]) == ("Status", 429, "TooManyRequests")
        assert status["message"] == "Too many requests, please try again later."
        assert status["details"] == {"retryAfterSeconds": 1}
        async with session.get(f"{CM}/second") as missing:
            assert missing.status == 404  # nothing was stored
        async with session.get(CM) as reads:  # read-only requests have a limit of their own
            assert reads.status == 200
        for probe in ("/healthz", "/livez", "/readyz", "/readyz/etcd"):
            async with session.get(probe) as reply:
                assert reply.status == 200, probe
        # The server's own clients carry the loopback token and are never refused.
        token = {"Authorization": f"Bearer {limited.security.loopback_token}"}
        async with session.post(CM, json={"metadata": {"name": "loopback"}}, headers=token) as reply:
            assert reply.status == 201
        async with session.post(CM, json={"metadata": {"name": "guess"}}, headers={"Authorization": "Bearer guess"}) as reply:
            assert reply.status == 429
    held.close()


async def test_a_slow_reader_holds_its_read_only_place_while_probes_still_answer(limited: APIServer) -> None:
    """A LIST far larger than the socket buffers, read by nobody: sending it counts as in flight."""
    async with aiohttp.ClientSession(base_url=limited.url) as session:
        for i in range(12):  # ConfigMaps of 900 kB: a list of 10 MB
            reply = await session.post(CM, json={"metadata": {"name": f"big-{i}"}, "data": {"k": "x" * 900_000}})
            assert reply.status == 201
        sock = socket.socket()
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        sock.connect(_address(limited))
        sock.sendall(f"GET {CM} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        try:
            for _ in range(int(BOUND / 0.05)):
                async with session.get(f"{CM}/big-0") as reply:
                    if reply.status == 429:
                        assert reply.headers["Retry-After"] == "1"
                        break
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("the read-only limit never refused a request")
            for probe in ("/healthz", "/livez", "/readyz", "/readyz/etcd"):
                async with session.get(probe) as reply:
                    assert reply.status == 200, probe
            async with session.post(CM, json={"metadata": {"name": "a-write"}}) as reply:
                assert reply.status == 201  # mutating requests have their own limit
        finally:
            sock.close()  # the slow reader leaves: its place is freed
        for _ in range(int(BOUND / 0.05)):
            async with session.get(f"{CM}/big-0") as reply:
                if reply.status == 200:
                    break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the read-only place was never freed")


async def test_the_limit_frees_its_slot_when_the_request_ends(limited: APIServer) -> None:
    _, held = await held_post(limited)
    async with aiohttp.ClientSession(base_url=limited.url) as session:
        (await until_in_flight(session)).release()
        held.close()  # the held request ends (its client went away)
        for _ in range(int(BOUND / 0.05)):
            async with session.post(CM, json={"metadata": {"name": "after"}}) as reply:
                if reply.status == 201:
                    break
            await asyncio.sleep(0.05)
        else:
            raise AssertionError("the slot was never freed")


async def test_watches_are_not_counted(limited: APIServer) -> None:
    async with aiohttp.ClientSession(base_url=limited.url) as session:
        watches = [await session.get(CM, params={"watch": "true"}) for _ in range(3)]
        assert [w.status for w in watches] == [200, 200, 200]
        async with session.get(CM) as reply:
            assert reply.status == 200
        for watch in watches:
            watch.close()


async def test_a_request_past_its_timeout_is_504_and_stores_nothing(limited: APIServer) -> None:
    reader, held = await held_post(limited, f"{CM}?timeout=500ms")
    status, _, body = await answer(reader)
    reply = json.loads(body)
    assert (status, reply["reason"], reply["code"]) == (504, "Timeout", 504)
    assert reply["message"] == "Timeout: request did not complete within requested timeout - context deadline exceeded"
    held.close()
    async with aiohttp.ClientSession(base_url=limited.url) as session:
        async with session.get(f"{CM}/held") as missing:
            assert missing.status == 404


async def test_the_server_timeout_applies_without_or_beyond_a_timeout_parameter(limited: APIServer) -> None:
    for path in (CM, f"{CM}?timeout=1h"):  # --request-timeout is 2 s here, and ?timeout= cannot exceed it
        reader, held = await held_post(limited, path)
        status, _, _ = await answer(reader)
        assert status == 504, path
        held.close()


async def test_a_malformed_timeout_is_400(limited: APIServer) -> None:
    async with aiohttp.ClientSession(base_url=limited.url) as session:
        for value, detail in (("x", 'time: invalid duration "x"'), ("5", 'time: missing unit in duration "5"'),
                              ("3y", 'time: unknown unit "y" in duration "3y"')):
            async with session.get(CM, params={"timeout": value}) as reply:
                status = await reply.json()
                assert (reply.status, status["reason"]) == (400, "BadRequest")
                assert status["message"] == f"invalid timeout specified in the request URL - {detail}"
        async with session.get(CM, params={"timeout": "30s"}) as reply:
            assert reply.status == 200


async def test_slowloris_headers_are_cut_off_after_the_header_timeout(tmp_path: Path) -> None:
    server = await started(tmp_path, connections=ConnectionLimits(header_timeout=0.5))
    try:
        reader, writer = await connect(server)
        writer.write(b"GET /version HTTP/1.1\r\nHost: x\r\n")

        async def trickle() -> None:
            for byte in b"X-Slow: " + b"a" * 1000:
                writer.write(bytes([byte]))
                await writer.drain()
                await asyncio.sleep(0.05)

        sender = asyncio.create_task(trickle())
        assert await closed(reader)
        assert not sender.done()  # closed while the client was still sending its headers
        sender.cancel()
        writer.close()

        # The deadline runs from a request's first byte: an idle connection may wait, then ask.
        reader, writer = await connect(server)
        await asyncio.sleep(1.0)
        writer.write(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
        status, _, _ = await answer(reader)
        assert status == 200
        writer.close()
    finally:
        await server.stop()


async def test_a_trickled_body_is_ended_by_the_body_timeout(tmp_path: Path) -> None:
    server = await started(tmp_path, connections=ConnectionLimits(body_timeout=0.5))
    try:
        reader, held = await held_post(server)  # no request timeout soon: the body deadline answers
        status, headers, body = await answer(reader)
        reply = json.loads(body)
        assert (status, reply["reason"]) == (408, "Timeout")
        assert reply["message"] == "Timeout: the request body was not received within 0.5s"
        assert headers.get("connection", "").lower() == "close"
        assert await closed(reader)
        async with aiohttp.ClientSession(base_url=server.url) as session:
            async with session.get(f"{CM}/held") as missing:
                assert missing.status == 404
    finally:
        await server.stop()


async def test_past_the_connection_cap_only_probes_and_loopback_are_served(tmp_path: Path) -> None:
    server = await started(tmp_path, connections=ConnectionLimits(max_connections=2, probe_connections=1))
    try:
        assert server.informers is not None
        await server.informers.wait_for_cache_sync(BOUND)  # the loopback clients are connected and known
        held = [await connect(server) for _ in range(2)]
        for reader, writer in held:  # served: the cap has room for these two
            writer.write(b"GET /version HTTP/1.1\r\nHost: x\r\n\r\n")
            assert (await answer(reader))[0] == 200
        reader, writer = await connect(server)  # the reserve: probes only
        writer.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await answer(reader))[0] == 200
        writer.write(b"GET /api HTTP/1.1\r\nHost: x\r\n\r\n")
        status, headers, _ = await answer(reader)
        assert (status, headers["retry-after"]) == (429, "1")
        assert await closed(reader)

        # A loopback client is served there, and its connection leaves the count.
        reader, writer = await connect(server)
        writer.write(f"POST {CM} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer {server.security.loopback_token}\r\n"
                     f"Content-Type: application/json\r\nContent-Length: 27\r\n\r\n".encode()
                     + b'{"metadata":{"name":"lbk"}}')
        assert (await answer(reader))[0] == 201

        # A full reserve takes a probe in place of its oldest connection not being served: one
        # that trickles its headers (a flood of slow clients), or one that idles.
        slow_reader, slow_writer = await connect(server)
        slow_writer.write(b"GET /livez HTTP/1.1\r\n")  # and nothing more
        probe_reader, probe_writer = await connect(server)
        assert await closed(slow_reader)
        probe_writer.write(b"GET /livez HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await answer(probe_reader))[0] == 200
        next_reader, next_writer = await connect(server)
        assert await closed(probe_reader)  # idle since its answer
        next_writer.write(b"GET /readyz HTTP/1.1\r\nHost: x\r\n\r\n")
        assert (await answer(next_reader))[0] == 200

        for _, w in held:  # connections freed: served again
            w.close()
        for w in (slow_writer, probe_writer, next_writer, writer):
            w.close()
        async with aiohttp.ClientSession(base_url=server.url) as session:
            for _ in range(int(BOUND / 0.05)):
                try:
                    async with session.get("/api") as reply:
                        if reply.status == 200:
                            break
                except aiohttp.ClientError:
                    pass
                await asyncio.sleep(0.05)
            else:
                raise AssertionError("no connection was served again")
    finally:
        await server.stop()


async def test_the_serve_flags_set_the_limits(tmp_path: Path) -> None:
    with serving(tmp_path / "data", "--no-controllers", "--max-mutating-requests-inflight", "1",
                 "--request-timeout", "1s", "--read-header-timeout", "500ms") as served:
        reader, writer = await asyncio.open_connection("127.0.0.1", served.port)
        body = b'{"metadata":{"name":"held"}}'
        writer.write(f"POST {CM} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
                     f"Content-Length: {len(body)}\r\n\r\n".encode() + body[:5])
        async with aiohttp.ClientSession(base_url=served.url) as session:
            refused = await until_in_flight(session)
            assert refused.headers["Retry-After"] == "1"
        status, _, _ = await answer(reader)  # --request-timeout 1s
        assert status == 504
        writer.close()
        slow_reader, slow = await asyncio.open_connection("127.0.0.1", served.port)
        slow.write(b"GET /version HTTP/1.1\r\n")  # and nothing more
        assert await closed(slow_reader)  # --read-header-timeout 500ms
        slow.close()


def test_a_malformed_duration_flag_is_refused() -> None:
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--request-timeout", "60"],
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 2
    assert 'argument --request-timeout: time: missing unit in duration "60"' in done.stderr


def test_kubectl_request_timeout_is_sent_and_honoured(kubectl: Kubectl) -> None:
    """kubectl --request-timeout sends ?timeout=30s; the server takes it (a bad one would be 400)."""
    done = kubectl.run("get", "configmaps", "--request-timeout=30s", "-v=6")
    assert "timeout=30s" in done.stderr and "200 OK" in done.stderr
    kubectl.run("create", "configmap", "timed", "--from-literal=k=v", "--request-timeout=30s")
    assert kubectl.run("get", "configmap", "timed", "-o", "name").stdout.strip() == "configmap/timed"


async def _raw_exchange(server: APIServer, request: bytes) -> tuple[int, dict]:
    reader, writer = await connect(server)
    writer.write(request)
    await writer.drain()
    head, _, body = (await reader.read()).partition(b"\r\n\r\n")
    writer.close()
    return int(head.split()[1]), json.loads(body)


async def test_what_aiohttp_cannot_parse_is_a_status_without_the_raw_bytes(server: APIServer,
                                                                           caplog: pytest.LogCaptureFixture) -> None:
    """A malformed request, one with a header line that is too long or too many headers gets a 400
    Status, not aiohttp's text quoting the bytes it read, and one log line, not a traceback; a long
    request line (a label selector with many values) is fine up to 64 KiB."""
    caplog.set_level(logging.INFO, logger="aiohttp.server")
    many = b"".join(b"X-H%d: v\r\n" % i for i in range(300))
    for request in (b"FOO\x01 /api HTTP/1.1\r\nHost: x\r\n\r\n",
                    b"GET /api HTTP/1.1\r\nHost: x\r\nX-Big: " + b"a" * 9000 + b"\r\n\r\n",
                    b"GET /api HTTP/1.1\r\nHost: x\r\n" + many + b"\r\n",
                    b"GET /api?" + b"a" * 70000 + b" HTTP/1.1\r\nHost: x\r\n\r\n"):
        code, status = await _raw_exchange(server, request)
        assert (code, status["kind"], status["code"], status["reason"]) == (400, "Status", 400, "BadRequest"), status
        assert "bytearray" not in status["message"] and "aaaa" not in status["message"]
    refused = [r for r in caplog.records if r.name == "aiohttp.server"]
    assert refused and all(r.exc_info is None and r.levelname == "INFO" for r in refused), refused
    selector = "app in (" + ",".join(f"v{i}" for i in range(3000)) + ")"
    code, listed = await _raw_exchange(server, f"GET /api/v1/namespaces?labelSelector={quote(selector)} HTTP/1.1\r\n"
                                               "Host: x\r\nConnection: close\r\n\r\n".encode())
    assert (code, listed["kind"]) == (200, "NamespaceList")
