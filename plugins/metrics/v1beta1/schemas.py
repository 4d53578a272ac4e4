"""Wire schemas of metrics.k8s.io/v1beta1, as metrics-server serves them."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields

REQUIRED = {"omitempty": False}


def _usage() -> fields.Dict:
    return fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={**REQUIRED, "description": (
        "Resources used, by name: cpu in cores (nanocores, such as 2478325n), memory in bytes (such as 41628Ki)."
    )})


class NodeMetricsSchema(Schema):
    """The resource usage of a node: the sum of what its running pods use."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "The node's name and labels."})
    timestamp = fields.Time(metadata={**REQUIRED, "description": "The end of the window the usage was measured over."})
    window = fields.Str(metadata={**REQUIRED, "description": "the length of the window, a Go duration such as 1s."})
    usage = _usage()


class ContainerMetricsSchema(Schema):
    """The resource usage of one container."""

    name = fields.Str(metadata={**REQUIRED, "description": "The container's name in its pod."})
    usage = _usage()


class PodMetricsSchema(Schema):
    """The resource usage of a running pod, container by container."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "The pod's name, namespace and labels."})
    timestamp = fields.Time(metadata={**REQUIRED, "description": "The end of the window the usage was measured over."})
    window = fields.Str(metadata={**REQUIRED, "description": "the length of the window, a Go duration such as 1s."})
    containers = fields.List(fields.Nested(ContainerMetricsSchema), metadata={**REQUIRED, "description": (
        "The usage of each of the pod's containers."
    )})
