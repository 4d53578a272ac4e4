"""core/v1 PersistentVolume and PersistentVolumeClaim: the wire schemas and their defaulting
(``k8s.io/api/core/v1``, ``SetDefaults_PersistentVolume{,Claim}``)."""

from __future__ import annotations

from typing import Any

from kplane.api import LabelSelectorSchema, ObjectMetaSchema, Schema, fields
from kplane.plugins.core.v1.schemas import ObjectReferenceSchema

_TYPED_REFERENCE = "A kind (with its apiGroup, empty for core) and name"


class VolumeResourceRequirementsSchema(Schema):
    """The storage a claim asks for."""

    limits = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "The most storage the volume may have."
    )})
    requests = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "The least storage the volume must have, e.g. storage: 1Gi."
    )})


class PersistentVolumeClaimSpecSchema(Schema):
    """What the claim asks for."""

    access_modes = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod: how the volume may be mounted."
    )})
    selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True, "description": (
        "Labels a PersistentVolume must have to be bound to this claim."
    )})
    resources = fields.Nested(VolumeResourceRequirementsSchema, metadata={"description": (
        "The storage the volume must offer."
    )})
    volume_name = fields.Str(metadata={"description": "The PersistentVolume bound to this claim."})
    storage_class_name = fields.Str(metadata={"description": (
        "The StorageClass to provision the volume from; empty for none, unset for the default class."
    )})
    volume_mode = fields.Str(metadata={"description": "Filesystem or Block. Defaults to Filesystem."})
    data_source = fields.Dict(metadata={"description": (
        f"{_TYPED_REFERENCE} of a VolumeSnapshot or PersistentVolumeClaim to fill the new volume from."
    )})
    data_source_ref = fields.Dict(metadata={"description": (
        f"{_TYPED_REFERENCE} (and namespace) of any object to fill the new volume from."
    )})
    volume_attributes_class_name = fields.Str(metadata={"description": (
        "The VolumeAttributesClass the volume should have."
    )})


class PersistentVolumeClaimStatusSchema(Schema):
    """The claim's observed state, written by the volume binder."""

    phase = fields.Str(metadata={"description": "Pending, Bound or Lost."})
    access_modes = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "The access modes the bound volume has."
    )})
    capacity = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "The storage the bound volume has."
    )})
    conditions = fields.List(fields.Dict(), metadata=fields.merge_by("type", description=(
        "The latest observations of the claim's state, such as Resizing."
    )))
    allocated_resources = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "The storage set aside for the claim while it is resized."
    )})
    allocated_resource_statuses = fields.StrMap(metadata={"description": (
        "The state of a resize, by resource."
    )})
    current_volume_attributes_class_name = fields.Str(metadata={"description": (
        "The VolumeAttributesClass the volume has now."
    )})
    modify_volume_status = fields.Dict(metadata={"description": (
        "The state of a change to another VolumeAttributesClass."
    )})


