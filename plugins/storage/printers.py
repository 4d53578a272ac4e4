"""Table columns of the storage.k8s.io kinds, as ``kubectl get`` shows them (``printStorageClass`` ...)."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, dig

DEFAULT_CLASS = "storageclass.kubernetes.io/is-default-class"
BETA_DEFAULT_CLASS = "storageclass.beta.kubernetes.io/is-default-class"


def is_default(storage_class: dict[str, Any]) -> bool:
    """``IsDefaultAnnotation``: either annotation says "true"."""
    annotations = storage_class["metadata"].get("annotations") or {}
    return "true" in (annotations.get(DEFAULT_CLASS), annotations.get(BETA_DEFAULT_CLASS))


def _class_name(storage_class: dict[str, Any]) -> str:
    name = storage_class["metadata"].get("name", "")
    return f"{name} (default)" if is_default(storage_class) else name


def _flag(value: Any) -> str:
    return "true" if value else "false"


STORAGE_CLASS_COLUMNS = (
    Column("Name", "string", _class_name, format="name", description=NAME.description),
    Column("Provisioner", "string", lambda o: o.get("provisioner", ""),
           description="provisioner indicates the type of the provisioner."),
    Column("ReclaimPolicy", "string", lambda o: o.get("reclaimPolicy") or "Delete",
           description="reclaimPolicy controls the reclaimPolicy for dynamically provisioned PersistentVolumes of this storage class."),
    Column("VolumeBindingMode", "string", lambda o: o.get("volumeBindingMode") or "Immediate",
           description="volumeBindingMode indicates how PersistentVolumeClaims should be provisioned and bound."),
    Column("AllowVolumeExpansion", "string", lambda o: _flag(o.get("allowVolumeExpansion")),
           description="allowVolumeExpansion shows whether the storage class allow volume expand."),
    AGE,
)
CSI_DRIVER_COLUMNS = (
    NAME,
    Column("AttachRequired", "boolean", lambda o: bool(dig(o, "spec.attachRequired")), description="attachRequired indicates this CSI volume driver requires an attach operation."),
    Column("PodInfoOnMount", "boolean", lambda o: bool(dig(o, "spec.podInfoOnMount")), description="podInfoOnMount indicates this CSI volume driver requires additional pod information during mount operations."),
    Column("StorageCapacity", "boolean", lambda o: bool(dig(o, "spec.storageCapacity")), description="storageCapacity indicates that the CSI volume driver wants pod scheduling to consider the storage capacity."),
    Column("TokenRequests", "string", lambda o: ",".join(t.get("audience", "") for t in dig(o, "spec.tokenRequests", []) or []) or "<unset>",
           description="tokenRequests indicates the CSI driver needs pods' service account tokens it is mounting volume for to do necessary authentication."),
    Column("RequiresRepublish", "boolean", lambda o: bool(dig(o, "spec.requiresRepublish")), description="requiresRepublish indicates the CSI driver wants NodePublishVolume being periodically called."),
    Column("Modes", "string", lambda o: ",".join(dig(o, "spec.volumeLifecycleModes", []) or []) or "<none>",
           description="volumeLifecycleModes defines what kind of volumes this CSI volume driver supports."),
    AGE,
)
CSI_NODE_COLUMNS = (
    NAME,
    Column("Drivers", "integer", lambda o: len(dig(o, "spec.drivers", []) or []), description="drivers is a list of information of all CSI Drivers existing on a node."),
    AGE,
)
CSI_STORAGE_CAPACITY_COLUMNS = (
    NAME,
    Column("StorageClassName", "string", lambda o: o.get("storageClassName", ""), description="storageClassName represents the name of the StorageClass that the reported capacity applies to."),
    Column("Capacity", "string", lambda o: str(o["capacity"]) if o.get("capacity") is not None else "<unset>",
           description="capacity is the value reported by the CSI driver in its GetCapacityResponse for a GetCapacityRequest with topology and parameters that match the previous fields."),
    AGE,
)
VOLUME_ATTACHMENT_COLUMNS = (
    NAME,
    Column("Attacher", "string", lambda o: dig(o, "spec.attacher", ""), format="name", description="attacher indicates the name of the volume driver that MUST handle this request."),
    Column("PV", "string", lambda o: dig(o, "spec.source.persistentVolumeName", ""), description="persistentVolumeName represents the name of the persistent volume to attach."),
    Column("Node", "string", lambda o: dig(o, "spec.nodeName", ""), description="nodeName represents the node that the volume should be attached to."),
    Column("Attached", "boolean", lambda o: bool(dig(o, "status.attached")), description="attached indicates the volume is successfully attached."),
    AGE,
)
