"""The loop every controller's workers run (client-go's ``processNextWorkItem``)."""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable

import aiohttp

from kplane.core.client.rest import ApiError
from kplane.core.client.workqueue import ShutDown, WorkQueue

log = logging.getLogger(__name__)


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
    expected = (ApiError, aiohttp.ClientError, *retryable)
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
                stale = isinstance(err, ApiError) and err.code == 409  # written from a lagging cache: routine
                if isinstance(err, expected):
                    log.log(logging.DEBUG if stale else logging.INFO, "%s %s: %s; retrying", name, key, err)
                queue.add_rate_limited(key)
        finally:
            queue.done(key)
