"""core/v1 PersistentVolumeClaim: internal type and behaviour (``pkg/registry/core/persistentvolumeclaim``).

A claim asks for storage; a StatefulSet makes one per replica from each of its
``volumeClaimTemplates``. The status is the binder's (``/status``), the spec the user's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import FieldError, LabelSelector, ObjectMeta, RequestContext, Strategy

Raw = dict[str, Any]


@dataclass(slots=True)
class VolumeResourceRequirements:
    limits: dict[str, Any] | None = None
    requests: dict[str, Any] | None = None


@dataclass(slots=True)
class PersistentVolumeClaimSpec:
    access_modes: list[str] | None = None
    selector: LabelSelector | None = None
    resources: VolumeResourceRequirements = field(default_factory=VolumeResourceRequirements)
    volume_name: str | None = None
    storage_class_name: str | None = None
    volume_mode: str | None = None
    data_source: Raw | None = None
    data_source_ref: Raw | None = None
    volume_attributes_class_name: str | None = None


@dataclass(slots=True)
class PersistentVolumeClaimStatus:
    phase: str | None = None
    access_modes: list[str] | None = None
    capacity: dict[str, Any] | None = None
    conditions: list[Raw] | None = None
    allocated_resources: dict[str, Any] | None = None
    allocated_resource_statuses: dict[str, str] | None = None
    current_volume_attributes_class_name: str | None = None
    modify_volume_status: Raw | None = None


@dataclass(slots=True)
class PersistentVolumeClaim:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PersistentVolumeClaimSpec = field(default_factory=PersistentVolumeClaimSpec)
    status: PersistentVolumeClaimStatus = field(default_factory=PersistentVolumeClaimStatus)


class PersistentVolumeClaimStrategy(Strategy):
    """Create starts Pending; an update keeps the binder's status."""

    def prepare_for_create(self, ctx: RequestContext, obj: PersistentVolumeClaim) -> None:
        obj.status = PersistentVolumeClaimStatus(phase="Pending")

    def prepare_for_update(self, ctx: RequestContext, obj: PersistentVolumeClaim, old: PersistentVolumeClaim) -> None:
        obj.status = old.status

    def validate(self, ctx: RequestContext, obj: PersistentVolumeClaim) -> list[FieldError]:
        return []


class PersistentVolumeClaimStatusStrategy(Strategy):
    """``/status``: the spec stays as stored."""

    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: PersistentVolumeClaim, old: PersistentVolumeClaim) -> None:
        obj.spec = old.spec
