"""etcd v3 storage over etcd's HTTP/JSON gateway (``/v3/kv/*``, ``/v3/watch``; etcd >= 3.4).

One ``aiohttp.ClientSession`` keeps a pool of keep-alive connections to the endpoints; keys and
values travel base64-encoded and int64 fields arrive as JSON strings. ``prefix`` is prepended to
every key on the wire and stripped from every key read back, so several kplane installations (or
tests) can share one etcd under different roots.

How the contract maps onto etcd:

* Revisions are etcd's own. ``compact(N)`` is etcd's compaction at N, which keeps the state at N,
  so events after N still carry their previous value. The contract calls N itself compacted, so
  lists at N and watches from before N fail here for every compaction this storage knows of (its
  own, or learned from etcd). etcd itself refuses reads below N and watches starting below N; a
  list it refuses learns N from a watch probe, which etcd answers with ``compact_revision``. A
  watch starting exactly at a foreign compaction N gets events of N without their previous value:
  that missing ``prev_kv`` is reported as CompactedError too.
* ``watch(from_revision=0)`` starts after the newest revision this storage has seen in any
  response (etcd is asked once at open); writes by other clients since then are replayed.
* A watch whose stream breaks (etcd restarted, connection lost) reconnects with backoff and resumes
  after the last revision it delivered, or after the revision of etcd's last progress
  notification; if that was compacted meanwhile the watch raises CompactedError so the consumer
  relists. A stream that silently stalls (no FIN, e.g. a partitioned host) is not detected.
* Requests fail fast while etcd is down: a refused connection moves on to the next endpoint and
  raises UnavailableError when none accepts one. Nothing is cached across requests except the
  preferred endpoint, so the same storage works again as soon as etcd is back.
* A member that fails a request (the connection breaks, no answer within ``request_timeout``,
  etcd's "leader changed", "no leader", "request timed out", a dropped proposal) stops being the
  preferred endpoint, and the request is tried again on the next member, with backoff, until it
  succeeds or ``2 * request_timeout`` has passed since it began (then StorageTimeoutError, or
  UnavailableError). Reads are simply sent again. A write gets at most 2 s per member (a member
  whose leader died holds a proposal it forwarded there until etcd's own 7 s timeout). A write whose outcome is unknown (etcd may have
  applied the txn before the connection broke) is never blindly resent: the key is read back
  (a linearizable read, so a proposal of a dead leader that the new one did not commit can never
  be committed later) and the write is settled from what is there. A create whose exact value
  is there succeeded (stored objects carry a fresh uid, so equal bytes are this write); one whose
  key is absent was not applied and is sent again (its compare keeps it from ever applying twice).
  An update settles the same way from the key's mod revision and value; a delete only when the
  key is still at the expected revision (not applied). Anything else fails with
  StorageTimeoutError ("the outcome is unknown", as kube-apiserver answers), never with an
  acknowledgement of a write that was not made nor a conflict caused by the request's own write.
* Periodic compaction is idempotent: several servers on one etcd may all run it; compacting to a
  revision etcd already compacted is a no-op. It never writes to etcd (a write outside the watched
  prefixes would advance the revision without an event anyone could see).
"""

from __future__ import annotations

import asyncio
import binascii
import contextlib
import logging
import random
import ssl
import weakref
from collections.abc import AsyncIterator, Callable
from typing import Any

import aiohttp
import orjson

from kplane.core.storage.interface import (
    CompactedError,
    ConflictError,
    EventType,
    FutureRevisionError,
    KeyExistsError,
    KeyNotFoundError,
    KeyValue,
    ListResult,
    Storage,
    StorageError,
    StorageTimeoutError,
    UnavailableError,
    WatchEvent,
)
from kplane.core.storage.watchqueue import EventQueue

_log = logging.getLogger(__name__)

Json = dict[str, Any]

