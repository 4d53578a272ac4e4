"""core/v1 Endpoints: the wire schema and its defaulting (``k8s.io/api/core/v1``)."""

from __future__ import annotations

from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields
from kplane.plugins.core.v1.schemas import ObjectReferenceSchema


class EndpointAddressSchema(Schema):
    """One address of a Service's endpoints: a Pod's IP, usually."""

    ip = fields.Str(metadata={"omitempty": False, "description": (
        "The IP address. Not loopback, link-local or link-local multicast."
    )})
    hostname = fields.Str(metadata={"description": "The hostname of this endpoint."})
    node_name = fields.Str(metadata={"description": "The node hosting this endpoint."})
    target_ref = fields.Nested(ObjectReferenceSchema, metadata={"pointer": True, "description": (
        "The object behind this endpoint, such as its Pod."
    )})


class EndpointPortSchema(Schema):
    """A port of a Service's endpoints."""

    name = fields.Str(metadata={"description": (
        "The name of the Service port this is; required when a subset has more than one port."
    )})
    port = fields.Int32(metadata={"omitempty": False, "description": "The port number, 1-65535."})
    protocol = fields.Str(metadata={"description": "TCP, UDP or SCTP. Defaults to TCP."})
    app_protocol = fields.Str(metadata={"description": "The application protocol of the port."})


class EndpointSubsetSchema(Schema):
    """Addresses that all offer the same ports."""

    addresses = fields.List(fields.Nested(EndpointAddressSchema), metadata={"list_type": "atomic", "description": (
        "Addresses of endpoints that are ready to receive traffic."
    )})
    not_ready_addresses = fields.List(fields.Nested(EndpointAddressSchema), metadata={"list_type": "atomic", "description": (
        "Addresses of endpoints that are not ready yet (or no longer)."
    )})
    ports = fields.List(fields.Nested(EndpointPortSchema), metadata={"list_type": "atomic", "description": (
        "The ports every address of the subset offers."
    )})


class EndpointsSchema(Schema):
    """Endpoints is the set of addresses that implement a Service: for a Service with a selector, the endpoints
    controller lists the IPs and ports of its Pods, ready or not. EndpointSlices say the same, in parts.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    subsets = fields.List(fields.Nested(EndpointSubsetSchema), metadata={"list_type": "atomic", "description": (
        "The endpoints, grouped by the ports they offer."
    )})


def default_endpoints(endpoints: dict[str, Any]) -> None:
    """``SetDefaults_EndpointPort``: TCP unless told otherwise."""
    for subset in endpoints.get("subsets") or ():
        for port in (subset or {}).get("ports") or ():
            if isinstance(port, dict) and not port.get("protocol"):
                port["protocol"] = "TCP"