class PersistentVolumeClaimSchema(Schema):
    """A PersistentVolumeClaim is a user's request for storage: a PersistentVolume is bound to it, made by a
    provisioner from its StorageClass when none fits, and Pods mount the claim by name.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(PersistentVolumeClaimSpecSchema, metadata={"description": "What storage the claim asks for."})
    status = fields.Nested(PersistentVolumeClaimStatusSchema, metadata={"description": (
        "The claim's observed state. Written by the binder; clients read it."
    )})


def _source(what: str, data_key: str | None = None) -> fields.Dict:
    """One kind of volume source, kept as written."""
    return fields.Dict(data_key=data_key, metadata={"description": f"{what}; a volume has exactly one source."})


class PersistentVolumeSpecSchema(Schema):
    """What the volume offers, and where it is."""

    capacity = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "The volume's capacity: storage, e.g. 10Gi."
    )})
    gce_persistent_disk = _source("A GCE persistent disk (deprecated)")
    aws_elastic_block_store = _source("An AWS EBS volume (deprecated)")
    host_path = _source("A directory on the node (for single-node testing)")
    glusterfs = _source("A Glusterfs volume (deprecated)")
    nfs = _source("An NFS share")
    rbd = _source("A Rados block device (deprecated)")
    iscsi = _source("An iSCSI disk")
    cinder = _source("An OpenStack Cinder volume (deprecated)")
    cephfs = _source("A CephFS volume (deprecated)")
    fc = _source("A Fibre Channel volume")
    flocker = _source("A Flocker volume (deprecated)")
    flex_volume = _source("A volume of a FlexVolume plugin (deprecated)")
    azure_file = _source("An Azure File share (deprecated)")
    vsphere_volume = _source("A vSphere volume (deprecated)")
    quobyte = _source("A Quobyte volume (deprecated)")
    azure_disk = _source("An Azure data disk (deprecated)")
    photon_persistent_disk = _source("A Photon Controller disk (deprecated)")
    portworx_volume = _source("A Portworx volume (deprecated)")
    scale_io = _source("A ScaleIO volume (deprecated)", data_key="scaleIO")
    local = _source("A local disk, partition or directory of one node, which nodeAffinity names")
    storageos = _source("A StorageOS volume (deprecated)")
    csi = _source("A volume of a CSI driver")
    access_modes = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "How the volume can be mounted: ReadWriteOnce, ReadOnlyMany, ReadWriteMany or ReadWriteOncePod."
    )})
    claim_ref = fields.Nested(ObjectReferenceSchema, metadata={"pointer": True, "map_type": "granular", "description": (
        "The claim bound to this volume (or reserved for it)."
    )})
    persistent_volume_reclaim_policy = fields.Str(metadata={"description": (
        "What happens to the volume when its claim is deleted: Retain (the default for volumes made by hand), "
        "Delete or Recycle."
    )})
    storage_class_name = fields.Str(metadata={"description": "The StorageClass the volume belongs to; empty for none."})
    mount_options = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "Mount options, as in mount -o; not validated."
    )})
    volume_mode = fields.Str(metadata={"description": "Filesystem or Block. Defaults to Filesystem."})
    node_affinity = fields.Dict(metadata={"description": "The nodes this volume can be reached from."})
    volume_attributes_class_name = fields.Str(metadata={"description": "The VolumeAttributesClass of the volume."})


class PersistentVolumeStatusSchema(Schema):
    """The volume's observed state, written by the volume binder."""

    phase = fields.Str(metadata={"description": "Pending, Available, Bound, Released or Failed."})
    message = fields.Str(metadata={"description": "Why the volume is in this state, for people."})
    reason = fields.Str(metadata={"description": "Why the volume is in this state, CamelCase, for programs."})
    last_phase_transition_time = fields.Time(metadata={"description": "When the phase last changed."})


class PersistentVolumeSchema(Schema):
    """PersistentVolume (PV) is a storage resource provisioned by an administrator, or by a provisioner for a
    claim's StorageClass. It is analogous to a node: claims are bound to volumes as pods are to nodes.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, labels, annotations, and what the server records about the object."
    )})
    spec = fields.Nested(PersistentVolumeSpecSchema, metadata={"description": "What the volume offers, and where it is."})
    status = fields.Nested(PersistentVolumeStatusSchema, metadata={"description": (
        "The volume's observed state. Written by the binder; clients read it."
    )})


def default_claim_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_PersistentVolumeClaimSpec``: a Filesystem volume (also for StatefulSets' templates)."""
    if not spec.get("volume_mode"):
        spec["volume_mode"] = "Filesystem"


def default_claim(claim: dict[str, Any]) -> None:
    spec = claim.get("spec")
    if spec is None:
        spec = claim["spec"] = {}
    default_claim_spec(spec)
    status = claim.get("status") or {}
    if not status.get("phase"):
        claim["status"] = {**status, "phase": "Pending"}


def default_volume(volume: dict[str, Any]) -> None:
    """``SetDefaults_PersistentVolume``: Retain, Filesystem, Pending."""
    spec = volume.get("spec")
    if spec is None:
        spec = volume["spec"] = {}
    if not spec.get("persistent_volume_reclaim_policy"):
        spec["persistent_volume_reclaim_policy"] = "Retain"
    if not spec.get("volume_mode"):
        spec["volume_mode"] = "Filesystem"
    status = volume.get("status") or {}
    if not status.get("phase"):
        volume["status"] = {**status, "phase": "Pending"}
