"""Waiting for what the server, a controller or a background task does in its own time.

``eventually`` polls from a coroutine (the check may be a plain function or a coroutine
function); ``wait_until`` polls from plain test code, for checks that block (kubectl, a client
in another thread). Both return the check's first truthy result, so a test can wait for an
object and use it; after ``timeout`` seconds they fail the test with the last result. The
default timeouts are long because CI runs two test workers on two loaded cores: a check that
holds returns at once, so only a failing test waits them out.
"""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable
from typing import TypeVar

T = TypeVar("T")


async def eventually(check: Callable[[], Awaitable[T] | T], timeout: float = 30.0, *, every: float = 0.05,
                     what: str = "the condition") -> T:
    """Poll ``check`` every ``every`` seconds until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while True:
        result = check()
        value = await result if inspect.isawaitable(result) else result
        if value:
            return value  # type: ignore[return-value]
        if time.monotonic() > deadline:
            raise AssertionError(f"{timeout}s passed waiting for {what}; the last check gave {value!r}")
        await asyncio.sleep(every)


def wait_until(check: Callable[[], T], timeout: float = 30.0, *, every: float = 0.1, what: str = "the condition") -> T:
    """Call ``check`` every ``every`` seconds until it returns something truthy, and return that."""
    deadline = time.monotonic() + timeout
    while not (value := check()):
        if time.monotonic() > deadline:
            raise AssertionError(f"{timeout}s passed waiting for {what}; the last check gave {value!r}")
        time.sleep(every)
    return value
