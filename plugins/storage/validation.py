"""Validation of storage.k8s.io kinds (``pkg/apis/storage/validation``), on internal objects."""

from __future__ import annotations

from kplane.api import (
    FIELD_IMMUTABLE, FieldError, forbidden, invalid, is_dns1123_subdomain, is_qualified_name, not_supported, required,
    too_long, too_many, validate_label_selector,
)
from kplane.plugins.storage.types import CSIDriver, CSINode, CSIStorageCapacity, StorageClass, VolumeAttachment

RECLAIM_POLICIES = ["Delete", "Retain"]
BINDING_MODES = ["Immediate", "WaitForFirstConsumer"]
LIFECYCLE_MODES = ["Ephemeral", "Persistent"]
FS_GROUP_POLICIES = ["File", "None", "ReadWriteOnceWithFSType"]
MAX_PARAMETERS = 512
MAX_PARAMETERS_SIZE = 256 * 1024
MAX_DRIVER_NAME = 63


def _qualified(value: str, path: str) -> list[FieldError]:
    """A provisioner's, attacher's or CSI driver's name: a qualified name in lower case, 63 characters at most."""
    if len(value) > MAX_DRIVER_NAME:
        return [too_long(path, value, MAX_DRIVER_NAME)]
    return [invalid(path, value, msg) for msg in is_qualified_name(value.lower())]


def validate_storage_class(sc: StorageClass) -> list[FieldError]:
    errs = [required("provisioner")] if not sc.provisioner else _qualified(sc.provisioner, "provisioner")
    parameters = sc.parameters or {}
    if len(parameters) > MAX_PARAMETERS:
        errs.append(too_many("parameters", len(parameters), MAX_PARAMETERS))
    if any(not key for key in parameters):
        errs.append(invalid("parameters", "", "field can not be empty."))
    if sum(len(k) + len(v) for k, v in parameters.items()) > MAX_PARAMETERS_SIZE:
        errs.append(too_long("parameters", "", MAX_PARAMETERS_SIZE))
    if sc.reclaim_policy not in RECLAIM_POLICIES:
        errs.append(not_supported("reclaimPolicy", sc.reclaim_policy, RECLAIM_POLICIES))
    if sc.volume_binding_mode not in BINDING_MODES:
        errs.append(not_supported("volumeBindingMode", sc.volume_binding_mode, BINDING_MODES))
    return errs


def validate_storage_class_update(sc: StorageClass, old: StorageClass) -> list[FieldError]:
    errs = validate_storage_class(sc)
    for name, wire in (("parameters", "parameters"), ("provisioner", "provisioner"), ("reclaim_policy", "reclaimPolicy")):
        if getattr(sc, name) != getattr(old, name):
            errs.append(forbidden(wire, f"updates to {wire} are forbidden."))
    if sc.volume_binding_mode != old.volume_binding_mode:
        errs.append(invalid("volumeBindingMode", sc.volume_binding_mode, FIELD_IMMUTABLE))
    return errs


def validate_csi_driver(driver: CSIDriver) -> list[FieldError]:
    spec = driver.spec
    errs = _qualified(driver.metadata.name or "", "metadata.name")
    if spec.attach_required is None:
        errs.append(required("spec.attachRequired"))
    if spec.pod_info_on_mount is None:
        errs.append(required("spec.podInfoOnMount"))
    errs += [not_supported("spec.volumeLifecycleModes", mode, LIFECYCLE_MODES)
             for mode in spec.volume_lifecycle_modes or () if mode not in LIFECYCLE_MODES]
    if spec.fs_group_policy is not None and spec.fs_group_policy not in FS_GROUP_POLICIES:
        errs.append(not_supported("spec.fsGroupPolicy", spec.fs_group_policy, FS_GROUP_POLICIES))
    return errs


def validate_csi_driver_update(driver: CSIDriver, old: CSIDriver) -> list[FieldError]:
    errs = validate_csi_driver(driver)
    for name, wire in (("attach_required", "attachRequired"), ("volume_lifecycle_modes", "volumeLifecycleModes"),
                       ("fs_group_policy", "fsGroupPolicy")):
        if getattr(driver.spec, name) != getattr(old.spec, name):
            errs.append(invalid(f"spec.{wire}", getattr(driver.spec, name), FIELD_IMMUTABLE))
    return errs


def validate_csi_node(node: CSINode) -> list[FieldError]:
    errs: list[FieldError] = []
    if node.spec.drivers is None:
        errs.append(required("spec.drivers"))
    seen: set[str] = set()
    for i, driver in enumerate(node.spec.drivers or ()):
        at = f"spec.drivers[{i}]"
        errs += _qualified(driver.name, f"{at}.name") if driver.name else [required(f"{at}.name")]
        if driver.name in seen:
            errs.append(invalid(f"{at}.name", driver.name, "duplicate"))
        seen.add(driver.name)
        if not driver.node_id:
            errs.append(required(f"{at}.nodeID"))
    return errs


def validate_storage_capacity(capacity: CSIStorageCapacity) -> list[FieldError]:
    errs = validate_label_selector(capacity.node_topology, "nodeTopology")
    if not capacity.storage_class_name:
        errs.append(required("storageClassName"))
    else:
        errs += [invalid("storageClassName", capacity.storage_class_name, msg) for msg in is_dns1123_subdomain(capacity.storage_class_name)]
    return errs


def validate_volume_attachment(attachment: VolumeAttachment) -> list[FieldError]:
    spec = attachment.spec
    errs = [required("spec.attacher")] if not spec.attacher else _qualified(spec.attacher, "spec.attacher")
    sources = [s for s in (spec.source.persistent_volume_name, spec.source.inline_volume_spec) if s is not None]
    if not sources:
        errs.append(required("spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
    elif len(sources) > 1:
        errs.append(forbidden("spec.source", "must specify exactly one of inlineVolumeSpec and persistentVolumeName"))
    if not spec.node_name:
        errs.append(required("spec.nodeName"))
    else:
        errs += [invalid("spec.nodeName", spec.node_name, msg) for msg in is_dns1123_subdomain(spec.node_name)]
    return errs


def validate_volume_attachment_update(attachment: VolumeAttachment, old: VolumeAttachment) -> list[FieldError]:
    errs = validate_volume_attachment(attachment)
    if attachment.spec != old.spec:
        errs.append(invalid("spec", "", FIELD_IMMUTABLE))
    return errs
