"""Internal types of node.k8s.io: RuntimeClass."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import ObjectMeta


@dataclass(slots=True)
class Overhead:
    pod_fixed: dict[str, Any] | None = None


@dataclass(slots=True)
class Scheduling:
    node_selector: dict[str, str] | None = None
    tolerations: list[dict[str, Any]] | None = None


@dataclass(slots=True)
class RuntimeClass:
    """A container runtime configuration pods may ask for by name (``runtimeClassName``)."""

    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    handler: str = ""
    overhead: Overhead | None = None
    scheduling: Scheduling | None = None