HEALTH_TIMEOUT = 2.0  # seconds, as kube-apiserver's --etcd-healthcheck-timeout
_MAX_REQUESTS = 128  # unary requests in flight; watches hold their own connections outside it
_RETRY_MIN, _RETRY_MAX = 0.05, 2.0  # watch reconnect backoff, seconds
# Seconds a write may take before its member is presumed cut off from a dead leader (twice etcd's
# default election timeout; etcd itself would hold a proposal it forwarded there for 7 s); the write
# is then settled. etcd warns of any apply over 100 ms: a healthy member is never this slow.
_WRITE_ATTEMPT = 2.0
_REQUEST_RETRY_MAX = 0.5  # unary request retry backoff cap, seconds (an election takes ~1 s)
_GRPC_DEADLINE_EXCEEDED, _GRPC_UNAVAILABLE = 4, 14
# etcd's errors of a member that lost its leader or could not propose: another member may answer.
_TRANSIENT = ("leader changed", "no leader", "proposal dropped", "too many requests")
# What a broken watch stream raises; the watch reconnects instead of ending.
_BROKEN_STREAM = (
    UnavailableError, aiohttp.ClientError, TimeoutError, OSError, orjson.JSONDecodeError
)


def _b64(data: bytes) -> str:
    return binascii.b2a_base64(data, newline=False).decode("ascii")


def _unb64(text: str) -> bytes:
    return binascii.a2b_base64(text)


def _range_end(start: bytes) -> bytes:
    """The first key after every key that starts with ``start`` (b"\\0": no upper bound)."""
    stripped = start.rstrip(b"\xff")
    if not stripped:
        return b"\0"
    return stripped[:-1] + bytes([stripped[-1] + 1])


class _RevisionCompacted(StorageError):
    """etcd refused a read at a compacted revision; the caller knows which revision it asked."""


class _RevisionInFuture(StorageError):
    """etcd refused a revision it has not reached yet."""


class _Unreachable(UnavailableError):
    """No endpoint accepted a connection: nothing was sent, and nothing is retried (fail fast)."""


def _outcome_unknown(key: str, cause: BaseException | None) -> StorageTimeoutError:
    return StorageTimeoutError(
        f"etcd: the outcome of the write of {key!r} is unknown (may or may not have been"
        f" applied): {cause}"
    )


def _reply_error(status: int, reply: Json) -> StorageError:
    """The StorageError for an etcd gateway error body ``{"error", "message", "code"}``."""
    message = str(reply.get("message") or reply.get("error") or f"HTTP {status}")
    code = reply.get("code")
    if "required revision has been compacted" in message:
        return _RevisionCompacted(message)
    if "required revision is a future revision" in message:
        return _RevisionInFuture(message)
    if code == _GRPC_DEADLINE_EXCEEDED or "timed out" in message:
        return StorageTimeoutError(f"etcd: {message}")
    if code == _GRPC_UNAVAILABLE or status == 503 or any(text in message for text in _TRANSIENT):
        return UnavailableError(f"etcd: {message}")
    return StorageError(f"etcd: {message}")


async def _each_message(response: aiohttp.ClientResponse, handle: Callable[[Json], bool]) -> None:
    """Feed each newline-delimited JSON message of a streaming response to ``handle`` until it
    returns True or the stream ends. Lines are split here: one watch response can be megabytes."""
    pending = bytearray()
    async for chunk in response.content.iter_any():
        pending += chunk
        start = 0
        while (end := pending.find(b"\n", start)) >= 0:
            if handle(orjson.loads(bytes(pending[start:end]))):
                return
            start = end + 1
        del pending[:start]


