"""Work queues for controllers (client-go's util/workqueue, in asyncio).

A controller's event handlers only :meth:`WorkQueue.add` keys; workers reconcile them::

    while True:
        key = await queue.get()           # raises ShutDown once shut down and empty
        try:
            await reconcile(key)
            queue.forget(key)             # success: reset the key's backoff
        except Exception:
            queue.add_rate_limited(key)   # failure: retry later, backing off
        finally:
            queue.done(key)

The queue holds each key once however often it is added, so a burst of events for one object
costs one reconcile. A key is never handed to two workers at once: one added while it is being
processed is marked dirty and queued again when the worker calls :meth:`WorkQueue.done`.
Otherwise keys come out in the order they went in.
"""

from __future__ import annotations

import asyncio
import heapq
import itertools
import time
from collections import deque
from collections.abc import Callable, Hashable
from typing import Generic, Protocol, TypeVar

from kplane.core.metrics.workqueue import QueueMetrics

K = TypeVar("K", bound=Hashable)
K_contra = TypeVar("K_contra", bound=Hashable, contravariant=True)


class ShutDown(Exception):
    """Raised by :meth:`WorkQueue.get` once the queue is shut down and empty: the worker should exit."""


class RateLimiter(Protocol[K_contra]):
    def when(self, key: K_contra) -> float:
        """Seconds to wait before retrying ``key``; counts as one more failure."""

    def forget(self, key: K_contra) -> None:
        """The key succeeded: stop tracking it."""

    def num_requeues(self, key: K_contra) -> int:
        """Failures counted for ``key`` since it was last forgotten."""


class ItemExponentialFailureRateLimiter:
    """Per key: ``base * 2**failures`` seconds, at most ``max``."""

    def __init__(self, base: float = 0.005, max: float = 1000.0) -> None:
        self.base = base
        self.max = max
        self._failures: dict[Hashable, int] = {}

    def when(self, key: Hashable) -> float:
        exp = self._failures.get(key, 0)
        self._failures[key] = exp + 1
        # 2.0 ** 1024 overflows a float; any finite cap is reached long before that.
        return min(self.max, self.base * 2.0 ** min(exp, 1023))

    def forget(self, key: Hashable) -> None:
        self._failures.pop(key, None)

    def num_requeues(self, key: Hashable) -> int:
        return self._failures.get(key, 0)


class BucketRateLimiter:
    """One token bucket for all keys (golang.org/x/time/rate): ``burst`` at once, then ``qps``.

    :meth:`when` reserves a token even when none is left yet, and returns how long until it is
    there, so concurrent retries are spaced ``1/qps`` apart instead of all waking together.
    """

    def __init__(self, qps: float = 10, burst: int = 100, *, clock: Callable[[], float] = time.monotonic) -> None:
        if qps <= 0 or burst < 1:
            raise ValueError("a token bucket needs qps > 0 and burst >= 1")
        self.qps = qps
        self.burst = burst
        self._clock = clock
        self._tokens = float(burst)
        self._last = clock()

    def when(self, key: Hashable) -> float:
        now = self._clock()
        elapsed = max(0.0, now - self._last)
        self._tokens = min(float(self.burst), self._tokens + elapsed * self.qps) - 1
        self._last = max(now, self._last)
        return -self._tokens / self.qps if self._tokens < 0 else 0.0

    def forget(self, key: Hashable) -> None:
        pass  # one bucket shared by all keys: nothing is kept per key

    def num_requeues(self, key: Hashable) -> int:
        return 0


class MaxOfRateLimiter:
    """The longest delay of several limiters; every limiter sees every failure."""

    def __init__(self, *limiters: RateLimiter[Hashable]) -> None:
        self.limiters = limiters

    def when(self, key: Hashable) -> float:
        # No short cut: each limiter must count the failure (and the bucket reserve its token).
        return max((limiter.when(key) for limiter in self.limiters), default=0.0)

    def forget(self, key: Hashable) -> None:
        for limiter in self.limiters:
            limiter.forget(key)

    def num_requeues(self, key: Hashable) -> int:
        return max((limiter.num_requeues(key) for limiter in self.limiters), default=0)


def default_controller_rate_limiter() -> MaxOfRateLimiter:
    """client-go's DefaultControllerRateLimiter: per-key backoff 5 ms to 1000 s, overall 10 qps (burst 100)."""
    return MaxOfRateLimiter(ItemExponentialFailureRateLimiter(0.005, 1000.0), BucketRateLimiter(10, 100))


