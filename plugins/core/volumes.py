"""core/v1 PersistentVolume and PersistentVolumeClaim: internal types, validation, behaviour and
``kubectl get`` columns (``pkg/registry/core/persistentvolume{,claim}``,
``ValidatePersistentVolume{,Claim}``, ``printPersistentVolume{,Claim}``).

A claim asks for storage; a volume offers it. The binder (``plugins/storage``) binds one to the
other and writes both statuses (``/status``); a StatefulSet makes claims from its
``volumeClaimTemplates``. Both are created with the protection finalizers
(``kubernetes.io/pv-protection``, ``kubernetes.io/pvc-protection``) that keep them while in use.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from typing import Any

from kplane.api import (
    AGE, FIELD_IMMUTABLE, NAME, Column, FieldError, LabelSelector, ObjectMeta, RequestContext, Strategy, clock,
    dig, forbidden, invalid, is_dns1123_subdomain, not_supported, quantity, required, validate_label_selector,
)
from kplane.plugins.core.types import ObjectReference

Raw = dict[str, Any]

ACCESS_MODES = ["ReadOnlyMany", "ReadWriteMany", "ReadWriteOnce", "ReadWriteOncePod"]
SHORT_MODES = {"ReadWriteOnce": "RWO", "ReadOnlyMany": "ROX", "ReadWriteMany": "RWX", "ReadWriteOncePod": "RWOP"}
RECLAIM_POLICIES = ["Delete", "Recycle", "Retain"]
VOLUME_MODES = ["Block", "Filesystem"]
PV_PROTECTION, PVC_PROTECTION = "kubernetes.io/pv-protection", "kubernetes.io/pvc-protection"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
#: The volume sources of a PersistentVolume, by Python and wire name: exactly one is set.
SOURCES = {"gce_persistent_disk": "gcePersistentDisk", "aws_elastic_block_store": "awsElasticBlockStore",
           "host_path": "hostPath", "glusterfs": "glusterfs", "nfs": "nfs", "rbd": "rbd", "iscsi": "iscsi",
           "cinder": "cinder", "cephfs": "cephfs", "fc": "fc", "flocker": "flocker", "flex_volume": "flexVolume",
           "azure_file": "azureFile", "vsphere_volume": "vsphereVolume", "quobyte": "quobyte", "azure_disk": "azureDisk",
           "photon_persistent_disk": "photonPersistentDisk", "portworx_volume": "portworxVolume", "scale_io": "scaleIO",
           "local": "local", "storageos": "storageos", "csi": "csi"}
CLAIM_SPEC_IMMUTABLE = "spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims"


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


@dataclass(slots=True)
class PersistentVolumeSpec:
    """The volume source is the one of its :data:`SOURCES` fields that is set, kept as its wire dict."""

    capacity: dict[str, Any] | None = None
    gce_persistent_disk: Raw | None = None
    aws_elastic_block_store: Raw | None = None
    host_path: Raw | None = None
    glusterfs: Raw | None = None
    nfs: Raw | None = None
    rbd: Raw | None = None
    iscsi: Raw | None = None
    cinder: Raw | None = None
    cephfs: Raw | None = None
    fc: Raw | None = None
    flocker: Raw | None = None
    flex_volume: Raw | None = None
    azure_file: Raw | None = None
    vsphere_volume: Raw | None = None
    quobyte: Raw | None = None
    azure_disk: Raw | None = None
    photon_persistent_disk: Raw | None = None
    portworx_volume: Raw | None = None
    scale_io: Raw | None = None
    local: Raw | None = None
    storageos: Raw | None = None
    csi: Raw | None = None
    access_modes: list[str] | None = None
    claim_ref: ObjectReference | None = None
    persistent_volume_reclaim_policy: str | None = None
    storage_class_name: str | None = None
    mount_options: list[str] | None = None
    volume_mode: str | None = None
    node_affinity: Raw | None = None
    volume_attributes_class_name: str | None = None


@dataclass(slots=True)
class PersistentVolumeStatus:
    phase: str | None = None
    message: str | None = None
    reason: str | None = None
    last_phase_transition_time: str | None = None


@dataclass(slots=True)
class PersistentVolume:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PersistentVolumeSpec = field(default_factory=PersistentVolumeSpec)
    status: PersistentVolumeStatus = field(default_factory=PersistentVolumeStatus)


# -- validation --------------------------------------------------------------------------------
def _access_modes(modes: list[str] | None, path: str, missing: str) -> list[FieldError]:
    if not modes:
        return [required(path, missing)]
    errs = [not_supported(path, mode, ACCESS_MODES) for mode in modes if mode not in ACCESS_MODES]
    if "ReadWriteOncePod" in modes and len(modes) > 1:
        errs.append(forbidden(path, "may not use ReadWriteOncePod with other access modes"))
    return errs


def _storage_class(name: str | None, path: str) -> list[FieldError]:
    return [invalid(path, name, msg) for msg in is_dns1123_subdomain(name)] if name else []


def _volume_mode(mode: str | None, path: str) -> list[FieldError]:
    return [not_supported(path, mode, VOLUME_MODES)] if mode is not None and mode not in VOLUME_MODES else []


def _positive(value: Any, path: str) -> list[FieldError]:
    try:
        positive = quantity.parse(value).value > 0
    except ValueError as err:
        return [invalid(path, value, str(err))]
    return [] if positive else [invalid(path, value, "must be greater than zero")]


def validate_claim_spec(spec: PersistentVolumeClaimSpec, path: str = "spec") -> list[FieldError]:
    """``ValidatePersistentVolumeClaimSpec``: also what a StatefulSet's claim templates must be."""
    errs = _access_modes(spec.access_modes, f"{path}.accessModes", "at least 1 access mode is required")
    errs += validate_label_selector(spec.selector, f"{path}.selector")
    requests = spec.resources.requests or {}
    if "storage" not in requests:
        errs.append(required(f"{path}.resources[storage]"))
    else:
        errs += _positive(requests["storage"], f"{path}.resources[storage]")
    errs += _storage_class(spec.storage_class_name, f"{path}.storageClassName")
    errs += _volume_mode(spec.volume_mode, f"{path}.volumeMode")
    source = spec.data_source
    if source is not None:
        if not source.get("name"):
            errs.append(required(f"{path}.dataSource.name"))
        if not source.get("kind"):
            errs.append(required(f"{path}.dataSource.kind"))
        elif not source.get("apiGroup") and source["kind"] != "PersistentVolumeClaim":
            errs.append(invalid(f"{path}.dataSource.kind", source["kind"],
                                "must be 'PersistentVolumeClaim' when referencing the default apiGroup"))
    return errs


