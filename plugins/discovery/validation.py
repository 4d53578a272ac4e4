"""Validation of EndpointSlices (``pkg/apis/discovery/validation``), on internal objects."""

from __future__ import annotations

import ipaddress

from kplane.api import (
    FIELD_IMMUTABLE, FieldError, duplicate, invalid, is_dns1123_label, is_dns1123_subdomain, is_qualified_name,
    is_valid_label_value, not_supported, required, too_many, validate_labels,
)
from kplane.plugins.core.endpoints import endpoint_ip_problems
from kplane.plugins.core.services import PROTOCOLS
from kplane.plugins.discovery.types import Endpoint, EndpointHints, EndpointPort, EndpointSlice

ADDRESS_TYPES = ["FQDN", "IPv4", "IPv6"]
MAX_ADDRESSES = 100
MAX_ENDPOINTS = 1000
MAX_PORTS = 20000
MAX_TOPOLOGY_LABELS = 16
MAX_ZONE_HINTS = 8


def _address_problems(address: str, address_type: str) -> list[str]:
    """An IPv4 or IPv6 address of that family a client could reach; a fully qualified domain
    name; unknown types are not looked at."""
    if address_type in ("IPv4", "IPv6"):
        version = 4 if address_type == "IPv4" else 6
        try:
            ok = ipaddress.ip_address(address).version == version
        except ValueError:
            ok = False
        return endpoint_ip_problems(address) if ok else [f"must be a valid {address_type} address"]
    if address_type == "FQDN":
        name = address.removesuffix(".")
        if name.count(".") < 1:
            return ["should be a domain with at least two segments separated by dots"]
        return is_dns1123_subdomain(name.lower())
    return []


def _validate_hints(hints: EndpointHints, at: str) -> list[FieldError]:
    zones = hints.for_zones or []
    if len(zones) > MAX_ZONE_HINTS:
        return [too_many(f"{at}.forZones", len(zones), MAX_ZONE_HINTS)]
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, zone in enumerate(zones):
        where = f"{at}.forZones[{i}].name"
        if zone.name in seen:
            errs.append(duplicate(where, zone.name))
        seen.add(zone.name)
        errs += [invalid(where, zone.name, msg) for msg in is_valid_label_value(zone.name)]
    return errs


def _validate_endpoint(endpoint: Endpoint, address_type: str, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    addresses = endpoint.addresses or []
    if not addresses:
        errs.append(required(f"{at}.addresses", "must contain at least 1 address"))
    elif len(addresses) > MAX_ADDRESSES:
        errs.append(too_many(f"{at}.addresses", len(addresses), MAX_ADDRESSES))
    for i, address in enumerate(addresses[:MAX_ADDRESSES]):
        errs += [invalid(f"{at}.addresses[{i}]", address, msg) for msg in _address_problems(address, address_type)]
    if endpoint.node_name is not None:
        errs += [invalid(f"{at}.nodeName", endpoint.node_name, msg) for msg in is_dns1123_subdomain(endpoint.node_name)]
    topology = endpoint.deprecated_topology or {}
    if len(topology) > MAX_TOPOLOGY_LABELS:
        errs.append(too_many(f"{at}.deprecatedTopology", len(topology), MAX_TOPOLOGY_LABELS))
    errs += validate_labels(topology, f"{at}.deprecatedTopology")
    if endpoint.hostname is not None:
        errs += [invalid(f"{at}.hostname", endpoint.hostname, msg) for msg in is_dns1123_label(endpoint.hostname)]
    if endpoint.hints is not None:
        errs += _validate_hints(endpoint.hints, f"{at}.hints")
    return errs


def _validate_ports(ports: list[EndpointPort]) -> list[FieldError]:
    if len(ports) > MAX_PORTS:
        return [too_many("ports", len(ports), MAX_PORTS)]
    errs: list[FieldError] = []
    names: set[str] = set()
    for i, port in enumerate(ports):
        at, name = f"ports[{i}]", port.name or ""
        if name:
            errs += [invalid(f"{at}.name", name, msg) for msg in is_dns1123_label(name)]
        if name in names:
            errs.append(duplicate(f"{at}.name", name))
        names.add(name)
        if port.protocol is None:
            errs.append(required(f"{at}.protocol"))
        elif port.protocol not in PROTOCOLS:
            errs.append(not_supported(f"{at}.protocol", port.protocol, PROTOCOLS))
        if port.app_protocol is not None:
            errs += [invalid(f"{at}.appProtocol", port.app_protocol, msg) for msg in is_qualified_name(port.app_protocol)]
    return errs


def validate_endpoint_slice(slice_: EndpointSlice) -> list[FieldError]:
    errs: list[FieldError] = []
    if not slice_.address_type:
        errs.append(required("addressType"))
    elif slice_.address_type not in ADDRESS_TYPES:
        errs.append(not_supported("addressType", slice_.address_type, ADDRESS_TYPES))
    endpoints = slice_.endpoints or []
    if len(endpoints) > MAX_ENDPOINTS:
        errs.append(too_many("endpoints", len(endpoints), MAX_ENDPOINTS))
    else:
        for i, endpoint in enumerate(endpoints):
            errs += _validate_endpoint(endpoint, slice_.address_type, f"endpoints[{i}]")
    return errs + _validate_ports(slice_.ports or [])


def validate_endpoint_slice_update(slice_: EndpointSlice, old: EndpointSlice) -> list[FieldError]:
    errs = validate_endpoint_slice(slice_)
    if slice_.address_type != old.address_type:
        errs.append(invalid("addressType", slice_.address_type, FIELD_IMMUTABLE))
    return errs
