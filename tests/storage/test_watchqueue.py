"""EventQueue (kplane.core.storage.watchqueue), the buffer every backend's watches share: its order,
its one ending and what that ending keeps, one event or a batch at a time, on its own rather than
through a backend; and ``batched``, which gives any event iterator the same batches."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

import pytest

from kplane.core.storage.interface import (
    EventType,
    KeyValue,
    StorageError,
    WatcherOverflowError,
    WatchEvent,
)
from kplane.core.storage.watchqueue import EventQueue, batched


def event(revision: int) -> WatchEvent:
    return WatchEvent(EventType.ADDED, KeyValue(f"/w/{revision}", b"v", revision, revision))


async def test_get_waits_for_put_and_keeps_the_order() -> None:
    queue = EventQueue("/w/", 10)
    waiting = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    assert not waiting.done()
    queue.put(event(1))
    queue.put(event(2))
    assert len(queue) == 2
    assert await asyncio.wait_for(waiting, 5) == event(1)
    assert await queue.get() == event(2)
    assert len(queue) == 0


async def test_one_event_past_capacity_ends_the_queue_with_overflow_once() -> None:
    queue = EventQueue("/w/", 2)
    for revision in (1, 2, 3):
        queue.put(event(revision))
    assert queue.done and len(queue) == 0  # what was queued is dropped with the overflow
    queue.put(event(4))  # ignored once ended
    with pytest.raises(WatcherOverflowError) as raised:
        await queue.get()
    assert (raised.value.prefix, raised.value.capacity) == ("/w/", 2)
    with pytest.raises(StopAsyncIteration):
        await queue.get()


async def test_end_keeping_the_buffer_delivers_it_before_the_error() -> None:
    queue = EventQueue("/w/", 10)
    queue.put(event(1))
    queue.end(StorageError("gone"), keep_buffered=True)
    queue.end(None)  # only the first end counts: neither the events nor the error go
    assert await queue.get() == event(1)
    with pytest.raises(StorageError, match="gone"):
        await queue.get()
    with pytest.raises(StopAsyncIteration):
        await queue.get()


async def test_end_wakes_a_waiting_get() -> None:
    queue = EventQueue("/w/", 10)
    waiting = asyncio.create_task(queue.get())
    await asyncio.sleep(0)
    queue.end()
    with pytest.raises(StopAsyncIteration):
        await asyncio.wait_for(waiting, 5)


async def test_an_overflow_ends_through_the_subclass_end() -> None:
    class Registered(EventQueue):
        def __init__(self) -> None:
            super().__init__("/w/", 1)
            self.released: list[StorageError | None] = []

        def end(self, error: StorageError | None = None, *, keep_buffered: bool = False) -> None:
            super().end(error, keep_buffered=keep_buffered)
            self.released.append(error)

    queue = Registered()
    queue.put(event(1))
    queue.put(event(2))
    assert [type(error) for error in queue.released] == [WatcherOverflowError]


async def test_batch_hands_out_everything_queued_at_once_in_order() -> None:
    queue = EventQueue("/w/", 10)
    waiting = asyncio.create_task(queue.batch(None))
    await asyncio.sleep(0)
    for revision in (1, 2, 3):  # put before the consumer runs: one wakeup, one batch
        queue.put(event(revision))
    assert await asyncio.wait_for(waiting, 5) == [event(1), event(2), event(3)]
    assert len(queue) == 0


async def test_a_batch_that_times_out_is_empty_and_loses_nothing() -> None:
    queue = EventQueue("/w/", 10)
    assert await queue.batch(0.01) == []
    queue.put(event(1))
    assert await queue.batch(0.01) == [event(1)]


async def test_batch_ends_as_get_does_the_error_after_the_events() -> None:
    queue = EventQueue("/w/", 10)
    queue.put(event(1))
    queue.end(StorageError("gone"), keep_buffered=True)
    assert await queue.batch(None) == [event(1)]
    with pytest.raises(StorageError, match="gone"):
        await queue.batch(None)
    with pytest.raises(StopAsyncIteration):
        await queue.batch(None)


async def test_any_event_iterator_batched_keeps_its_events_and_its_errors() -> None:
    async def source() -> AsyncIterator[WatchEvent]:
        for revision in (1, 2):
            yield event(revision)
        raise StorageError("broke")

    queue = batched(source())
    got: list[WatchEvent] = []
    with pytest.raises(StorageError, match="broke"):
        while True:
            got += await queue.batch(5)
    assert got == [event(1), event(2)]
    await queue.aclose()


async def test_a_batched_iterator_failing_as_it_closes_fails_aclose() -> None:
    async def source() -> AsyncIterator[WatchEvent]:
        try:
            yield event(1)
            await asyncio.Event().wait()
        finally:
            raise StorageError("broke while closing")

    queue = batched(source())
    assert await queue.batch(5) == [event(1)]
    with pytest.raises(StorageError, match="while closing"):
        await queue.aclose()


# --- a sink: events handed on as they are put ------------------------------------------------


async def test_a_sink_takes_each_event_while_none_is_queued() -> None:
    queue, taken = EventQueue("/w/", 10), []
    queue.deliver(lambda e: taken.append(e) is None)
    queue.put(event(1))
    queue.put(event(2))
    assert taken == [event(1), event(2)] and len(queue) == 0


async def test_an_event_the_sink_refuses_and_every_one_after_it_queue_until_taken() -> None:
    queue, taken, room = EventQueue("/w/", 10), [], [True]

    def sink(e: WatchEvent) -> bool:
        if room[0]:
            taken.append(e)
        return room[0]

    queue.deliver(sink)
    queue.put(event(1))
    room[0] = False
    queue.put(event(2))
    room[0] = True  # room again, but event 2 waits: 3 must not overtake it
    queue.put(event(3))
    assert taken == [event(1)]
    assert await queue.batch(1) == [event(2), event(3)]
    queue.put(event(4))  # nothing queued any more: the sink again
    assert taken == [event(1), event(4)]


async def test_refused_events_still_overflow_the_queue() -> None:
    queue = EventQueue("/w/", 2)
    queue.deliver(lambda e: False)
    for revision in (1, 2, 3):
        queue.put(event(revision))
    assert queue.done
    with pytest.raises(WatcherOverflowError):
        await queue.batch(1)


async def test_an_ended_queue_hands_nothing_to_its_sink() -> None:
    queue, taken = EventQueue("/w/", 10), []
    queue.deliver(lambda e: taken.append(e) is None)
    queue.end()
    queue.put(event(1))
    assert taken == [] and len(queue) == 0
