"""The buffer between a watch's producer and its consumer, shared by every backend's watches.

A producer (a backend's commit, an etcd stream, the watch cache's fan-out) must never wait for a
slow consumer, and a consumer must not cost unbounded memory: events queue up to a capacity, and
one more ends the queue with WatcherOverflowError so the client relists or resumes instead.
"""

from __future__ import annotations

import asyncio
from collections import deque

from kplane.core.storage.interface import StorageError, WatcherOverflowError, WatchEvent


class EventQueue:
    """A bounded queue of live watch events, for one consumer, that ends once, optionally with
    an error.

    Watches subclass it and extend ``end`` to release what else they hold (their registration,
    a stream task); ``put`` ends an overflowing queue through ``end`` too, so that runs on
    overflow as well.
    """

    def __init__(self, prefix: str, capacity: int) -> None:
        self.prefix = prefix  # what the watch watches; the overflow error names it
        self._capacity = capacity
        self._events: deque[WatchEvent] = deque()
        self._wakeup: asyncio.Future[None] | None = None  # set while ``get`` waits
        self._error: StorageError | None = None
        self._done = False

    @property
    def done(self) -> bool:
        """True once ended: ``get`` still hands out what was kept, then the error, then stops."""
        return self._done

    def __len__(self) -> int:
        return len(self._events)

    def put(self, event: WatchEvent) -> None:
        """Buffer ``event`` without ever waiting; past capacity, end with WatcherOverflowError."""
        if self._done:
            return
        if len(self._events) >= self._capacity:
            self.end(WatcherOverflowError(self.prefix, self._capacity))
            return
        self._events.append(event)
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
        self._done, self._error = True, error
        if not keep_buffered:
            self._events.clear()
        wakeup = self._wakeup
        if wakeup is not None and not wakeup.done():
            wakeup.set_result(None)

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
