"""The controller work queue: dedup, one worker per key, delays, rate limiters, shutdown."""

from __future__ import annotations

import asyncio
import random

import pytest

from kplane.core.client.workqueue import (
    BucketRateLimiter,
    ItemExponentialFailureRateLimiter,
    MaxOfRateLimiter,
    ShutDown,
    WorkQueue,
    default_controller_rate_limiter,
)


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


async def get(queue: WorkQueue, timeout: float = 1.0):
    return await asyncio.wait_for(queue.get(), timeout)


async def settle() -> None:
    """Let every ready task run (a few loop turns)."""
    for _ in range(5):
        await asyncio.sleep(0)


async def test_a_key_waits_in_the_queue_once():
    queue: WorkQueue[str] = WorkQueue()
    for key in ("a", "b", "a", "a", "b"):
        queue.add(key)
    assert len(queue) == 2
    assert [await get(queue), await get(queue)] == ["a", "b"]
    assert len(queue) == 0


async def test_keys_come_out_in_the_order_they_went_in():
    queue: WorkQueue[int] = WorkQueue()
    keys = [5, 3, 9, 1, 7]
    for key in keys:
        queue.add(key)
    assert [await get(queue) for _ in keys] == keys


async def test_a_key_added_while_processing_is_held_until_done_then_queued_once():
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    assert await get(queue) == "a"
    queue.add("a")
    queue.add("a")
    assert len(queue) == 0  # held, not queued: no other worker may take it
    other = asyncio.create_task(queue.get())
    await settle()
    assert not other.done()

    queue.done("a")
    assert await asyncio.wait_for(other, 1) == "a"
    assert len(queue) == 0  # once, however often it was re-added
    queue.done("a")
    queue.done("a")  # a stray second done must not queue it again
    assert len(queue) == 0
    queue.add("b")
    queue.done("b")  # nor a done for a key that is only queued
    assert len(queue) == 1


async def test_workers_never_share_a_key_and_every_add_is_processed():
    rng = random.Random(7)
    queue: WorkQueue[int] = WorkQueue()
    keys = range(12)
    active: set[int] = set()
    clock = 0  # event counter: the last add of a key must be followed by a processing start
    last_add: dict[int, int] = {}
    last_start: dict[int, int] = {}
    errors: list[str] = []

    def add(key: int) -> None:
        nonlocal clock
        if not queue.shutting_down:  # adds during the drain are ignored, by design
            clock += 1
            last_add[key] = clock
        queue.add(key)

    async def worker() -> None:
        nonlocal clock
        while True:
            try:
                key = await queue.get()
            except ShutDown:
                return
            if key in active:
                errors.append(f"key {key} handed to two workers")
            active.add(key)
            clock += 1
            last_start[key] = clock
            await asyncio.sleep(rng.choice((0, 0, 0.0005)))
            if rng.random() < 0.3:
                add(rng.choice(keys))  # events arriving while processing, some for this very key
            active.discard(key)
            queue.done(key)

    workers = [asyncio.create_task(worker()) for _ in range(8)]
    for _ in range(400):
        add(rng.choice(keys))
        if len(queue) > len(keys):
            errors.append("a key queued twice")
        if rng.random() < 0.3:
            await asyncio.sleep(rng.choice((0, 0.0002)))
    await asyncio.wait_for(queue.shutdown_with_drain(), 2)
    await asyncio.wait_for(asyncio.gather(*workers), 2)

    assert not errors
    assert not active
    stale = [key for key in last_add if last_start.get(key, 0) < last_add[key]]
    assert not stale, f"added but never processed afterwards: {stale}"


async def test_add_after_hands_keys_out_in_order_of_readiness():
    queue: WorkQueue[str] = WorkQueue()
    queue.add_after("late", 0.03)
    queue.add_after("early", 0.01)
    queue.add_after("middle", 0.02)
    queue.add_after("now", 0)
    queue.add_after("past", -1)
    assert len(queue) == 2  # no delay: added at once
    assert [await get(queue) for _ in range(5)] == ["now", "past", "early", "middle", "late"]