def validate_claim_update(claim: PersistentVolumeClaim, old: PersistentVolumeClaim) -> list[FieldError]:
    """The spec cannot change but for its requests and attributes class, a volume name and a
    storage class the binder fills in once; a request may shrink only to above the capacity
    (``RecoverVolumeExpansionFailure``)."""
    errs = validate_claim_spec(claim.spec)
    new, was = claim.spec, old.spec
    comparable = PersistentVolumeClaimSpec(**{f: getattr(new, f) for f in PersistentVolumeClaimSpec.__slots__})
    comparable.resources = was.resources
    comparable.volume_attributes_class_name = was.volume_attributes_class_name
    if not was.volume_name:
        comparable.volume_name = was.volume_name
    if was.storage_class_name is None:
        comparable.storage_class_name = None
    if comparable != was:
        errs.append(forbidden("spec", CLAIM_SPEC_IMMUTABLE))
    capacity = (old.status.capacity or {}).get("storage")
    request, before = (new.resources.requests or {}).get("storage"), (was.resources.requests or {}).get("storage")
    try:
        shrunk = request is not None and before is not None and quantity.parse(request) < quantity.parse(before)
        if shrunk and capacity is not None and quantity.parse(request) <= quantity.parse(capacity):
            # back down to what the volume has, to recover from a failed expansion, but never below
            errs.append(forbidden("spec.resources.requests.storage", "field can not be less than status.capacity"))
    except ValueError:
        pass  # reported by the spec's validation
    return errs


def volume_sources(spec: PersistentVolumeSpec) -> dict[str, Raw]:
    """The volume's sources that are set, by wire name (one, when valid)."""
    return {wire: value for name, wire in SOURCES.items() if (value := getattr(spec, name)) is not None}


