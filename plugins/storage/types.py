"""Internal types of the storage.k8s.io group: StorageClass, CSIDriver, CSINode,
CSIStorageCapacity and VolumeAttachment."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import LabelSelector, ObjectMeta

Raw = dict[str, Any]


@dataclass(slots=True)
class StorageClass:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    provisioner: str = ""
    parameters: dict[str, str] | None = None
    reclaim_policy: str | None = None
    mount_options: list[str] | None = None
    allow_volume_expansion: bool | None = None
    volume_binding_mode: str | None = None
    allowed_topologies: list[Raw] | None = None


@dataclass(slots=True)
class CSIDriverSpec:
    attach_required: bool | None = None
    pod_info_on_mount: bool | None = None
    volume_lifecycle_modes: list[str] | None = None
    storage_capacity: bool | None = None
    fs_group_policy: str | None = None
    token_requests: list[Raw] | None = None
    requires_republish: bool | None = None
    se_linux_mount: bool | None = None


@dataclass(slots=True)
class CSIDriver:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: CSIDriverSpec = field(default_factory=CSIDriverSpec)


@dataclass(slots=True)
class CSINodeDriver:
    name: str = ""
    node_id: str = ""
    topology_keys: list[str] | None = None
    allocatable: Raw | None = None


@dataclass(slots=True)
class CSINodeSpec:
    drivers: list[CSINodeDriver] | None = None


@dataclass(slots=True)
class CSINode:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: CSINodeSpec = field(default_factory=CSINodeSpec)


@dataclass(slots=True)
class CSIStorageCapacity:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    node_topology: LabelSelector | None = None
    storage_class_name: str = ""
    capacity: Any = None
    maximum_volume_size: Any = None


@dataclass(slots=True)
class VolumeAttachmentSource:
    persistent_volume_name: str | None = None
    inline_volume_spec: Raw | None = None


@dataclass(slots=True)
class VolumeAttachmentSpec:
    attacher: str = ""
    source: VolumeAttachmentSource = field(default_factory=VolumeAttachmentSource)
    node_name: str = ""


@dataclass(slots=True)
class VolumeAttachmentStatus:
    attached: bool = False
    attachment_metadata: dict[str, str] | None = None
    attach_error: Raw | None = None
    detach_error: Raw | None = None


@dataclass(slots=True)
class VolumeAttachment:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: VolumeAttachmentSpec = field(default_factory=VolumeAttachmentSpec)
    status: VolumeAttachmentStatus = field(default_factory=VolumeAttachmentStatus)
