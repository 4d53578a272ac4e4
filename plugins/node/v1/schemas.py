"""Wire schema of node.k8s.io/v1 RuntimeClass (``k8s.io/api/node/v1``)."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields


class OverheadSchema(Schema):
    """What running a pod with this runtime costs beyond its containers."""

    pod_fixed = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "The fixed resources every pod of this class uses, added to its requests for scheduling and quota."
    )})


class SchedulingSchema(Schema):
    """Where pods of this class may run."""

    node_selector = fields.StrMap(metadata={"map_type": "atomic", "description": (
        "Labels the node must have; merged into each pod's nodeSelector (a conflict refuses the pod)."
    )})
    tolerations = fields.List(fields.Dict(), metadata={"list_type": "atomic", "description": (
        "Tolerations added to each pod of this class."
    )})


class RuntimeClassSchema(Schema):
    """RuntimeClass names a container runtime configuration (a CRI handler) that pods choose with
    runtimeClassName, with the overhead it adds and the nodes that offer it.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, labels, annotations, and what the server records about the object."
    )})
    handler = fields.Str(metadata={"omitempty": False, "description": (
        "The CRI handler that runs the pods: a DNS label. Cannot change."
    )})
    overhead = fields.Nested(OverheadSchema, metadata={"pointer": True, "description": (
        "The resources a pod of this class uses beyond its containers."
    )})
    scheduling = fields.Nested(SchedulingSchema, metadata={"pointer": True, "description": (
        "The nodes that support this class; unset: all nodes."
    )})