def _validate_source(spec: PersistentVolumeSpec) -> list[FieldError]:
    sources = volume_sources(spec)
    if not sources:
        return [required("spec", "must specify a volume type")]
    errs = [forbidden(f"spec.{name}", "may not specify more than 1 volume type") for name in list(sources)[1:]]
    for name, source in sources.items():
        at = f"spec.{name}"
        if name in ("hostPath", "local"):
            path = source.get("path") or ""
            if not path:
                errs.append(required(f"{at}.path"))
            elif ".." in path.split("/"):
                errs.append(invalid(f"{at}.path", path, "must not contain '..'"))
        if name == "local" and spec.node_affinity is None:
            errs.append(required("spec.nodeAffinity", "Local volumes require node affinity"))
        if name == "nfs":
            if not source.get("server"):
                errs.append(required(f"{at}.server"))
            if not source.get("path"):
                errs.append(required(f"{at}.path"))
            elif not posixpath.isabs(source["path"]):
                errs.append(invalid(f"{at}.path", source["path"], "must be an absolute path"))
        if name == "csi":
            if not source.get("driver"):
                errs.append(required(f"{at}.driver"))
            if not source.get("volumeHandle"):
                errs.append(required(f"{at}.volumeHandle"))
    return errs


def validate_volume(volume: PersistentVolume) -> list[FieldError]:
    spec = volume.spec
    errs = _access_modes(spec.access_modes, "spec.accessModes", "must specify at least 1 access mode")
    capacity = spec.capacity or {}
    if not capacity:
        errs.append(required("spec.capacity"))
    elif "storage" not in capacity or len(capacity) > 1:
        errs.append(not_supported("spec.capacity", capacity, ["storage"]))
    else:
        errs += _positive(capacity["storage"], "spec.capacity[storage]")
    errs += _storage_class(spec.storage_class_name, "spec.storageClassName")
    policy = spec.persistent_volume_reclaim_policy
    if policy and policy not in RECLAIM_POLICIES:
        errs.append(not_supported("spec.persistentVolumeReclaimPolicy", policy, RECLAIM_POLICIES))
    return errs + _volume_mode(spec.volume_mode, "spec.volumeMode") + _validate_source(spec)


def validate_volume_update(volume: PersistentVolume, old: PersistentVolume) -> list[FieldError]:
    errs = validate_volume(volume)
    if volume_sources(volume.spec) != volume_sources(old.spec):
        errs.append(forbidden("spec.persistentvolumesource", "spec.persistentvolumesource is immutable after creation"))
    if volume.spec.volume_mode != old.spec.volume_mode:
        errs.append(invalid("spec.volumeMode", volume.spec.volume_mode, FIELD_IMMUTABLE))
    if old.spec.node_affinity is not None and volume.spec.node_affinity != old.spec.node_affinity:
        errs.append(invalid("spec.nodeAffinity", volume.spec.node_affinity, FIELD_IMMUTABLE))
    return errs


# -- kubectl get ---------------------------------------------------------------------------------
def access_modes_text(modes: list[str] | None) -> str:
    """``GetAccessModesAsString``: RWO, ROX, RWX, RWOP in that order."""
    return ",".join(short for mode, short in SHORT_MODES.items() if mode in (modes or ()))


def storage_class_of(obj: dict[str, Any]) -> str:
    """``spec.storageClassName``, or the beta annotation older objects carry."""
    return dig(obj, "spec.storageClassName") or (obj["metadata"].get("annotations") or {}).get(BETA_CLASS, "")


def _phase(obj: dict[str, Any]) -> str:
    return "Terminating" if obj["metadata"].get("deletionTimestamp") else dig(obj, "status.phase", "")


def _claim_of(volume: dict[str, Any]) -> str:
    ref = dig(volume, "spec.claimRef")
    return f"{ref.get('namespace', '')}/{ref.get('name', '')}" if ref else ""


def _claim_capacity(claim: dict[str, Any]) -> str:
    return str(dig(claim, "status.capacity.storage", "")) if dig(claim, "spec.volumeName") else ""


def _claim_modes(claim: dict[str, Any]) -> str:
    return access_modes_text(dig(claim, "status.accessModes")) if dig(claim, "spec.volumeName") else ""


VOLUME_MODE = Column("VolumeMode", "string", lambda o: dig(o, "spec.volumeMode") or "<unset>", priority=1,
                     description="volumeMode defines if a volume is intended to be used with a formatted filesystem or to remain in raw block state.")
