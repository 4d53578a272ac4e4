"""The building blocks: a registry per component, counters kept as plain dicts, gauges read
when scraped, and the text a scrape answers."""

from __future__ import annotations

import bisect
from collections.abc import Callable, Iterable, Iterator

from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily, HistogramMetricFamily, Metric
from prometheus_client.exposition import CONTENT_TYPE_PLAIN_0_0_4
from prometheus_client.registry import Collector

Labels = tuple[str, ...]
#: What a scrape answers with: the Prometheus text format, version 0.0.4, which
#: ``generate_latest`` writes and every Prometheus reads (kube-apiserver's too).
CONTENT_TYPE = CONTENT_TYPE_PLAIN_0_0_4

# kube-apiserver's request and etcd latency buckets (seconds).
REQUEST_BUCKETS = (0.005, 0.025, 0.05, 0.1, 0.2, 0.4, 0.6, 0.8, 1.0, 1.25, 1.5, 2.0, 3.0, 4.0, 5.0, 6.0, 8.0,
                   10.0, 15.0, 20.0, 30.0, 45.0, 60.0)


def new_registry() -> CollectorRegistry:
    """A registry of one component's metrics (not described at registration: collectors here
    compute their families when scraped)."""
    return CollectorRegistry(auto_describe=False)


def exposition(registry: CollectorRegistry) -> bytes:
    """The registry's metrics in the text format, as a scrape answers."""
    return generate_latest(registry)


class Tally:
    """A counter (or gauge) by label values, kept in a dict: counting is one dict update, cheap
    enough for every request and watch event; the family is built only when scraped. Callers
    bound the label values (they come from what the server serves, never from a URL unchecked)."""

    __slots__ = ("name", "documentation", "labels", "gauge", "values")

    def __init__(self, name: str, documentation: str, labels: Labels, *, gauge: bool = False) -> None:
        self.name, self.documentation, self.labels, self.gauge = name, documentation, labels, gauge
        self.values: dict[Labels, float] = {}

    def add(self, key: Labels, amount: float = 1) -> None:
        values = self.values
        values[key] = values.get(key, 0) + amount

    def set(self, key: Labels, value: float) -> None:
        self.values[key] = value

    def family(self) -> Metric:
        family: CounterMetricFamily | GaugeMetricFamily
        if self.gauge:
            family = GaugeMetricFamily(self.name, self.documentation, labels=self.labels)
        else:
            family = CounterMetricFamily(self.name, self.documentation, labels=self.labels)
        for key, value in self.values.items():
            family.add_metric(key, value)
        return family


class Durations:
    """A histogram by label values, kept as plain lists (a count per bucket, then the sum): an
    observation is a bisection and two additions, a third of prometheus_client's Histogram,
    which takes a lock per bucket and per sum; cumulated into the family only when scraped."""

    __slots__ = ("name", "documentation", "labels", "bounds", "values")

    def __init__(self, name: str, documentation: str, labels: Labels, bounds: tuple[float, ...]) -> None:
        self.name, self.documentation, self.labels, self.bounds = name, documentation, labels, bounds
        self.values: dict[Labels, list[float]] = {}

    def observe(self, key: Labels, seconds: float) -> None:
        series = self.values.get(key)
        if series is None:
            series = self.values[key] = [0] * (len(self.bounds) + 2)  # the buckets, +Inf, the sum
        series[bisect.bisect_left(self.bounds, seconds)] += 1
        series[-1] += seconds

    def family(self) -> Metric:
        family = HistogramMetricFamily(self.name, self.documentation, labels=self.labels)
        edges = [str(float(bound)) for bound in self.bounds] + ["+Inf"]
        for key, series in self.values.items():
            running, buckets = 0.0, []
            for edge, count in zip(edges, series):
                running += count
                buckets.append((edge, running))
            family.add_metric(key, buckets, series[-1])
        return family


def gauge(name: str, documentation: str, labels: Labels, samples: Iterable[tuple[Labels, float]]) -> Metric:
    """A gauge family of samples read now."""
    family = GaugeMetricFamily(name, documentation, labels=labels)
    for key, value in samples:
        family.add_metric(key, value)
    return family


class Collected(Collector):
    """A collector of families made at scrape time by ``sources`` (each returns some)."""

    def __init__(self, *sources: Callable[[], Iterable[Metric]]) -> None:
        self._sources = sources

    def collect(self) -> Iterator[Metric]:
        for source in self._sources:
            yield from source()
