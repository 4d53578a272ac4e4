"""Internal types of the coordination.k8s.io group: Lease."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta


@dataclass(slots=True)
class LeaseSpec:
    holder_identity: str | None = None
    lease_duration_seconds: int | None = None
    acquire_time: str | None = None  # MicroTime: RFC 3339 with microseconds
    renew_time: str | None = None  # MicroTime
    lease_transitions: int | None = None
    strategy: str | None = None
    preferred_holder: str | None = None


@dataclass(slots=True)
class Lease:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: LeaseSpec = field(default_factory=LeaseSpec)
