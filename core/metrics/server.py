"""The metrics of one API server process, on a registry of its own."""

from __future__ import annotations

from dataclasses import dataclass, field

from prometheus_client import CollectorRegistry

from kplane.core.metrics.families import new_registry
from kplane.core.metrics.requests import RequestMetrics
from kplane.core.metrics.storage import StorageMetrics
from kplane.core.metrics.workqueue import WorkqueueMetrics


@dataclass
class ServerMetrics:
    """What a server's ``/metrics`` shows: its requests (with the max in-flight filter's counts,
    ``in_flight``), its storage, and the work queues of its in-process controllers."""

    registry: CollectorRegistry = field(default_factory=new_registry)
    in_flight: dict[bool, int] = field(default_factory=lambda: {True: 0, False: 0})

    def __post_init__(self) -> None:
        self.requests = RequestMetrics(self.registry, self.in_flight)
        self.storage = StorageMetrics(self.registry)
        self.workqueues = WorkqueueMetrics(self.registry)
