"""An EventRecorder: core/v1 Events about objects, written the way client-go's tools/record writes them.

Controllers call :meth:`EventRecorder.event` from their reconcile loops; it only queues, and a
background task does the writing, so a slow or failing server never stalls a reconcile, and a
failed write is logged, never raised. An Event lands in its object's namespace ("default" for
cluster-scoped objects) and carries what ``kubectl describe`` shows: involvedObject (with uid),
type, reason, message, source, count, firstTimestamp and lastTimestamp.

A repeat of an Event already written (same object, type, reason, message and source) within
``window`` seconds of its last occurrence becomes ``count + 1`` and a new lastTimestamp on the
stored Event, by a merge patch, as client-go's EventCorrelator does.

    async with EventRecorder(client, "deployment-controller") as recorder:
        recorder.event(deployment, NORMAL, "ScalingReplicaSet", "Scaled up replica set web-abc to 2")
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections import OrderedDict
from dataclasses import dataclass
from datetime import UTC, datetime
from types import TracebackType
from typing import Any

import aiohttp

from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.meta import rand
from kplane.core.meta.validation import is_dns1123_subdomain

log = logging.getLogger(__name__)
Obj = dict[str, Any]

#: The type of an Event that reports things going as they should.
NORMAL = "Normal"
#: The type of an Event that reports a problem someone may need to look at.
WARNING = "Warning"
QUEUE_SIZE = 1000  # client-go's maxQueuedEvents
CACHE_SIZE = 4096  # client-go's maxLruCacheEntries
WINDOW = 3600.0  # the API server's default --event-ttl: an older Event would be gone anyway
META_FIELDS = ("namespace", "name", "uid", "resourceVersion")  # copied into involvedObject

_Key = tuple[str, ...]


@dataclass(frozen=True, slots=True)
class _Seen:
    """The stored Event a repeat is folded into."""

    name: str
    count: int
    first_timestamp: str
    at: float  # time.monotonic() of the last occurrence


class EventRecorder:
    """Queues Events and writes them from a background task; ``start()``/``await stop()`` or ``async with``.

    Events recorded before ``start()`` wait in the queue; when it is full, new ones are dropped
    (with a log line), as client-go drops rather than blocks.
    """

    def __init__(self, client: RESTClient, component: str, host: str = "", *, queue_size: int = QUEUE_SIZE,
                 cache_size: int = CACHE_SIZE, window: float = WINDOW) -> None:
        self.client = client
        self.component = component
        self.host = host
        self.window = window
        self._cache_size = cache_size
        self._cache: OrderedDict[_Key, _Seen] = OrderedDict()  # least recently seen first
        self._queue: asyncio.Queue[Obj] = asyncio.Queue(maxsize=queue_size)
        self._task: asyncio.Task[None] | None = None
        self._last_nanos = 0

    def event(self, obj: Obj, type: str, reason: str, message: str) -> None:
        """Record that ``reason``/``message`` happened to ``obj`` (a full object with apiVersion and kind)."""
        meta = obj.get("metadata") or {}
        fields = {"apiVersion": obj.get("apiVersion"), "kind": obj.get("kind"), **{key: meta.get(key) for key in META_FIELDS}}
        reference = {key: value for key, value in fields.items() if value}  # Go's omitempty
        if type not in (NORMAL, WARNING):
            log.error("event %s about %s not recorded: type %r is neither Normal nor Warning", reason, _describe(reference), type)
            return
        if not all(reference.get(key) for key in ("apiVersion", "kind", "name")):
            log.error("event %s about %s not recorded: the object lacks apiVersion, kind or name", reason, _describe(reference))
            return
        nanos = self._unique_nanos()
        stamp = datetime.fromtimestamp(nanos / 1e9, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        event: Obj = {
            "apiVersion": "v1",
            "kind": "Event",
            "metadata": {"name": _event_name(reference["name"], nanos), "namespace": reference.get("namespace", "default")},
            "involvedObject": reference,
            "reason": reason,
            "message": message,
            "type": type,
            "source": {"component": self.component, **({"host": self.host} if self.host else {})},
            "reportingComponent": self.component,
            "reportingInstance": self.host,
            "firstTimestamp": stamp,
            "lastTimestamp": stamp,
            "count": 1,
        }
        try:
            self._queue.put_nowait(event)
        except asyncio.QueueFull:
            log.error("event %s about %s dropped: %d events already queued", reason, _describe(reference), self._queue.qsize())

    def start(self) -> None:
        if self._task is None:
            self._task = asyncio.create_task(self._run(), name=f"event-recorder-{self.component}")

    async def stop(self, timeout: float = 5.0) -> None:
        """Send what is queued, for at most ``timeout`` seconds, then end the background task."""
        if self._task is None:
            return
        try:
            await asyncio.wait_for(self._queue.join(), timeout)
        except TimeoutError:
            log.warning("event recorder %s stopped with %d events unsent", self.component, self._queue.qsize())
        self._task.cancel()
        try:
            await self._task
        except asyncio.CancelledError:
            pass
        self._task = None

    async def __aenter__(self) -> EventRecorder:
        self.start()
        return self

    async def __aexit__(self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None) -> None:
        await self.stop()

    async def _run(self) -> None:
        """One writer, in queue order: a repeat always sees the state its predecessor left in the cache."""
        while True:
            event = await self._queue.get()
            try:
                await self._write(event)
            except Exception:  # a recorder that dies silently would lose every later event
                log.exception("event %s about %s not written", event["reason"], _describe(event["involvedObject"]))
            finally:
                self._queue.task_done()

    async def _write(self, event: Obj) -> None:
        key = _correlation_key(event)
        seen = self._cache.get(key)
        if seen is not None and time.monotonic() - seen.at > self.window:
            seen = None
        events = self.client.resource("", "v1", "events", namespace=event["metadata"]["namespace"])
        try:
            if seen is None:
                stored = await events.create(event)
            else:
                event["metadata"]["name"] = seen.name
                event["firstTimestamp"] = seen.first_timestamp
                event["count"] = seen.count + 1
                try:
                    stored = await events.patch(seen.name, {"count": event["count"], "lastTimestamp": event["lastTimestamp"]})
                except ApiError as err:
                    if err.code != 404:
                        raise
                    stored = await events.create(event)  # expired or deleted meanwhile: written anew, count kept
        except ApiError as err:
            level = logging.DEBUG if err.code == 409 else logging.WARNING
            log.log(level, "server rejected event %s about %s: %s", event["reason"], _describe(event["involvedObject"]), err)
            return
        except (aiohttp.ClientError, OSError) as err:  # OSError: refused connections and timeouts
            log.warning("event %s about %s not written: %s", event["reason"], _describe(event["involvedObject"]), err)
            return
        self._remember(key, stored)

    def _remember(self, key: _Key, stored: Obj) -> None:
        """Keep the server's view (name, count, firstTimestamp) for the next repeat; forget the stalest beyond the cap."""
        self._cache[key] = _Seen(stored["metadata"]["name"], int(stored.get("count") or 1),
                                 stored.get("firstTimestamp") or stored.get("lastTimestamp") or "", time.monotonic())
        self._cache.move_to_end(key)
        while len(self._cache) > self._cache_size:
            self._cache.popitem(last=False)

    def _unique_nanos(self) -> int:
        """The clock in nanoseconds, nudged forward if it has not moved, so two Events never share a name."""
        self._last_nanos = max(time.time_ns(), self._last_nanos + 1)
        return self._last_nanos


def _event_name(involved: str, nanos: int) -> str:
    """``<name>.<hex nanos>`` like client-go; a random UUID where that is no valid name (e.g. ``system:node``)."""
    name = f"{involved}.{nanos:x}"
    return rand.new_uid() if is_dns1123_subdomain(name) else name


def _correlation_key(event: Obj) -> _Key:
    """What makes two Events the same one (client-go's getEventKey)."""
    ref, source = event["involvedObject"], event["source"]
    return (source["component"], source.get("host", ""), ref["apiVersion"], ref["kind"], ref.get("namespace", ""), ref["name"],
            ref.get("uid", ""), event["type"], event["reason"], event["message"])


def _describe(ref: Obj) -> str:
    """``Kind namespace/name`` of an object reference, for log lines."""
    return f"{ref.get('kind', '?')} {ref.get('namespace', '')}/{ref.get('name', '?')}"
