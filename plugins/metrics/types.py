"""Internal types of metrics.k8s.io: NodeMetrics and PodMetrics (``k8s.io/metrics/pkg/apis/metrics``),
made on request from the simulated containers' declared usage (``usage.py``), never stored."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta


@dataclass(slots=True)
class NodeMetrics:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    timestamp: str | None = None
    window: str = ""
    usage: dict[str, str] | None = None


@dataclass(slots=True)
class ContainerMetrics:
    name: str = ""
    usage: dict[str, str] | None = None


@dataclass(slots=True)
class PodMetrics:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    timestamp: str | None = None
    window: str = ""
    containers: list[ContainerMetrics] | None = None