class EtcdStorage(Storage):
    """Storage on an etcd v3 cluster, reached through its HTTP/JSON gateway.

    Create it with ``await EtcdStorage.open(["http://127.0.0.1:2379"])``.
    """

    def __init__(
        self,
        endpoints: list[str],
        session: aiohttp.ClientSession,
        *,
        prefix: str,
        compact_interval: float,
        keep_revisions: int,
        watch_queue_size: int,
        request_timeout: float,
    ) -> None:
        """Private: use ``open``, which also learns the current revision and starts compaction."""
        self._endpoints = endpoints
        self._preferred = 0  # index of the endpoint that answered last
        self._session = session
        self._prefix = prefix.encode()
        self._compact_interval = compact_interval
        self._keep_revisions = keep_revisions
        self._watch_queue_size = watch_queue_size
        self._request_timeout = request_timeout
        self._timeout = aiohttp.ClientTimeout(total=request_timeout)
        self._stream_timeout = aiohttp.ClientTimeout(total=None, sock_connect=request_timeout)
        self._slots = asyncio.Semaphore(_MAX_REQUESTS)
        self._in_flight = 0
        self._idle = asyncio.Event()
        self._idle.set()
        self._seen = 0  # the newest revision of any etcd response
        self._compacted = 0  # a lower bound of etcd's compacted revision
        self._feeds: set[_Feed] = set()
        self._compactor: asyncio.Task[None] | None = None
        self._closed = False

    @classmethod
    async def open(
        cls,
        endpoints: list[str],
        *,
        prefix: str = "",
        compact_interval: float = 300.0,
        keep_revisions: int = 1000,
        watch_queue_size: int = 10_000,
        request_timeout: float = 5.0,
        ca_file: str | None = None,
        cert_file: str | None = None,
        key_file: str | None = None,
    ) -> EtcdStorage:
        """Connect to ``endpoints`` (``http://host:port`` or ``https://…``, tried in order).

        Every ``compact_interval`` seconds (0 disables it) history is compacted so that at least
        one interval and ``keep_revisions`` revisions are retained. A watcher more than
        ``watch_queue_size`` events behind ends with WatcherOverflowError. ``ca_file``,
        ``cert_file`` and ``key_file`` configure TLS for https endpoints. Raises UnavailableError
        if no endpoint answers.
        """
        if not endpoints:
            raise ValueError("EtcdStorage needs at least one endpoint")
        tls: ssl.SSLContext | None = None
        if any(endpoint.startswith("https://") for endpoint in endpoints):
            tls = ssl.create_default_context(cafile=ca_file)
            if cert_file:
                tls.load_cert_chain(cert_file, key_file)
        # limit=0: watches each hold a connection for good; unary requests are bounded by _slots.
        connector = aiohttp.TCPConnector(limit=0, ssl=tls if tls is not None else True)
        session = aiohttp.ClientSession(connector=connector)
        storage = cls(
            [endpoint.rstrip("/") for endpoint in endpoints],
            session,
            prefix=prefix,
            compact_interval=compact_interval,
            keep_revisions=keep_revisions,
            watch_queue_size=watch_queue_size,
            request_timeout=request_timeout,
        )
        try:
            await storage.current_revision()
        except BaseException:
            await session.close()
            raise
        if compact_interval > 0:
            storage._compactor = asyncio.create_task(
                storage._compact_periodically(), name=f"etcd-compactor {endpoints[0]}"
            )
        return storage

    async def get(self, key: str) -> KeyValue | None:
        reply = await self._read("/v3/kv/range", {"key": self._wire(key)})
        kvs = reply.get("kvs")
        return self._kv(kvs[0], key) if kvs else None

    async def list(
        self,
        prefix: str,
        *,
        revision: int = 0,
        limit: int = 0,
        start_after: str = "",
        min_revision: int | None = None,  # the latest is new enough, unless not written yet
    ) -> ListResult:
        if revision < 0:
            raise ValueError(f"revision must be >= 0, got {revision}")
        if revision and revision <= self._compacted:
            raise CompactedError(revision, self._compacted)
        start = self._prefix + prefix.encode()
        end = _range_end(start)
        if start_after and start_after >= prefix:
            start = self._prefix + start_after.encode() + b"\0"
        body: Json = {"key": _b64(start or b"\0"), "range_end": _b64(end)}
        if revision:
            body["revision"] = revision
        if limit > 0:
            body["limit"] = limit
        try:
            reply = await self._read("/v3/kv/range", body)
        except _RevisionCompacted:
            raise CompactedError(revision, await self._learn_compacted(revision)) from None
        except _RevisionInFuture:
            raise FutureRevisionError(revision, await self.current_revision()) from None
        items = [self._kv(kv) for kv in reply.get("kvs", ())]
        at = revision or int(reply["header"]["revision"])
        if min_revision and at < min_revision:
            raise FutureRevisionError(min_revision, at)
        return ListResult(items=items, revision=at, more=bool(reply.get("more")))

    async def create(self, key: str, value: bytes) -> KeyValue:
        wire = self._wire(key)

        def settle(found: KeyValue | None) -> bool:
            if found is not None and found.value != value:
                raise KeyExistsError(key)
            return found is not None

        reply = await self._write(key, {
            "compare": [{"key": wire, "target": "CREATE", "create_revision": 0}],
            "success": [{"request_put": {"key": wire, "value": _b64(value)}}],
        }, settle)
        if isinstance(reply, KeyValue):
            return reply
        if not reply.get("succeeded"):
            raise KeyExistsError(key)
        revision = int(reply["header"]["revision"])
        return KeyValue(key, value, revision, revision)

    async def update(self, key: str, value: bytes, *, expected_revision: int) -> KeyValue:
        if expected_revision <= 0:  # etcd would read mod revision 0 as "absent" and create it
            raise await self._precondition_failed(key, expected_revision)
        wire = self._wire(key)

        def settle(found: KeyValue | None) -> bool | None:
            if found is not None and found.mod_revision == expected_revision:
                return False
            if found is not None and found.value == value:
                return True
            return None

        reply = await self._write(key, {
            "compare": [{"key": wire, "target": "MOD", "mod_revision": expected_revision}],
            "success": [
                {"request_put": {"key": wire, "value": _b64(value)}},
                {"request_range": {"key": wire, "keys_only": True}},  # for the create revision
            ],
            "failure": [{"request_range": {"key": wire, "keys_only": True}}],
        }, settle)
        if isinstance(reply, KeyValue):
            return reply
        if not reply.get("succeeded"):
            raise self._failed_compare(key, expected_revision, reply)
        written = reply["responses"][1]["response_range"]["kvs"][0]
        return KeyValue(
            key, value, int(written["create_revision"]), int(written["mod_revision"])
        )

    async def delete(self, key: str, *, expected_revision: int = 0) -> KeyValue:
        wire = self._wire(key)
        removal = {"key": wire, "prev_kv": True}

        def settle(found: KeyValue | None) -> bool | None:
            # Still there at the expected revision: not applied. Gone: perhaps by another client.
            if found is not None and expected_revision and found.mod_revision == expected_revision:
                return False
            return None

        if expected_revision:
            reply = await self._write(key, {
                "compare": [{"key": wire, "target": "MOD", "mod_revision": expected_revision}],
                "success": [{"request_delete_range": removal}],
                "failure": [{"request_range": {"key": wire, "keys_only": True}}],
            }, settle)
            assert isinstance(reply, dict)  # settle never says "applied"
            if not reply.get("succeeded"):
                raise self._failed_compare(key, expected_revision, reply)
            deleted = reply["responses"][0]["response_delete_range"]
        else:
            written = await self._write(key, removal, settle, path="/v3/kv/deleterange")
            assert isinstance(written, dict)
            deleted = reply = written
        if not deleted.get("prev_kvs"):
            raise KeyNotFoundError(key)
        last = deleted["prev_kvs"][0]
        return KeyValue(
            key,
            _unb64(last.get("value", "")),
            int(last["create_revision"]),
            int(reply["header"]["revision"]),
        )

    def watch(self, prefix: str, *, from_revision: int) -> AsyncIterator[WatchEvent]:
        """from_revision=0: after the newest revision this storage has seen (see module doc)."""
        if from_revision < 0:
            raise ValueError(f"from_revision must be >= 0, got {from_revision}")
        self._check_open()
        feed = _Feed(self, prefix, from_revision or self._seen, self._watch_queue_size)
        self._feeds.add(feed)
        return _Watch(feed)

    async def current_revision(self) -> int:
        # A count-only range of one key: the cheapest request whose header carries the revision.
        reply = await self._read(
            "/v3/kv/range", {"key": _b64(self._prefix + b"\0"), "count_only": True}
        )
        return int(reply["header"]["revision"])

    async def health(self) -> None:
        """etcd answers a read within HEALTH_TIMEOUT (kube-apiserver's --etcd-healthcheck-timeout)."""
        try:
            await asyncio.wait_for(self.current_revision(), HEALTH_TIMEOUT)
        except TimeoutError:
            raise StorageTimeoutError(f"etcd did not answer within {HEALTH_TIMEOUT:g}s") from None

    async def size_bytes(self) -> int:
        """etcd's ``dbSize``: the backend database as allocated, as kube-apiserver reports it."""
        reply = await self._read("/v3/maintenance/status", {})
        return int(reply.get("dbSize", 0))

    async def compact(self, revision: int) -> None:
        """etcd compaction at ``revision``; at or before an earlier compaction it does nothing."""
        if revision <= self._compacted:
            return
        try:
            await self._read("/v3/kv/compaction", {"revision": revision})  # idempotent
        except _RevisionCompacted:
            pass  # another server compacted at least this far
        except _RevisionInFuture:
            raise FutureRevisionError(revision, await self.current_revision()) from None
        self._compacted = max(self._compacted, revision)

    async def close(self) -> None:
        """End every watch, let requests in flight finish (bounded), then drop the connections."""
        if self._closed:
            return
        self._closed = True
        if self._compactor is not None:
            self._compactor.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._compactor
        feeds = list(self._feeds)
        for feed in feeds:
            feed.end(None)
        await asyncio.gather(*(feed.stopped() for feed in feeds))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self._idle.wait(), self._timeout.total)
        await self._session.close()

    # --- requests -------------------------------------------------------------------------

    def _check_open(self) -> None:
        if self._closed:
            raise StorageError("etcd storage is closed")

    def _deadline(self) -> float:
        """When a request begun now stops being retried."""
        return asyncio.get_running_loop().time() + 2 * self._request_timeout

    async def _backoff(self, delay: float, deadline: float) -> float:
        """Sleep before the next attempt, if time is left before ``deadline``; the next delay."""
        if asyncio.get_running_loop().time() + delay >= deadline:
            raise StorageTimeoutError("etcd did not answer in time")
        await asyncio.sleep(delay * random.uniform(0.5, 1.0))
        return min(delay * 2, _REQUEST_RETRY_MAX)

    async def _read(self, path: str, body: Json) -> Json:
        """An idempotent call, tried again on the next member while members fail it."""
        deadline, delay = self._deadline(), _RETRY_MIN
        while True:
            try:
                return await self._post(path, body, deadline)
            except _Unreachable:
                raise
            except UnavailableError as exc:
                _log.debug("etcd %s failed, trying again: %s", path, exc)
                try:
                    delay = await self._backoff(delay, deadline)
                except StorageTimeoutError:
                    raise exc from None

    async def _write(
        self,
        key: str,
        body: Json,
        settle: Callable[[KeyValue | None], bool | None],
        *,
        path: str = "/v3/kv/txn",
    ) -> Json | KeyValue:
        """A write of ``key``: etcd's reply, or the key read back when an attempt whose outcome was
        unknown turned out applied. ``settle(read back)`` says True (applied), False (not applied:
        safe to send again), None (cannot tell) or raises the write's own error. After an
        unknown outcome a failed compare may be the write's own doing, so it is settled too."""
        deadline, delay = self._deadline(), _RETRY_MIN
        uncertain: BaseException | None = None
        while True:
            try:
                reply = await self._post(path, body, deadline, attempt=_WRITE_ATTEMPT)
            except _Unreachable as exc:
                if uncertain is None:
                    raise
                raise _outcome_unknown(key, uncertain) from exc
            except UnavailableError as exc:
                uncertain = exc
            else:
                if uncertain is None or reply.get("succeeded", True):
                    return reply
            try:
                found = await self.get(key)
            except UnavailableError as exc:
                raise _outcome_unknown(key, uncertain) from exc
            verdict = settle(found)
            if verdict is None:
                raise _outcome_unknown(key, uncertain)
            if verdict:
                assert found is not None
                return found
            _log.debug("etcd write of %r was not applied, sending it again: %s", key, uncertain)
            try:
                delay = await self._backoff(delay, deadline)
            except StorageTimeoutError:
                raise _outcome_unknown(key, uncertain) from None

    async def _post(
        self, path: str, body: Json, deadline: float, *, attempt: float | None = None
    ) -> Json:
        """One unary gateway call, answered within ``attempt`` seconds (by default the request
        timeout) and by ``deadline`` at the latest; raises the StorageError that fits any
        failure, after moving the preference off a member that failed it."""
        self._check_open()
        limit = min(self._request_timeout, attempt or self._request_timeout)
        remaining = min(limit, deadline - asyncio.get_running_loop().time())
        if remaining <= 0:
            raise StorageTimeoutError(f"etcd did not answer {path} in time")
        self._in_flight += 1
        self._idle.clear()
        index = -1
        try:
            async with self._slots:
                if self._session.closed:  # close() gave up waiting for this one
                    raise StorageError("etcd storage is closed")
                timeout = aiohttp.ClientTimeout(total=remaining)
                index, response = await self._send(path, orjson.dumps(body), timeout)
                async with response:
                    status, payload = response.status, await response.read()
        except TimeoutError:
            self._avoid(index)
            raise StorageTimeoutError(f"etcd did not answer {path} in time") from None
        except aiohttp.ClientError as exc:
            self._avoid(index)
            raise UnavailableError(f"etcd request {path} failed: {exc!r}") from exc
        finally:
            self._in_flight -= 1
            if not self._in_flight:
                self._idle.set()
        try:
            reply: Json = orjson.loads(payload)
        except orjson.JSONDecodeError:
            raise StorageError(f"etcd answered {path} with HTTP {status}: {payload[:200]!r}")
        if status != 200:
            error = _reply_error(status, reply)
            if isinstance(error, UnavailableError):
                self._avoid(index)
            raise error
        self._observe(reply["header"])
        return reply

    async def _send(
        self, path: str, data: bytes, timeout: aiohttp.ClientTimeout
    ) -> tuple[int, aiohttp.ClientResponse]:
        """POST to the preferred endpoint, moving on to the next one that accepts connections;
        the index of the endpoint that took it, and its response."""
        refused: list[str] = []
        count = len(self._endpoints)
        for step in range(count):
            index = (self._preferred + step) % count
            try:
                response = await self._session.post(
                    self._endpoints[index] + path, data=data, timeout=timeout
                )
            except aiohttp.ClientConnectorError as exc:  # nothing was sent: safe to go on
                refused.append(str(exc))
                continue
            except (aiohttp.ClientError, TimeoutError):
                self._avoid(index)
                raise
            self._preferred = index
            return index, response
        raise _Unreachable(f"no etcd endpoint accepts connections: {'; '.join(refused)}")

    def _avoid(self, index: int) -> None:
        """Prefer the next endpoint to ``index``, which just failed a request (unless another
        failure moved the preference already)."""
        if index == self._preferred and len(self._endpoints) > 1:
            self._preferred = (index + 1) % len(self._endpoints)

    def _observe(self, header: Json) -> None:
        revision = int(header.get("revision", 0))
        if revision > self._seen:
            self._seen = revision

    async def _learn_compacted(self, requested: int) -> int:
        """etcd's compacted revision, which a range error does not tell: a watch from
        ``requested`` is cancelled with it. Falls back to ``requested`` if the probe fails."""
        body = {"create_request": {"key": _b64(self._prefix + b"\0"), "start_revision": requested}}
        learned = 0

        def handle(message: Json) -> bool:
            nonlocal learned
            learned = int(message.get("result", {}).get("compact_revision", 0))
            return bool(learned) or "error" in message or message["result"].get("canceled", False)

        try:
            _, response = await self._send("/v3/watch", orjson.dumps(body), self._timeout)
            async with response:
                await _each_message(response, handle)
        except (StorageError, *_BROKEN_STREAM) as exc:
            _log.warning("could not learn etcd's compacted revision: %r", exc)
        self._compacted = max(self._compacted, learned, requested)
        return self._compacted

    # --- encoding -------------------------------------------------------------------------

    def _wire(self, key: str) -> str:
        if not isinstance(key, str):
            raise TypeError(f"key must be str, got {type(key)}")
        return _b64(self._prefix + key.encode())

    def _unwire(self, key: str) -> str:
        return _unb64(key)[len(self._prefix):].decode()

    def _kv(self, kv: Json, key: str | None = None) -> KeyValue:
        return KeyValue(
            key if key is not None else self._unwire(kv["key"]),
            _unb64(kv.get("value", "")),
            int(kv["create_revision"]),
            int(kv["mod_revision"]),
        )

    def _event(self, event: Json) -> WatchEvent:
        kv, prev = event["kv"], event.get("prev_kv")
        key, revision = self._unwire(kv["key"]), int(kv["mod_revision"])
        prev_value = _unb64(prev.get("value", "")) if prev else None
        if event.get("type") == "DELETE":
            created = int(prev["create_revision"]) if prev else 0
            last = KeyValue(key, prev_value or b"", created, revision)
            return WatchEvent(EventType.DELETED, last, prev_value)
        current = KeyValue(key, _unb64(kv.get("value", "")), int(kv["create_revision"]), revision)
        if current.create_revision == revision:
            return WatchEvent(EventType.ADDED, current)
        return WatchEvent(EventType.MODIFIED, current, prev_value)

    async def _precondition_failed(self, key: str, expected: int) -> StorageError:
        found = await self.get(key)
        if found is None:
            return KeyNotFoundError(key)
        return ConflictError(key, expected, found.mod_revision)

    @staticmethod
    def _failed_compare(key: str, expected: int, reply: Json) -> StorageError:
        """The error for a txn whose failure branch ranged the key."""
        kvs = reply["responses"][0]["response_range"].get("kvs")
        if not kvs:
            return KeyNotFoundError(key)
        return ConflictError(key, expected, int(kvs[0]["mod_revision"]))

    # --- periodic compaction --------------------------------------------------------------

    async def _compact_periodically(self) -> None:
        """Compact to min(the revision seen one tick ago, current - keep_revisions): history
        spans at least one interval of time and ``keep_revisions`` revisions."""
        previous = 0
        while True:
            await asyncio.sleep(self._compact_interval)
            try:
                current = await self.current_revision()
                target = min(previous, current - self._keep_revisions)
                if target > 0:
                    await self.compact(target)
                previous = current
            except StorageError as exc:
                _log.warning("periodic etcd compaction failed: %s", exc)


