"""The buffer between a watch's producer and its consumer, shared by every backend's watches.

A producer (a backend's commit, an etcd stream, the watch cache's fan-out) must never wait for a
slow consumer, and a consumer must not cost unbounded memory: events queue up to a capacity, and
one more ends the queue with WatcherOverflowError so the client relists or resumes instead.

A consumer takes either one event at a time (``get``) or everything ready at once (``batch``):
a watch serving many events per wakeup costs one task switch and one socket write per batch
rather than per event. ``batched`` gives any other async iterator of events the same ``batch``.

A consumer that can take an event on the spot (a watch response with room on its socket) asks
for it with ``deliver``: while nothing is queued the producer hands each event straight to it,
so a caught-up watch costs its task no wakeup at all. An event it refuses queues, and every
later one behind it, until the consumer has taken them: order is never lost.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque
from collections.abc import AsyncIterator, Callable

from kplane.core.storage.interface import StorageError, WatcherOverflowError, WatchEvent


class EventQueue:
    """A bounded queue of live watch events, for one consumer, that ends once, optionally with
    an error.

    Watches subclass it and extend ``end`` to release what else they hold (their registration,
    a stream task); ``put`` ends an overflowing queue through ``end`` too, so that runs on
    overflow as well.

    Slotted, and its deque made at the first event: thousands of idle watches each hold one.
    """

    __slots__ = ("prefix", "_capacity", "_events", "_wakeup", "_error", "_done", "_sink")

    def __init__(self, prefix: str, capacity: int) -> None:
        self.prefix = prefix  # what the watch watches; the overflow error names it
        self._capacity = capacity
        self._events: deque[WatchEvent] | None = None
        self._wakeup: asyncio.Future[None] | None = None  # set while ``get`` waits
        self._error: StorageError | None = None
        self._done = False
        self._sink: Callable[[WatchEvent], bool] | None = None  # see ``deliver``

    @property
    def done(self) -> bool:
        """True once ended: ``get`` still hands out what was kept, then the error, then stops."""
        return self._done

    def __len__(self) -> int:
        return len(self._events) if self._events is not None else 0

    def deliver(self, sink: Callable[[WatchEvent], bool] | None) -> None:
        """Hand each event ``put`` from now on to ``sink`` while none is queued; one it refuses
        (returns False) is queued instead, and so is every later one until ``batch`` or ``get``
        has taken them. ``None`` stops it. A sink must never raise: it runs in the producer."""
        self._sink = sink

    def put(self, event: WatchEvent) -> None:
        """Buffer ``event`` (or hand it to the sink) without ever waiting; past capacity, end
        with WatcherOverflowError."""
        sink = self._sink
        if sink is not None and not self._events and not self._done and sink(event):
            return
        self.enqueue(event)

    def enqueue(self, event: WatchEvent) -> None:
        """``put`` past any sink: for what must wait behind events the consumer has yet to take
        (a replay still unread)."""
        if self._done:
            return
        events = self._events
        if events is None:
            events = self._events = deque()
        if len(events) >= self._capacity:
            self.end(WatcherOverflowError(self.prefix, self._capacity))
            return
        events.append(event)
        wakeup = self._wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    def end(self, error: StorageError | None = None, *, keep_buffered: bool = False) -> None:
        """End the queue (only the first call counts); ``error`` is raised to the consumer once.

        Buffered events are dropped unless ``keep_buffered``, which delivers them before the
        error, so a consumer resumes from the newest revision it could get.
        """
        if self._done:
            return
        self._done, self._error, self._sink = True, error, None
        if not keep_buffered:
            self._events = None
        wakeup = self._wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

    async def batch(self, timeout: float | None) -> list[WatchEvent]:
        """Every event buffered, waiting up to ``timeout`` seconds for the first (``[]`` when
        they pass quietly). Once ended, as ``get``: the error once, then StopAsyncIteration.

        The timeout only wakes the wait (a timer, no cancellation), so nothing is lost."""
        if not self._events and self._error is None and not self._done:
            loop = asyncio.get_running_loop()
            wakeup = self._wakeup = loop.create_future()
            timer = None if timeout is None else loop.call_later(timeout, _wake, wakeup)
            try:
                await wakeup
            finally:
                self._wakeup = None
                if timer is not None:
                    timer.cancel()
            if not self._events and self._error is None and not self._done:
                return []
        if self._events:
            events = list(self._events)
            self._events = None  # an idle watch holds no deque
            return events
        if self._error is not None:
            error, self._error = self._error, None
            raise error
        raise StopAsyncIteration

    async def get(self) -> WatchEvent:
        """The next event, waiting for one; once ended, raises the error once, then
        StopAsyncIteration."""
        while True:
            if self._events:
                return self._events.popleft()
            if self._error is not None:
                error, self._error = self._error, None
                raise error
            if self._done:
                raise StopAsyncIteration
            self._wakeup = asyncio.get_running_loop().create_future()
            try:
                await self._wakeup
            finally:
                self._wakeup = None


def _wake(wakeup: asyncio.Future[None]) -> None:
    if not wakeup.done():
        wakeup.set_result(None)


class _Pumped(EventQueue):
    """An async iterator's events in an EventQueue, read by a task of its own: waiting for a
    batch with a timeout then never cancels the iterator mid-read. Whatever the iterator raises
    reaches the consumer after the events before it; what it raises while closing, ``aclose``."""

    def __init__(self, events: AsyncIterator[WatchEvent], capacity: int) -> None:
        super().__init__(getattr(events, "prefix", ""), capacity)
        self._source = events
        self._failure: Exception | None = None  # raised by the source as it was closed
        self._task = asyncio.get_running_loop().create_task(self._pump())

    async def _pump(self) -> None:
        try:
            try:
                async for event in self._source:
                    self.put(event)
                    if self.done:
                        break
            finally:
                await self._source.aclose()  # type: ignore[attr-defined]
        except Exception as err:
            if self.done:
                self._failure = err
            else:  # the consumer gets it after what was read before it
                self.end(err, keep_buffered=True)  # type: ignore[arg-type]
        else:
            self.end(None, keep_buffered=True)

    async def aclose(self) -> None:
        self.end()
        self._task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await self._task
        if self._failure is not None:
            failure, self._failure = self._failure, None
            raise failure


def batched(events: AsyncIterator[WatchEvent], capacity: int = 10_000) -> EventQueue:
    """``events`` as an EventQueue (itself when it is one), for ``batch``; it must be closed
    with ``aclose()``, which closes ``events`` too."""
    return events if isinstance(events, EventQueue) else _Pumped(events, capacity)