class WorkQueue(Generic[K]):
    """A deduplicating FIFO of keys, with delayed and rate-limited adds (see the module docstring).

    Delays run on the event loop's clock; the rate limiter defaults to
    :func:`default_controller_rate_limiter`.
    """

    def __init__(self, rate_limiter: RateLimiter[K] | None = None) -> None:
        if rate_limiter is None:
            rate_limiter = default_controller_rate_limiter()
        self._limiter: RateLimiter[K] = rate_limiter
        self._queue: deque[K] = deque()
        self._dirty: set[K] = set()  # waiting to be processed: queued, or re-added while processing
        self._processing: set[K] = set()
        self._getters: deque[asyncio.Future[None]] = deque()
        self._drainers: deque[asyncio.Future[None]] = deque()
        self._shutting_down = False
        self._draining = False
        # Delayed adds: one heap and one loop timer for the earliest. Lowering a key's delay
        # pushes a new entry; the one it replaces stays in the heap and is skipped when popped.
        self._delayed: list[tuple[float, int, K]] = []
        self._delayed_by_key: dict[K, tuple[float, int, K]] = {}
        self._seq = itertools.count()  # ties on time pop in add order, and keys are never compared
        self._timer: asyncio.TimerHandle | None = None
        self._metrics: QueueMetrics | None = None

    def instrument(self, metrics: QueueMetrics) -> None:
        """Count adds, retries and the time keys wait and are worked on into ``metrics`` (the
        controller-manager names each controller's queue so)."""
        self._metrics = metrics

    def __len__(self) -> int:
        """Keys waiting to be handed out (not those being processed, nor delayed ones)."""
        return len(self._queue)

    @property
    def shutting_down(self) -> bool:
        return self._shutting_down

    def add(self, key: K) -> None:
        if self._shutting_down or key in self._dirty:
            return
        self._dirty.add(key)
        if self._metrics is not None:
            self._metrics.added(key)
        if key not in self._processing:  # else done() queues it
            self._queue.append(key)
            _wake(self._getters, everyone=False)

    async def get(self) -> K:
        """The next key, waiting for one; the caller must call :meth:`done` with it."""
        while not self._queue:
            if self._shutting_down:
                raise ShutDown
            waiter = asyncio.get_running_loop().create_future()
            self._getters.append(waiter)
            try:
                await waiter
            except asyncio.CancelledError:
                if waiter in self._getters:
                    self._getters.remove(waiter)
                elif self._queue:  # we were woken for a key we will not take: pass it on
                    _wake(self._getters, everyone=False)
                raise
        key = self._queue.popleft()
        self._dirty.discard(key)
        self._processing.add(key)
        if self._metrics is not None:
            self._metrics.got(key)
        return key

    def done(self, key: K) -> None:
        """The worker is finished with ``key``; if it was added meanwhile it is queued again.

        A key that is not being processed is ignored, so a second ``done`` cannot queue it twice.
        """
        if key not in self._processing:
            return
        self._processing.remove(key)
        if self._metrics is not None:
            self._metrics.done(key)
        if key in self._dirty:
            self._queue.append(key)
            _wake(self._getters, everyone=False)
        elif not self._processing:
            _wake(self._drainers)

    def add_after(self, key: K, delay: float) -> None:
        """Add ``key`` in ``delay`` seconds (now if ``delay <= 0``); the earliest of several delays wins."""
        if self._shutting_down:
            return
        if delay <= 0:
            self.add(key)
            return
        loop = asyncio.get_running_loop()
        ready = loop.time() + delay
        pending = self._delayed_by_key.get(key)
        if pending is not None and pending[0] <= ready:
            return
        entry = (ready, next(self._seq), key)
        self._delayed_by_key[key] = entry
        heapq.heappush(self._delayed, entry)
        if self._timer is None or ready < self._timer.when():
            self._arm(loop)

    def add_rate_limited(self, key: K) -> None:
        """Add ``key`` after the delay the rate limiter gives it (one more failure for the key)."""
        if not self._shutting_down:
            if self._metrics is not None:
                self._metrics.retries += 1
            self.add_after(key, self._limiter.when(key))

    def forget(self, key: K) -> None:
        """Stop backing off ``key`` (call it when the key was processed successfully)."""
        self._limiter.forget(key)

    def num_requeues(self, key: K) -> int:
        return self._limiter.num_requeues(key)

    def shutdown(self) -> None:
        """Ignore new adds and drop delayed ones; :meth:`get` still hands out what is queued,
        then raises :class:`ShutDown`. Ends any :meth:`shutdown_with_drain` wait."""
        self._draining = False
        self._shut()
        _wake(self._drainers)

    async def shutdown_with_drain(self) -> None:
        """Shut down as :meth:`shutdown` does, then wait until no key is being processed.

        The wait is re-checked each time the last key in flight is done, so workers that go
        straight from ``done`` to the next queued key keep it going until the queue is empty.
        """
        self._draining = True
        self._shut()
        while self._processing and self._draining:
            waiter = asyncio.get_running_loop().create_future()
            self._drainers.append(waiter)
            await waiter

    def _shut(self) -> None:
        self._shutting_down = True
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None
        self._delayed.clear()
        self._delayed_by_key.clear()
        _wake(self._getters)

    def _arm(self, loop: asyncio.AbstractEventLoop) -> None:
        if self._timer is not None:
            self._timer.cancel()
        self._timer = loop.call_at(self._delayed[0][0], self._fire, loop) if self._delayed else None

    def _fire(self, loop: asyncio.AbstractEventLoop) -> None:
        now = loop.time()
        while self._delayed and self._delayed[0][0] <= now:
            entry = heapq.heappop(self._delayed)
            if self._delayed_by_key.get(entry[2]) is entry:
                del self._delayed_by_key[entry[2]]
                self.add(entry[2])
        self._arm(loop)


def _wake(waiters: deque[asyncio.Future[None]], *, everyone: bool = True) -> None:
    """Resolve the first waiting future (or all); waiters re-check their condition when they run."""
    while waiters:
        waiter = waiters.popleft()
        if not waiter.done():
            waiter.set_result(None)
            if not everyone:
                return
