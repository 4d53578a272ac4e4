"""core/v1 Endpoints: internal type, validation, behaviour and ``kubectl get`` columns
(``pkg/registry/core/endpoint``, ``ValidateEndpoints``, ``printEndpoints``).

The endpoints controller (:mod:`kplane.plugins.core.controllers.endpoints`) writes one per
Service with a selector; a Service without one gets whatever Endpoints its user writes.
"""

from __future__ import annotations

import ipaddress
from dataclasses import dataclass, field
from typing import Any

from kplane.api import (
    AGE, NAME, Column, FieldError, ObjectMeta, RequestContext, Strategy, invalid, is_dns1123_label,
    is_dns1123_subdomain, is_qualified_name, not_supported, required,
)
from kplane.plugins.core.services import PROTOCOLS
from kplane.plugins.core.types import ObjectReference

SHOWN = 3  # addresses kubectl's column lists before "+ N more..."


@dataclass(slots=True)
class EndpointAddress:
    ip: str = ""
    hostname: str | None = None
    node_name: str | None = None
    target_ref: ObjectReference | None = None


@dataclass(slots=True)
class EndpointPort:
    name: str | None = None
    port: int = 0
    protocol: str | None = None
    app_protocol: str | None = None


@dataclass(slots=True)
class EndpointSubset:
    addresses: list[EndpointAddress] | None = None
    not_ready_addresses: list[EndpointAddress] | None = None
    ports: list[EndpointPort] | None = None


@dataclass(slots=True)
class Endpoints:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    subsets: list[EndpointSubset] | None = None


# -- validation --------------------------------------------------------------------------------
def endpoint_ip_problems(value: str) -> list[str]:
    """``ValidateEndpointIP``: an address a client could reach a Pod at: no unspecified, loopback,
    link-local or link-local multicast address."""
    try:
        ip = ipaddress.ip_address(value)
    except ValueError:
        return ["must be a valid IP address"]
    problems = []
    if ip.is_unspecified:
        problems.append(f"may not be unspecified ({value})")
    if ip.is_loopback:
        problems.append("may not be in the loopback range (127.0.0.0/8, ::1/128)")
    if ip.is_link_local:
        problems.append("may not be in the link-local range (169.254.0.0/16, fe80::/10)")
    if ip in ipaddress.ip_network("224.0.0.0/24") or ip in ipaddress.ip_network("ff02::/16"):
        problems.append("may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)")
    return problems


def _validate_address(address: EndpointAddress, at: str) -> list[FieldError]:
    errs = [invalid(f"{at}.ip", address.ip, msg) for msg in endpoint_ip_problems(address.ip)]
    if address.hostname:
        errs += [invalid(f"{at}.hostname", address.hostname, msg) for msg in is_dns1123_label(address.hostname)]
    if address.node_name is not None:
        errs += [invalid(f"{at}.nodeName", address.node_name, msg) for msg in is_dns1123_subdomain(address.node_name)]
    return errs


def _validate_port(port: EndpointPort, named: bool, at: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if named and not port.name:
        errs.append(required(f"{at}.name"))
    elif port.name:
        errs += [invalid(f"{at}.name", port.name, msg) for msg in is_dns1123_label(port.name)]
    if not 1 <= port.port <= 65535:
        errs.append(invalid(f"{at}.port", port.port, "must be between 1 and 65535, inclusive"))
    if not port.protocol:
        errs.append(required(f"{at}.protocol"))
    elif port.protocol not in PROTOCOLS:
        errs.append(not_supported(f"{at}.protocol", port.protocol, PROTOCOLS))
    if port.app_protocol is not None:
        errs += [invalid(f"{at}.appProtocol", port.app_protocol, msg) for msg in is_qualified_name(port.app_protocol)]
    return errs


def validate_endpoints(endpoints: Endpoints) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, subset in enumerate(endpoints.subsets or ()):
        at = f"subsets[{i}]"
        if not subset.addresses and not subset.not_ready_addresses:
            errs.append(required(at, "must specify `addresses` or `notReadyAddresses`"))
        for j, address in enumerate(subset.addresses or ()):
            errs += _validate_address(address, f"{at}.addresses[{j}]")
        for j, address in enumerate(subset.not_ready_addresses or ()):
            errs += _validate_address(address, f"{at}.notReadyAddresses[{j}]")
        ports = subset.ports or ()
        for j, port in enumerate(ports):
            errs += _validate_port(port, len(ports) > 1, f"{at}.ports[{j}]")
    return errs


# -- kubectl get ---------------------------------------------------------------------------------
def _host_port(ip: str, port: Any) -> str:
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


def format_endpoints(endpoints: dict[str, Any]) -> str:
    """``formatEndpoints``: the first ready ``ip:port`` pairs, then how many more; ``<none>`` without subsets."""
    subsets = endpoints.get("subsets") or []
    if not subsets:
        return "<none>"
    shown: list[str] = []
    count = 0
    for subset in subsets:
        ips = [a.get("ip", "") for a in subset.get("addresses") or []]
        pairs = [_host_port(ip, p.get("port")) for p in subset.get("ports") or [] for ip in ips] if subset.get("ports") else ips
        count += len(pairs)
        shown += pairs[:max(0, SHOWN - len(shown))]
    text = ",".join(shown)
    return f"{text} + {count - SHOWN} more..." if count > SHOWN else text


ENDPOINTS_COLUMNS = (
    NAME,
    Column("Endpoints", "string", format_endpoints, description="Endpoints of the service."),
    AGE,
)


class EndpointsStrategy(Strategy):
    columns = ENDPOINTS_COLUMNS

    def validate(self, ctx: RequestContext, obj: Endpoints) -> list[FieldError]:
        return validate_endpoints(obj)
