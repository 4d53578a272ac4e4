"""Wire schemas of discovery.k8s.io/v1, and their defaulting (``SetDefaults_EndpointPort``)."""

from __future__ import annotations

from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields
from kplane.plugins.core.v1.schemas import ObjectReferenceSchema


class EndpointConditionsSchema(Schema):
    """The state of an endpoint."""

    ready = fields.Bool(metadata={"description": (
        "Whether the endpoint is ready for traffic: serving and not terminating (unless the Service publishes "
        "not-ready addresses). Unknown when unset: consumers treat it as ready."
    )})
    serving = fields.Bool(metadata={"description": (
        "Whether the endpoint is ready, whether or not it is terminating."
    )})
    terminating = fields.Bool(metadata={"description": "Whether the endpoint is shutting down."})


class ForZoneSchema(Schema):
    """A zone that should consume an endpoint."""

    name = fields.Str(metadata={"omitempty": False, "description": "The name of the zone."})


class ForNodeSchema(Schema):
    """A node that should consume an endpoint."""

    name = fields.Str(metadata={"omitempty": False, "description": "The name of the node."})


class EndpointHintsSchema(Schema):
    """Where an endpoint should be consumed from, for topology-aware routing."""

    for_zones = fields.List(fields.Nested(ForZoneSchema), metadata={"list_type": "atomic", "description": (
        "The zones that should consume this endpoint."
    )})
    for_nodes = fields.List(fields.Nested(ForNodeSchema), metadata={"list_type": "atomic", "description": (
        "The nodes that should consume this endpoint."
    )})


class EndpointSchema(Schema):
    """One endpoint of a Service: a Pod, usually."""

    addresses = fields.List(fields.Str(), metadata={"list_type": "set", "omitempty": False, "description": (
        "The endpoint's addresses, of the slice's addressType; consumers use the first."
    )})
    conditions = fields.Nested(EndpointConditionsSchema, metadata={"description": "The endpoint's state."})
    hostname = fields.Str(metadata={"description": "The endpoint's hostname, a DNS label."})
    target_ref = fields.Nested(ObjectReferenceSchema, metadata={"pointer": True, "description": (
        "The object behind this endpoint, such as its Pod."
    )})
    deprecated_topology = fields.StrMap(metadata={"description": (
        "Deprecated: topology labels of the endpoint; use nodeName and zone."
    )})
    node_name = fields.Str(metadata={"description": "The node hosting this endpoint."})
    zone = fields.Str(metadata={"description": "The zone this endpoint is in."})
    hints = fields.Nested(EndpointHintsSchema, metadata={"pointer": True, "description": (
        "Where the endpoint should be consumed from, for topology-aware routing."
    )})


class EndpointPortSchema(Schema):
    """A port every endpoint of a slice offers."""

    name = fields.Str(metadata={"description": (
        "The name of the Service port this is; a DNS label, or empty. Unique in the slice."
    )})
    protocol = fields.Str(metadata={"description": "TCP, UDP or SCTP. Defaults to TCP."})
    port = fields.Int32(metadata={"description": "The port number; unset means all ports."})
    app_protocol = fields.Str(metadata={"description": "The application protocol of the port."})


class EndpointSliceSchema(Schema):
    """EndpointSlice represents a set of service endpoints. Most EndpointSlices are created by the EndpointSlice
    controller to represent the Pods selected by Service objects. For a given service there may be multiple
    EndpointSlice objects which must be joined to produce the full set of endpoints; you can find all of the
    slices for a given service by listing EndpointSlices in the service's namespace whose
    `kubernetes.io/service-name` label contains the service's name.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    address_type = fields.Str(metadata={"omitempty": False, "description": (
        "IPv4, IPv6 or FQDN: the type of every address of the slice. Cannot change."
    )})
    endpoints = fields.List(fields.Nested(EndpointSchema), metadata={"list_type": "atomic", "omitempty": False, "description": (
        "The endpoints of the slice, 1,000 at most."
    )})
    ports = fields.List(fields.Nested(EndpointPortSchema), metadata={"list_type": "atomic", "description": (
        "The ports every endpoint offers; none means no port is restricted."
    )})


def default_endpoint_slice(slice_: dict[str, Any]) -> None:
    """Ports get an empty name and TCP unless told otherwise."""
    for port in slice_.get("ports") or ():
        if isinstance(port, dict):
            if port.get("name") is None:
                port["name"] = ""
            if port.get("protocol") is None:
                port["protocol"] = "TCP"
