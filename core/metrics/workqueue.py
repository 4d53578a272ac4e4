"""client-go's workqueue metrics (``k8s.io/component-base/metrics/prometheus/workqueue``), one
series per queue ``name``: what a controller-manager exposes of its controllers' queues."""

from __future__ import annotations

import time
from collections.abc import Callable, Hashable, Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import CounterMetricFamily, Metric

from kplane.core.metrics.families import Collected, Durations, gauge

# client-go's: 10 ns to 10 s, by powers of ten.
DURATION_BUCKETS = tuple(10.0 ** exponent for exponent in range(-8, 2))


class QueueMetrics:
    """One queue's figures, fed by :class:`kplane.core.client.workqueue.WorkQueue` as keys go
    in, out and are done. ``depth`` reads the queue's length when scraped."""

    def __init__(self, name: str, queue_time: Durations, work_time: Durations, depth: Callable[[], int]) -> None:
        self.name = name
        self._key = (name,)
        self.depth = depth
        self.adds = 0
        self.retries = 0
        self._queue_time, self._work_time = queue_time, work_time
        self._added: dict[Hashable, float] = {}
        self._started: dict[Hashable, float] = {}

    def follow(self, depth: Callable[[], int]) -> None:
        """Count for a new queue of the same name: the old one's keys in flight are forgotten."""
        self.depth = depth
        self._added.clear()
        self._started.clear()

    def added(self, key: Hashable) -> None:
        self.adds += 1
        self._added.setdefault(key, time.monotonic())

    def got(self, key: Hashable) -> None:
        now = time.monotonic()
        added = self._added.pop(key, None)
        if added is not None:
            self._queue_time.observe(self._key, now - added)
        self._started[key] = now

    def done(self, key: Hashable) -> None:
        started = self._started.pop(key, None)
        if started is not None:
            self._work_time.observe(self._key, time.monotonic() - started)

    def unfinished(self, now: float) -> tuple[float, float]:
        """(seconds of work in progress summed, the longest one)."""
        running = [now - started for started in self._started.values()]
        return sum(running), max(running, default=0.0)


class WorkqueueMetrics:
    """The workqueue metrics of one component's registry; :meth:`for_queue` gives each queue its
    own series. A queue made again under the same name (controllers rebuilt for a new term of
    leadership) continues the same counters."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self._queue_time = Durations("workqueue_queue_duration_seconds", "How long in seconds an item stays in "
                                     "workqueue before being requested.", ("name",), DURATION_BUCKETS)
        self._work_time = Durations("workqueue_work_duration_seconds", "How long in seconds processing an item "
                                    "from workqueue takes.", ("name",), DURATION_BUCKETS)
        self._queues: dict[str, QueueMetrics] = {}
        registry.register(Collected(self._families))

    def for_queue(self, name: str, depth: Callable[[], int]) -> QueueMetrics:
        found = self._queues.get(name)
        if found is None:
            found = self._queues[name] = QueueMetrics(name, self._queue_time, self._work_time, depth)
        found.follow(depth)
        return found

    def _families(self) -> Iterator[Metric]:
        now = time.monotonic()
        queues = sorted(self._queues.values(), key=lambda queue: queue.name)
        unfinished = {queue.name: queue.unfinished(now) for queue in queues}
        yield self._queue_time.family()
        yield self._work_time.family()
        yield gauge("workqueue_depth", "Current depth of workqueue", ("name",),
                    [((queue.name,), queue.depth()) for queue in queues])
        yield _counter("workqueue_adds_total", "Total number of adds handled by workqueue",
                       [(queue.name, queue.adds) for queue in queues])
        yield _counter("workqueue_retries_total", "Total number of retries handled by workqueue",
                       [(queue.name, queue.retries) for queue in queues])
        yield gauge("workqueue_unfinished_work_seconds", "How many seconds of work has been done that is in "
                    "progress and hasn't been observed by work_duration.", ("name",),
                    [((name,), figures[0]) for name, figures in unfinished.items()])
        yield gauge("workqueue_longest_running_processor_seconds", "How many seconds has the longest running "
                    "processor for workqueue been running.", ("name",),
                    [((name,), figures[1]) for name, figures in unfinished.items()])


def _counter(name: str, documentation: str, samples: list[tuple[str, int]]) -> Metric:
    family = CounterMetricFamily(name, documentation, labels=("name",))
    for queue, value in samples:
        family.add_metric((queue,), value)
    return family
