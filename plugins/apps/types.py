"""Internal types of the apps group: Deployment, ReplicaSet and ControllerRevision."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import LabelSelector, ObjectMeta
from kplane.plugins.core.types import PodTemplateSpec


@dataclass(slots=True)
class RollingUpdateDeployment:
    max_unavailable: int | str | None = None
    max_surge: int | str | None = None


@dataclass(slots=True)
class DeploymentStrategy:
    type: str | None = None
    rolling_update: RollingUpdateDeployment | None = None


@dataclass(slots=True)
class DeploymentSpec:
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)
    strategy: DeploymentStrategy | None = None
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None
    paused: bool | None = None
    progress_deadline_seconds: int | None = None


@dataclass(slots=True)
class DeploymentCondition:
    type: str = ""
    status: str = ""
    last_update_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class DeploymentStatus:
    observed_generation: int | None = None
    replicas: int | None = None
    updated_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    unavailable_replicas: int | None = None
    terminating_replicas: int | None = None
    conditions: list[DeploymentCondition] | None = None
    collision_count: int | None = None


@dataclass(slots=True)
class Deployment:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: DeploymentSpec = field(default_factory=DeploymentSpec)
    status: DeploymentStatus = field(default_factory=DeploymentStatus)


@dataclass(slots=True)
class ReplicaSetSpec:
    replicas: int | None = None
    min_ready_seconds: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)


@dataclass(slots=True)
class ReplicaSetCondition:
    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class ReplicaSetStatus:
    replicas: int | None = None
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    terminating_replicas: int | None = None
    observed_generation: int | None = None
    conditions: list[ReplicaSetCondition] | None = None


@dataclass(slots=True)
class ReplicaSet:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ReplicaSetSpec = field(default_factory=ReplicaSetSpec)
    status: ReplicaSetStatus = field(default_factory=ReplicaSetStatus)


@dataclass(slots=True)
class ControllerRevision:
    """An immutable snapshot of a controller's state (StatefulSet and DaemonSet templates, as a
    patch in ``data``), numbered by ``revision`` so that rollouts can be undone."""

    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    data: Any = None
    revision: int = 0
