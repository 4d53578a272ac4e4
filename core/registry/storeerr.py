"""Storage errors as the API errors a client sees: the registry's side of the storage boundary.

Backends raise the errors of :mod:`kplane.core.storage.interface`; above the registry only
:class:`~kplane.core.meta.errors.APIError` exists, so the HTTP layer never learns what storage is
(k8s.io/apiserver's ``registry/generic/registry`` does the same with ``storeerr``). The Store
translates the errors whose meaning depends on the request (a compacted revision, one not yet
written) where it catches them, with these constructors, and every storage outage at its
boundary with :func:`interpreted`. Errors that steer the Store itself (a lost compare-and-swap,
a key that exists) never leave it.
"""

from __future__ import annotations

import functools
import logging
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from typing import Concatenate, ParamSpec, Protocol, TypeVar

from kplane.core.meta import errors
from kplane.core.runtime.scheme import ResourceType
from kplane.core.storage.interface import FutureRevisionError, Storage, StorageError, StorageTimeoutError, UnavailableError

log = logging.getLogger(__name__)

# What a client is told when storage fails: never the error's text, which may carry a storage
# endpoint or a file path. The server's log keeps the detail.
STORAGE_TIMEOUT = "storage did not answer in time; the request may or may not have been carried out"
STORAGE_UNAVAILABLE = "storage is unavailable; try again later"
CONTINUE_EXPIRED = (
    "The provided continue parameter is too old to display a consistent list result. "
    "You can start a new list without the continue parameter."
)


@contextmanager
def interpreted(operation: str) -> Iterator[None]:
    """Storage outages inside as the errors a client retries on: 504 Timeout when a write may
    have happened (the client must read again to know), else 503 with ``retryAfterSeconds``.
    ``operation`` (e.g. "get configmaps") says in the log what was being done."""
    try:
        yield
    except UnavailableError as err:
        raise outage(operation, err) from None


def outage(operation: str, err: UnavailableError) -> errors.APIError:
    """The API error of a storage outage (see :func:`interpreted`), logged; for a loop that
    cannot afford a context manager per pass (a watch's)."""
    log.warning("%s: %s", operation, err)
    if isinstance(err, StorageTimeoutError):
        return errors.timeout(STORAGE_TIMEOUT)
    return errors.unavailable(STORAGE_UNAVAILABLE, retry_after=1)


class _OfResource(Protocol):
    resource: ResourceType


S = TypeVar("S", bound=_OfResource)
P = ParamSpec("P")
R = TypeVar("R")


def interpreting(method: Callable[Concatenate[S, P], Awaitable[R]]) -> Callable[Concatenate[S, P], Awaitable[R]]:
    """A Store method whose storage outages leave it as API errors (see :func:`interpreted`)."""

    @functools.wraps(method)
    async def translated(self: S, /, *args: P.args, **kwargs: P.kwargs) -> R:
        with interpreted(f"{method.__name__} {self.resource.plural}"):
            return await method(self, *args, **kwargs)

    return translated


def too_old(requested: int, compacted: int = 0) -> errors.APIError:
    """410 for a revision storage has compacted (``compacted``: the newest revision it forgot)."""
    return errors.expired(f"too old resource version: {requested} ({compacted + 1})")


def continue_expired() -> errors.APIError:
    """410 for a continue token whose snapshot storage has compacted."""
    return errors.expired(CONTINUE_EXPIRED)


def too_large(err: FutureRevisionError) -> errors.APIError:
    """504 for a revision storage has not reached (after a cache waited a while for it)."""
    return errors.timeout(f"Too large resource version: {err.requested}, current: {err.current}",
                          causes=[{"reason": "ResourceVersionTooLarge", "message": "Too large resource version"}])


async def health(storage: Storage) -> str | None:
    """Why ``storage`` cannot serve requests now, in words fit for a health probe; None when it can."""
    try:
        await storage.health()
    except StorageTimeoutError as err:
        log.debug("storage health check: %s", err)
        return "the storage did not answer in time"
    except StorageError as err:
        log.debug("storage health check: %s", err)
        return "the storage is unavailable"
    return None
