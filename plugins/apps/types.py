"""Internal types of the apps group: Deployment, ReplicaSet, StatefulSet, DaemonSet and ControllerRevision."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import LabelSelector, ObjectMeta
from kplane.plugins.core.types import PodTemplateSpec
from kplane.plugins.core.volumes import PersistentVolumeClaimSpec, PersistentVolumeClaimStatus


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


@dataclass(slots=True)
class RollingUpdateDaemonSet:
    max_unavailable: int | str | None = None
    max_surge: int | str | None = None


@dataclass(slots=True)
class DaemonSetUpdateStrategy:
    type: str | None = None
    rolling_update: RollingUpdateDaemonSet | None = None


@dataclass(slots=True)
class DaemonSetSpec:
    selector: LabelSelector | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)
    update_strategy: DaemonSetUpdateStrategy = field(default_factory=DaemonSetUpdateStrategy)
    min_ready_seconds: int | None = None
    revision_history_limit: int | None = None


@dataclass(slots=True)
class DaemonSetCondition:
    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class DaemonSetStatus:
    current_number_scheduled: int | None = None
    number_misscheduled: int | None = None
    desired_number_scheduled: int | None = None
    number_ready: int | None = None
    observed_generation: int | None = None
    updated_number_scheduled: int | None = None
    number_available: int | None = None
    number_unavailable: int | None = None
    collision_count: int | None = None
    conditions: list[DaemonSetCondition] | None = None


@dataclass(slots=True)
class DaemonSet:
    """One pod per eligible node, made from ``spec.template``."""

    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: DaemonSetSpec = field(default_factory=DaemonSetSpec)
    status: DaemonSetStatus = field(default_factory=DaemonSetStatus)


@dataclass(slots=True)
class PersistentVolumeClaimTemplate:
    """An item of ``volumeClaimTemplates``: a whole PersistentVolumeClaim (its type meta may be
    written too), from which each replica gets a claim of its own."""

    api_version: str | None = None
    kind: str | None = None
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = field(default_factory=PersistentVolumeClaimStatus)


@dataclass(slots=True)
class RollingUpdateStatefulSetStrategy:
    partition: int | None = None
    max_unavailable: int | str | None = None


@dataclass(slots=True)
class StatefulSetUpdateStrategy:
    type: str | None = None
    rolling_update: RollingUpdateStatefulSetStrategy | None = None


@dataclass(slots=True)
class StatefulSetPersistentVolumeClaimRetentionPolicy:
    when_deleted: str | None = None
    when_scaled: str | None = None


@dataclass(slots=True)
class StatefulSetOrdinals:
    start: int = 0


@dataclass(slots=True)
class StatefulSetSpec:
    replicas: int | None = None
    selector: LabelSelector | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)
    volume_claim_templates: list[PersistentVolumeClaimTemplate] | None = None
    service_name: str | None = None
    pod_management_policy: str | None = None
    update_strategy: StatefulSetUpdateStrategy = field(default_factory=StatefulSetUpdateStrategy)
    revision_history_limit: int | None = None
    min_ready_seconds: int | None = None
    persistent_volume_claim_retention_policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None = None
    ordinals: StatefulSetOrdinals | None = None


@dataclass(slots=True)
class StatefulSetCondition:
    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class StatefulSetStatus:
    observed_generation: int | None = None
    replicas: int = 0
    ready_replicas: int | None = None
    current_replicas: int | None = None
    updated_replicas: int | None = None
    current_revision: str | None = None
    update_revision: str | None = None
    collision_count: int | None = None
    conditions: list[StatefulSetCondition] | None = None
    available_replicas: int = 0


@dataclass(slots=True)
class StatefulSet:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: StatefulSetSpec = field(default_factory=StatefulSetSpec)
    status: StatefulSetStatus = field(default_factory=StatefulSetStatus)