async def test_add_after_keeps_the_earliest_delay_of_a_key():
    queue: WorkQueue[str] = WorkQueue()
    loop = asyncio.get_running_loop()
    started = loop.time()
    queue.add_after("lowered", 30)
    queue.add_after("lowered", 0.01)
    queue.add_after("kept", 0.01)
    queue.add_after("kept", 30)
    assert {await get(queue), await get(queue)} == {"lowered", "kept"}
    assert loop.time() - started < 1
    queue.done("lowered")
    queue.done("kept")
    await asyncio.sleep(0.02)
    assert len(queue) == 0  # the dropped delays do not add the keys again


async def test_add_after_uses_one_timer_not_a_task_per_key():
    queue: WorkQueue[int] = WorkQueue()
    tasks = len(asyncio.all_tasks())
    for key in range(200):
        queue.add_after(key, 0.01 + key / 100_000)
    assert len(asyncio.all_tasks()) == tasks
    assert [await get(queue) for _ in range(200)] == list(range(200))


async def test_shutdown_drops_delayed_keys_and_cancels_the_timer(monkeypatch):
    loop = asyncio.get_running_loop()
    timers: list[asyncio.TimerHandle] = []

    def call_at(*args, **kwargs):
        timers.append(loop_call_at(*args, **kwargs))
        return timers[-1]

    loop_call_at = loop.call_at
    monkeypatch.setattr(loop, "call_at", call_at)
    queue: WorkQueue[str] = WorkQueue()
    queue.add_after("a", 0.01)
    queue.add_after("b", 0.02)
    assert timers
    queue.shutdown()
    assert all(timer.cancelled() for timer in timers)
    await asyncio.sleep(0.03)
    assert len(queue) == 0
    with pytest.raises(ShutDown):
        await get(queue)


def test_exponential_backoff_doubles_per_failure_up_to_the_cap_and_forget_resets():
    limiter = ItemExponentialFailureRateLimiter(base=0.005, max=0.1)
    assert [limiter.when("a") for _ in range(7)] == pytest.approx([0.005, 0.01, 0.02, 0.04, 0.08, 0.1, 0.1])
    assert limiter.num_requeues("a") == 7
    assert limiter.when("b") == pytest.approx(0.005)  # per key
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    assert limiter.when("a") == pytest.approx(0.005)
    for _ in range(3000):  # far past where 2**n overflows a float
        delay = limiter.when("b")
    assert delay == 0.1


def test_exponential_backoff_defaults():
    limiter = ItemExponentialFailureRateLimiter()
    delays = [limiter.when("a") for _ in range(20)]
    assert delays[:3] == pytest.approx([0.005, 0.01, 0.02])
    assert delays[-1] == 1000.0


def test_bucket_allows_a_burst_then_spaces_by_qps():
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=10, burst=100, clock=clock)
    assert [limiter.when(n) for n in range(100)] == [0.0] * 100
    # Empty: each call reserves the next token, so delays grow by 1/qps.
    assert [limiter.when(n) for n in range(3)] == pytest.approx([0.1, 0.2, 0.3])
    clock.now += 0.3  # pays back the three reserved tokens, nothing more
    assert limiter.when("x") == pytest.approx(0.1)
    clock.now += 1000  # refills, but only up to the burst
    assert [limiter.when(n) for n in range(101)] == pytest.approx([0.0] * 100 + [0.1])
    assert limiter.num_requeues("x") == 0


def test_bucket_refills_at_qps():
    clock = FakeClock()
    limiter = BucketRateLimiter(qps=2, burst=3, clock=clock)
    assert [limiter.when("k") for _ in range(5)] == pytest.approx([0, 0, 0, 0.5, 1.0])
    clock.now += 2.0  # four tokens' worth: pays the two borrowed, leaves two
    assert [limiter.when("k") for _ in range(3)] == pytest.approx([0, 0, 0.5])


def test_max_of_takes_the_longest_delay_and_every_limiter_counts():
    clock = FakeClock()
    bucket = BucketRateLimiter(qps=1, burst=2, clock=clock)
    backoff = ItemExponentialFailureRateLimiter(base=0.25, max=100)
    limiter = MaxOfRateLimiter(bucket, backoff)
    assert limiter.when("a") == pytest.approx(0.25)  # backoff; the bucket had a token
    assert limiter.when("a") == pytest.approx(0.5)  # backoff; the bucket's last token
    assert limiter.when("b") == pytest.approx(1.0)  # bucket empty: it wins over b's backoff
    assert limiter.num_requeues("a") == 2 and backoff.num_requeues("b") == 1
    limiter.forget("a")
    assert limiter.num_requeues("a") == 0
    clock.now += 10
    assert limiter.when("a") == pytest.approx(0.25)