class _Feed(EventQueue):
    """The state of one watch: a stream task fills the queue the consumer drains, and resumes a
    broken stream after the last revision it queued."""

    def __init__(self, storage: EtcdStorage, prefix: str, after: int, capacity: int) -> None:
        super().__init__(prefix, capacity)
        self._storage = storage
        start = storage._prefix + prefix.encode()
        self._range = {"key": _b64(start or b"\0"), "range_end": _b64(_range_end(start))}
        self._last = after  # the revision of the last event queued, or the starting point
        self._task = asyncio.create_task(self._pump(), name=f"etcd-watch {prefix!r}")

    def end(self, error: StorageError | None = None, *, keep_buffered: bool = False) -> None:
        """End the queue, unregister and stop the stream task."""
        if self.done:  # the task is cancelled once
            return
        super().end(error, keep_buffered=keep_buffered)
        self._storage._feeds.discard(self)
        if self._task is not asyncio.current_task() and not self._task.done():
            self._task.cancel()

    async def stopped(self) -> None:
        """Wait until the stream task has finished (after ``end``)."""
        with contextlib.suppress(asyncio.CancelledError):
            await self._task

    async def _pump(self) -> None:
        delay = _RETRY_MIN
        while not self.done:
            try:
                if await self._follow():
                    delay = _RETRY_MIN
            except _BROKEN_STREAM as exc:
                _log.debug("etcd watch on %r broke: %r", self.prefix, exc)
            except StorageError as exc:
                self.end(exc)
                return
            if self.done:
                return
            await asyncio.sleep(delay * random.uniform(0.5, 1.0))
            delay = min(delay * 2, _RETRY_MAX)

    async def _follow(self) -> bool:
        """Read one watch stream until it ends; True if etcd had accepted the watch."""
        if self._last < self._storage._compacted:
            raise CompactedError(self._last, self._storage._compacted)
        accepted = False
        # A start after the current revision makes etcd treat the watcher as synced at once;
        # one in the past waits for etcd's catch-up loop (up to 100 ms) before its first event.
        request = {**self._range, "start_revision": self._last + 1}
        request.update(prev_kv=True, progress_notify=True)
        body = orjson.dumps({"create_request": request})

        def handle(message: Json) -> bool:
            nonlocal accepted
            result = message.get("result")
            if result is None:
                raise UnavailableError(f"etcd watch stream error: {message.get('error')}")
            accepted = True
            return self._handle(result)

        storage = self._storage
        _, response = await storage._send("/v3/watch", body, storage._stream_timeout)
        async with response:
            if response.status != 200:
                raise UnavailableError(f"etcd refused the watch with HTTP {response.status}")
            await _each_message(response, handle)
        return accepted

    def _handle(self, result: Json) -> bool:
        """Take one watch response; True when the feed has ended."""
        header = result.get("header", {})
        self._storage._observe(header)
        if compacted := int(result.get("compact_revision", 0)):
            self._storage._compacted = max(self._storage._compacted, compacted)
            raise CompactedError(self._last, compacted)
        if result.get("canceled"):
            raise StorageError(f"etcd cancelled the watch: {result.get('cancel_reason', '')}")
        events = result.get("events")
        if events:
            self._offer(events)
        elif not result.get("created") and "revision" in header:
            # A progress notification: every event up to this revision has been sent.
            self._last = max(self._last, int(header["revision"]))
        return self.done

    def _offer(self, events: list[Json]) -> None:
        storage = self._storage
        for raw in events:
            event = storage._event(raw)
            if event.prev_value is None and event.type is not EventType.ADDED:
                # etcd lost the previous value: a compaction at or after this event's revision.
                storage._compacted = max(storage._compacted, event.revision)
                raise CompactedError(self._last, storage._compacted)
            self.put(event)
            self._last = event.revision


class _Watch(AsyncIterator[WatchEvent]):
    """What ``watch`` returns: dropping it (or ``aclose``) ends the feed behind it."""

    def __init__(self, feed: _Feed) -> None:
        self._feed = feed
        weakref.finalize(self, feed.end, None).atexit = False

    def __aiter__(self) -> _Watch:
        return self

    async def __anext__(self) -> WatchEvent:
        # A coroutine of its own: while a call is pending it keeps this watch, and so the feed,
        # alive even if the caller holds nothing else of it.
        return await self._feed.get()

    async def aclose(self) -> None:
        self._feed.end(None)
