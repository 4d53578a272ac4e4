"""Internal types of scheduling.k8s.io: PriorityClass."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta


@dataclass(slots=True)
class PriorityClass:
    """A name for a pod priority: pods naming it get its ``value`` (and preemption policy)."""

    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    value: int = 0
    global_default: bool | None = None
    description: str | None = None
    preemption_policy: str | None = None