VOLUME_COLUMNS = (
    NAME,
    Column("Capacity", "string", lambda o: str(dig(o, "spec.capacity.storage", "")),
           description="capacity is the description of the persistent volume's resources and capacity."),
    Column("Access Modes", "string", lambda o: access_modes_text(dig(o, "spec.accessModes")),
           description="accessModes contains all ways the volume can be mounted."),
    Column("Reclaim Policy", "string", lambda o: dig(o, "spec.persistentVolumeReclaimPolicy", ""),
           description="persistentVolumeReclaimPolicy defines what happens to a persistent volume when released from its claim."),
    Column("Status", "string", _phase, description="phase indicates if a volume is available, bound to a claim, or released by a claim."),
    Column("Claim", "string", _claim_of, description="claimRef is part of a bi-directional binding between PersistentVolume and PersistentVolumeClaim."),
    Column("StorageClass", "string", storage_class_of, description="StorageClass of the pv"),
    Column("VolumeAttributesClass", "string", lambda o: dig(o, "spec.volumeAttributesClassName") or "<unset>",
           description="VolumeAttributesClass of the pv"),
    Column("Reason", "string", lambda o: dig(o, "status.reason", ""),
           description="reason is a brief CamelCase string that describes any failure and is meant for machine parsing and tidy display in the CLI."),
    AGE,
    VOLUME_MODE,
)
CLAIM_COLUMNS = (
    NAME,
    Column("Status", "string", _phase, description="phase represents the current phase of PersistentVolumeClaim."),
    Column("Volume", "string", lambda o: dig(o, "spec.volumeName", ""),
           description="volumeName is the binding reference to the PersistentVolume backing this claim."),
    Column("Capacity", "string", _claim_capacity, description="capacity represents the actual resources of the underlying volume."),
    Column("Access Modes", "string", _claim_modes,
           description="accessModes contains the actual access modes the volume backing the PVC has."),
    Column("StorageClass", "string", storage_class_of, description="StorageClass of the pvc"),
    Column("VolumeAttributesClass", "string", lambda o: dig(o, "spec.volumeAttributesClassName") or "<unset>",
           description="VolumeAttributesClass of the pvc"),
    AGE,
    VOLUME_MODE,
)


# -- behaviour ---------------------------------------------------------------------------------
def _protect(meta: ObjectMeta, finalizer: str) -> None:
    """The storage-object-in-use protection admission: the finalizer, once."""
    if finalizer not in (meta.finalizers or []):
        meta.finalizers = [*(meta.finalizers or []), finalizer]


class PersistentVolumeClaimStrategy(Strategy):
    """Create starts Pending and protected; an update keeps the binder's status."""

    columns = CLAIM_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: PersistentVolumeClaim) -> None:
        obj.status = PersistentVolumeClaimStatus(phase="Pending")
        _protect(obj.metadata, PVC_PROTECTION)

    def prepare_for_update(self, ctx: RequestContext, obj: PersistentVolumeClaim, old: PersistentVolumeClaim) -> None:
        obj.status = old.status

    def validate(self, ctx: RequestContext, obj: PersistentVolumeClaim) -> list[FieldError]:
        return validate_claim_spec(obj.spec)

    def validate_update(self, ctx: RequestContext, obj: PersistentVolumeClaim, old: PersistentVolumeClaim) -> list[FieldError]:
        return validate_claim_update(obj, old)


class PersistentVolumeClaimStatusStrategy(Strategy):
    """``/status``: the spec stays as stored."""

    columns = CLAIM_COLUMNS
    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: PersistentVolumeClaim, old: PersistentVolumeClaim) -> None:
        obj.spec = old.spec


class PersistentVolumeStrategy(Strategy):
    """Cluster-scoped; created Pending (when its phase last changed recorded) and protected."""

    columns = VOLUME_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: PersistentVolume) -> None:
        obj.status = PersistentVolumeStatus(phase="Pending", last_phase_transition_time=clock.now())
        _protect(obj.metadata, PV_PROTECTION)

    def prepare_for_update(self, ctx: RequestContext, obj: PersistentVolume, old: PersistentVolume) -> None:
        obj.status = old.status

    def validate(self, ctx: RequestContext, obj: PersistentVolume) -> list[FieldError]:
        return validate_volume(obj)

    def validate_update(self, ctx: RequestContext, obj: PersistentVolume, old: PersistentVolume) -> list[FieldError]:
        return validate_volume_update(obj, old)


class PersistentVolumeStatusStrategy(Strategy):
    """``/status``: the spec stays; a new phase records when it changed."""

    columns = VOLUME_COLUMNS
    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: PersistentVolume, old: PersistentVolume) -> None:
        obj.spec = old.spec
        if obj.status.phase != old.status.phase:
            obj.status.last_phase_transition_time = clock.now()
