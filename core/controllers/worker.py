"""The loop every controller's workers run (client-go's ``processNextWorkItem``), and the
workers' lifetime around it."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Awaitable, Callable
from types import TracebackType

import aiohttp

from kplane.core.client.events import EventRecorder
from kplane.core.client.rest import ApiError
from kplane.core.client.workqueue import ShutDown, WorkQueue

log = logging.getLogger(__name__)


class CacheBehind(Exception):
    """Raised by a sync whose informer has not shown the controller's own last writes yet
    (client-go's ``NewStaleInformerCache``): retried with the back-off, logged at debug only."""


async def work(
    queue: WorkQueue[str],
    sync: Callable[[str], Awaitable[None]],
    *,
    name: str,
    retryable: tuple[type[BaseException], ...] = (),
    max_retries: int | None = None,
) -> None:
    """Sync keys until the queue shuts down. A key whose sync fails is retried with the queue's
    backoff (up to ``max_retries``); expected failures (API errors, lost connections,
    ``retryable``) are logged in a line, anything else with its traceback, since it is a bug
    that must not stop the worker."""
    expected = (ApiError, aiohttp.ClientError, CacheBehind, *retryable)
    while True:
        try:
            key = await queue.get()
        except ShutDown:
            return
        try:
            await sync(key)
            queue.forget(key)
        except Exception as err:
            if not isinstance(err, expected):
                log.exception("%s %s: sync failed", name, key)
            if max_retries is not None and queue.num_requeues(key) >= max_retries:
                log.warning("%s %s dropped out of the queue after %d retries: %s", name, key, max_retries, err)
                queue.forget(key)
            else:
                stale = isinstance(err, CacheBehind) or (isinstance(err, ApiError) and err.code == 409)  # a lagging cache: routine
                if isinstance(err, expected):
                    log.log(logging.DEBUG if stale else logging.INFO, "%s %s: %s; retrying", name, key, err)
                queue.add_rate_limited(key)
        finally:
            queue.done(key)


class Workers:
    """A controller's workers over its queue, for the length of an ``async with`` block.

    Entering starts ``recorder`` (if any); leaving, however the block ends, shuts the queue down
    (dropping delayed keys), cancels the workers started by :meth:`start` and waits until they
    are gone, so nothing uses the client after, then sends the Events still queued for up to a
    second: the ``defer queue.ShutDown()`` and ``defer eventBroadcaster.Shutdown()`` of a
    kube-controller-manager controller's ``Run``.
    """

    def __init__(self, queue: WorkQueue[str], recorder: EventRecorder | None = None) -> None:
        self.queue = queue
        self.recorder = recorder
        self.tasks: list[asyncio.Task[None]] = []

    def start(
        self,
        count: int,
        sync: Callable[[str], Awaitable[None]],
        *,
        name: str,
        retryable: tuple[type[BaseException], ...] = (),
        max_retries: int | None = None,
    ) -> None:
        """Start ``count`` workers running :func:`work` (once the caches are synced)."""
        self.tasks += [
            asyncio.create_task(work(self.queue, sync, name=name, retryable=retryable, max_retries=max_retries))
            for _ in range(count)
        ]

    async def wait(self) -> None:
        """Until the workers end: when the queue shuts down, or one of them fails."""
        await asyncio.gather(*self.tasks)

    async def __aenter__(self) -> Workers:
        if self.recorder is not None:
            self.recorder.start()
        return self

    async def __aexit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        self.queue.shutdown()
        for task in self.tasks:
            task.cancel()
        await asyncio.gather(*self.tasks, return_exceptions=True)
        if self.recorder is not None:
            await self.recorder.stop(timeout=1.0)
