"""Internal types of the discovery.k8s.io group: EndpointSlice."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta
from kplane.plugins.core.types import ObjectReference


@dataclass(slots=True)
class EndpointConditions:
    ready: bool | None = None
    serving: bool | None = None
    terminating: bool | None = None


@dataclass(slots=True)
class ForZone:
    name: str = ""


@dataclass(slots=True)
class ForNode:
    name: str = ""


@dataclass(slots=True)
class EndpointHints:
    for_zones: list[ForZone] | None = None
    for_nodes: list[ForNode] | None = None


@dataclass(slots=True)
class Endpoint:
    addresses: list[str] | None = None
    conditions: EndpointConditions = field(default_factory=EndpointConditions)
    hostname: str | None = None
    target_ref: ObjectReference | None = None
    deprecated_topology: dict[str, str] | None = None
    node_name: str | None = None
    zone: str | None = None
    hints: EndpointHints | None = None


@dataclass(slots=True)
class EndpointPort:
    name: str | None = None
    protocol: str | None = None
    port: int | None = None
    app_protocol: str | None = None


@dataclass(slots=True)
class EndpointSlice:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    address_type: str = ""
    endpoints: list[Endpoint] | None = None
    ports: list[EndpointPort] | None = None
