"""Wire schemas of storage.k8s.io/v1 and their defaulting (``pkg/apis/storage/v1/defaults.go``)."""

from __future__ import annotations

from typing import Any

from kplane.api import LabelSelectorSchema, ObjectMetaSchema, Schema, fields

_META = "Standard object metadata: name, labels, annotations, and what the server records about the object."


class StorageClassSchema(Schema):
    """StorageClass describes the parameters for a class of storage for which PersistentVolumes can be dynamically
    provisioned. StorageClasses are non-namespaced; the name of the storage class according to etcd is in
    ObjectMeta.Name.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    provisioner = fields.Str(metadata={"omitempty": False, "description": (
        "The provisioner that makes volumes of this class, e.g. kplane.io/simulated. Cannot change."
    )})
    parameters = fields.StrMap(metadata={"description": "Settings for the provisioner. Cannot change."})
    reclaim_policy = fields.Str(metadata={"description": (
        "Delete or Retain: what becomes of volumes of this class when their claim goes. Defaults to Delete. Cannot change."
    )})
    mount_options = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "Mount options the volumes of this class get, as in mount -o."
    )})
    allow_volume_expansion = fields.Bool(metadata={"description": "Whether claims of this class may grow."})
    volume_binding_mode = fields.Str(metadata={"description": (
        "Immediate (the default) binds and provisions a claim at once; WaitForFirstConsumer waits for a Pod using it "
        "to be scheduled. Cannot change."
    )})
    allowed_topologies = fields.List(fields.Dict(), metadata={"list_type": "atomic", "description": (
        "Where volumes of this class may be provisioned."
    )})


class CSIDriverSpecSchema(Schema):
    """How Kubernetes talks to a CSI driver."""

    attach_required = fields.Bool(metadata={"description": "Whether volumes need an attach step. Defaults to true."})
    pod_info_on_mount = fields.Bool(metadata={"description": "Whether the driver gets the Pod's details when mounting."})
    volume_lifecycle_modes = fields.List(fields.Str(), metadata={"list_type": "set", "description": (
        "Persistent and/or Ephemeral: the volumes the driver supports. Defaults to Persistent."
    )})
    storage_capacity = fields.Bool(metadata={"description": "Whether the scheduler considers the driver's capacity."})
    fs_group_policy = fields.Str(metadata={"description": (
        "None, File or ReadWriteOnceWithFSType: whether volumes get the Pod's fsGroup. Defaults to ReadWriteOnceWithFSType."
    )})
    token_requests = fields.List(fields.Dict(), metadata={"list_type": "atomic", "description": (
        "ServiceAccount tokens the driver gets when mounting."
    )})
    requires_republish = fields.Bool(metadata={"description": "Whether volumes are mounted again periodically."})
    se_linux_mount = fields.Bool(metadata={"description": "Whether the driver supports the SELinux mount option."})


class CSIDriverSchema(Schema):
    """CSIDriver captures information about a Container Storage Interface (CSI) volume driver deployed on the
    cluster. Its name is the driver's name.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(CSIDriverSpecSchema, metadata={"description": "The driver's behaviour."})


class CSINodeDriverSchema(Schema):
    """One CSI driver on a node."""

    name = fields.Str(metadata={"omitempty": False, "description": "The driver's name."})
    node_id = fields.Str(data_key="nodeID", metadata={"omitempty": False, "description": "The node as the driver knows it."})
    topology_keys = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "The topology labels the driver reports."
    )})
    allocatable = fields.Dict(metadata={"description": "How many of the driver's volumes the node can take."})


class CSINodeSpecSchema(Schema):
    """The CSI drivers of a node."""

    drivers = fields.List(fields.Nested(CSINodeDriverSchema), metadata=fields.merge_by("name", omitempty=False, description=(
        "The CSI drivers running on the node."
    )))


class CSINodeSchema(Schema):
    """CSINode holds information about all CSI drivers installed on a node. Its name is the node's."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(CSINodeSpecSchema, metadata={"description": "The CSI drivers of the node."})


class CSIStorageCapacitySchema(Schema):
    """CSIStorageCapacity stores the result of one CSI GetCapacity call: the storage a class can provision on
    the nodes a topology selects.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    node_topology = fields.Nested(LabelSelectorSchema, metadata={"pointer": True, "description": (
        "The nodes that can reach the storage; none selects none."
    )})
    storage_class_name = fields.Str(metadata={"omitempty": False, "description": "The StorageClass this capacity is for."})
    capacity = fields.Quantity(metadata={"description": "The storage available."})
    maximum_volume_size = fields.Quantity(metadata={"description": "The largest volume that can be made."})


class VolumeAttachmentSourceSchema(Schema):
    """What to attach: a PersistentVolume by name, or an inline volume."""

    persistent_volume_name = fields.Str(metadata={"description": "The PersistentVolume to attach."})
    inline_volume_spec = fields.Dict(metadata={"description": "An inline volume's PersistentVolume spec, from a Pod."})


class VolumeAttachmentSpecSchema(Schema):
    """Which volume to attach to which node, by whom."""

    attacher = fields.Str(metadata={"omitempty": False, "description": "The driver that attaches the volume."})
    source = fields.Nested(VolumeAttachmentSourceSchema, metadata={"description": "The volume to attach."})
    node_name = fields.Str(metadata={"omitempty": False, "description": "The node to attach the volume to."})


class VolumeAttachmentStatusSchema(Schema):
    """The attachment's state, written by the attacher."""

    attached = fields.Bool(metadata={"omitempty": False, "description": "Whether the volume is attached."})
    attachment_metadata = fields.StrMap(metadata={"description": "What the attacher reports for mounting."})
    attach_error = fields.Dict(metadata={"description": "The last attach failure."})
    detach_error = fields.Dict(metadata={"description": "The last detach failure."})


class VolumeAttachmentSchema(Schema):
    """VolumeAttachment captures the intent to attach or detach the specified volume to/from the specified
    node. VolumeAttachment objects are non-namespaced.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(VolumeAttachmentSpecSchema, metadata={"description": "The attachment wanted. Cannot change."})
    status = fields.Nested(VolumeAttachmentStatusSchema, metadata={"description": "The attachment's state."})


def default_storage_class(storage_class: dict[str, Any]) -> None:
    if not storage_class.get("reclaim_policy"):
        storage_class["reclaim_policy"] = "Delete"
    if not storage_class.get("volume_binding_mode"):
        storage_class["volume_binding_mode"] = "Immediate"


def default_csi_driver(driver: dict[str, Any]) -> None:
    spec = driver.get("spec")
    if spec is None:
        spec = driver["spec"] = {}
    for name, value in (("attach_required", True), ("pod_info_on_mount", False), ("storage_capacity", False),
                        ("fs_group_policy", "ReadWriteOnceWithFSType"), ("requires_republish", False), ("se_linux_mount", False)):
        if spec.get(name) is None:
            spec[name] = value
    if not spec.get("volume_lifecycle_modes"):
        spec["volume_lifecycle_modes"] = ["Persistent"]
