"""core/v1 PersistentVolumeClaim: the wire schema (``k8s.io/api/core/v1``)."""

from __future__ import annotations

from kplane.api import LabelSelectorSchema, ObjectMetaSchema, Schema, fields

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