def test_default_controller_rate_limiter_is_client_gos():
    limiter = default_controller_rate_limiter()
    # A 5 ms per-key backoff for the first failures of many keys, until the burst of 100 is spent.
    assert [limiter.when(n) for n in range(100)] == pytest.approx([0.005] * 100)
    assert 0.05 < limiter.when(100) <= 0.1  # then 10 per second (a real clock: allow for elapsed time)
    delays = [limiter.when("a") for _ in range(25)]
    assert delays[-1] == 1000.0


async def test_add_rate_limited_delays_by_the_limiter_and_forget_resets():
    queue: WorkQueue[str] = WorkQueue(ItemExponentialFailureRateLimiter(base=0.01, max=1))
    queue.add_rate_limited("a")
    assert len(queue) == 0  # not yet
    assert queue.num_requeues("a") == 1
    assert await get(queue) == "a"
    queue.done("a")
    queue.add_rate_limited("a")
    assert queue.num_requeues("a") == 2
    queue.forget("a")
    assert queue.num_requeues("a") == 0


async def test_shutdown_wakes_waiting_getters_with_shutdown():
    queue: WorkQueue[str] = WorkQueue()
    getters = [asyncio.create_task(queue.get()) for _ in range(3)]
    await settle()
    assert not any(g.done() for g in getters)
    queue.shutdown()
    assert queue.shutting_down
    results = await asyncio.wait_for(asyncio.gather(*getters, return_exceptions=True), 1)
    assert all(isinstance(r, ShutDown) for r in results)


async def test_keys_queued_before_shutdown_are_still_handed_out():
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.add("b")
    queue.shutdown()
    assert [await get(queue), await get(queue)] == ["a", "b"]
    with pytest.raises(ShutDown):
        await get(queue)


async def test_adds_after_shutdown_are_ignored():
    limiter = ItemExponentialFailureRateLimiter()
    queue: WorkQueue[str] = WorkQueue(limiter)
    queue.shutdown()
    queue.add("a")
    queue.add_after("b", 0)
    queue.add_after("c", 0.001)
    queue.add_rate_limited("d")
    await asyncio.sleep(0.01)
    assert len(queue) == 0
    assert limiter.num_requeues("d") == 0
    with pytest.raises(ShutDown):
        await get(queue)


async def test_shutdown_with_drain_waits_for_keys_in_flight():
    queue: WorkQueue[str] = WorkQueue()
    queue.add("a")
    queue.add("b")
    assert await get(queue) == "a"
    assert await get(queue) == "b"
    drain = asyncio.create_task(queue.shutdown_with_drain())
    await settle()
    assert queue.shutting_down and not drain.done()
    queue.add("c")
    assert len(queue) == 0
    queue.done("a")
    await settle()
    assert not drain.done()  # b is still in flight
    queue.done("b")
    await asyncio.wait_for(drain, 1)


async def test_shutdown_with_drain_returns_at_once_when_idle_and_shutdown_ends_the_wait():
    queue: WorkQueue[str] = WorkQueue()
    await asyncio.wait_for(queue.shutdown_with_drain(), 1)

    queue = WorkQueue()
    queue.add("a")
    assert await get(queue) == "a"
    drain = asyncio.create_task(queue.shutdown_with_drain())
    await settle()
    assert not drain.done()
    queue.shutdown()  # stop waiting for stuck workers
    await asyncio.wait_for(drain, 1)


async def test_a_cancelled_getter_passes_its_wakeup_on():
    queue: WorkQueue[str] = WorkQueue()
    first = asyncio.create_task(queue.get())
    second = asyncio.create_task(queue.get())
    await settle()
    queue.add("a")  # wakes the first getter...
    first.cancel()  # ...which is cancelled before it can take the key
    assert await asyncio.wait_for(second, 1) == "a"
    assert first.cancelled()
