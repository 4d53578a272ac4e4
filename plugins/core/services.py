"""core/v1 Service: internal type, behaviour, validation and ``kubectl get`` columns
(``pkg/registry/core/service``, ``pkg/apis/core/validation``, ``printServices``).

On create a Service of type ClusterIP, NodePort or LoadBalancer without ``clusterIP`` gets one
from 10.96.0.0/12 (picked at random, not guaranteed unique: kplane has no IP allocator) and
NodePorts get node ports from 30000-32767. Nothing routes to those addresses.
"""

from __future__ import annotations

import ipaddress
import random
from dataclasses import dataclass, field
from typing import Any

from kplane.api import (
    AGE, META_FIELDS, NAME, Column, Condition, FieldError, ObjectMeta, RequestContext, Strategy, dig, duplicate,
    forbidden, invalid, is_dns1035_label, is_dns1123_label, is_dns1123_subdomain, not_supported, required,
)

TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"]
PROTOCOLS = ["SCTP", "TCP", "UDP"]
AFFINITIES = ["ClientIP", "None"]
SERVICE_CIDR = ipaddress.ip_network("10.96.0.0/12")
NODE_PORTS = range(30000, 32768)
_IP_MESSAGE = "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)"


@dataclass(slots=True)
class ServicePort:
    name: str | None = None
    protocol: str | None = None
    app_protocol: str | None = None
    port: int = 0
    target_port: int | str | None = None
    node_port: int | None = None


@dataclass(slots=True)
class ServiceSpec:
    ports: list[ServicePort] | None = None
    selector: dict[str, str] | None = None
    cluster_ip: str | None = None
    cluster_ips: list[str] | None = None
    type: str | None = None
    external_ips: list[str] | None = None
    session_affinity: str | None = None
    session_affinity_config: dict[str, Any] | None = None
    load_balancer_ip: str | None = None
    external_name: str | None = None
    external_traffic_policy: str | None = None
    internal_traffic_policy: str | None = None
    ip_families: list[str] | None = None
    ip_family_policy: str | None = None
    publish_not_ready_addresses: bool | None = None
    load_balancer_source_ranges: list[str] | None = None
    health_check_node_port: int | None = None
    allocate_load_balancer_node_ports: bool | None = None
    load_balancer_class: str | None = None
    traffic_distribution: str | None = None


@dataclass(slots=True)
class PortStatus:
    port: int = 0
    protocol: str | None = None
    error: str | None = None


@dataclass(slots=True)
class LoadBalancerIngress:
    ip: str | None = None
    hostname: str | None = None
    ip_mode: str | None = None
    ports: list[PortStatus] | None = None


@dataclass(slots=True)
class LoadBalancerStatus:
    ingress: list[LoadBalancerIngress] | None = None


@dataclass(slots=True)
class ServiceStatus:
    load_balancer: LoadBalancerStatus | None = None
    conditions: list[Condition] | None = None


@dataclass(slots=True)
class Service:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ServiceSpec = field(default_factory=ServiceSpec)
    status: ServiceStatus = field(default_factory=ServiceStatus)


# -- validation --------------------------------------------------------------------------------
def _is_ip(value: str) -> bool:
    try:
        ipaddress.ip_address(value)
    except ValueError:
        return False
    return True


def validate_service(service: Service) -> list[FieldError]:
    spec = service.spec
    errs: list[FieldError] = []
    kind = spec.type or ""
    if kind not in TYPES:
        errs.append(not_supported("spec.type", kind, TYPES))
    headless = spec.cluster_ip == "None"
    if kind == "ExternalName":
        if spec.cluster_ip or spec.cluster_ips:
            errs.append(forbidden("spec.clusterIPs", "may not be set for ExternalName services"))
        name = (spec.external_name or "").removesuffix(".")
        if not name:
            errs.append(required("spec.externalName"))
        else:
            errs += [invalid("spec.externalName", spec.external_name, msg) for msg in is_dns1123_subdomain(name)]
    elif spec.cluster_ip and not headless and not _is_ip(spec.cluster_ip):
        errs.append(invalid("spec.clusterIPs[0]", spec.cluster_ip, _IP_MESSAGE))
    if not spec.ports and not headless and kind != "ExternalName":
        errs.append(required("spec.ports"))
    names: set[str] = set()
    keys: set[tuple[int, str]] = set()
    for i, port in enumerate(spec.ports or ()):
        at = f"spec.ports[{i}]"
        if not port.name:
            if len(spec.ports or ()) > 1:
                errs.append(required(f"{at}.name"))
        else:
            errs += [invalid(f"{at}.name", port.name, msg) for msg in is_dns1123_label(port.name)]
            if port.name in names:
                errs.append(duplicate(f"{at}.name", port.name))
            names.add(port.name)
        if not 1 <= port.port <= 65535:
            errs.append(invalid(f"{at}.port", port.port, "must be between 1 and 65535, inclusive"))
        if port.protocol not in PROTOCOLS:
            errs.append(not_supported(f"{at}.protocol", port.protocol, PROTOCOLS))
        target = port.target_port
        if isinstance(target, int) and not 1 <= target <= 65535:
            errs.append(invalid(f"{at}.targetPort", target, "must be between 1 and 65535, inclusive"))
        if port.node_port is not None and kind not in ("NodePort", "LoadBalancer") and port.node_port:
            errs.append(forbidden(f"{at}.nodePort", "may not be used when `type` is 'ClusterIP'"))
        key = (port.port, port.protocol or "")
        if key in keys:
            errs.append(duplicate(at, {"port": port.port, "protocol": port.protocol}))
        keys.add(key)
    if spec.session_affinity not in AFFINITIES:
        errs.append(not_supported("spec.sessionAffinity", spec.session_affinity, AFFINITIES))
    for i, ip in enumerate(spec.external_ips or ()):
        if not _is_ip(ip):
            errs.append(invalid(f"spec.externalIPs[{i}]", ip, _IP_MESSAGE))
    return errs


# -- kubectl get ---------------------------------------------------------------------------------
def _external_ip(service: dict[str, Any]) -> str:
    kind = dig(service, "spec.type", "ClusterIP")
    external = list(dig(service, "spec.externalIPs", []) or [])
    if kind == "ExternalName":
        return dig(service, "spec.externalName", "")
    if kind == "LoadBalancer":
        ingress = [i.get("ip") or i.get("hostname") or "" for i in dig(service, "status.loadBalancer.ingress", []) or []]
        found = [a for a in ingress + external if a]
        return ",".join(found) if found else "<pending>"
    return ",".join(external) if external else "<none>"


def _ports(service: dict[str, Any]) -> str:
    shown = []
    for port in dig(service, "spec.ports", []) or []:
        protocol = port.get("protocol", "TCP")
        if port.get("nodePort"):
            shown.append(f"{port.get('port')}:{port['nodePort']}/{protocol}")
        else:
            shown.append(f"{port.get('port')}/{protocol}")
    return ",".join(shown) if shown else "<none>"


def _selector(service: dict[str, Any]) -> str:
    selector = dig(service, "spec.selector") or {}
    return ",".join(f"{k}={v}" for k, v in sorted(selector.items())) or "<none>"


SERVICE_COLUMNS = (
    NAME,
    Column("Type", "string", lambda s: dig(s, "spec.type", ""), description="The type of the service."),
    Column("Cluster-IP", "string", lambda s: dig(s, "spec.clusterIP") or "<none>", description="The cluster IP of the service."),
    Column("External-IP", "string", _external_ip, description="The external IP of the service."),
    Column("Port(s)", "string", _ports, description="The ports of the service."),
    AGE,
    Column("Selector", "string", _selector, priority=1, description="The selector of the service."),
)


# -- behaviour ---------------------------------------------------------------------------------
def _allocate(service: Service) -> None:
    spec = service.spec
    if spec.type == "ExternalName":
        return
    if not spec.cluster_ip:
        spec.cluster_ip = str(SERVICE_CIDR[random.randrange(2, SERVICE_CIDR.num_addresses - 1)])  # .1: the kubernetes Service
    spec.cluster_ips = [spec.cluster_ip]
    if spec.cluster_ip != "None" and _is_ip(spec.cluster_ip):
        family = "IPv6" if ipaddress.ip_address(spec.cluster_ip).version == 6 else "IPv4"
        spec.ip_families = spec.ip_families or [family]
        spec.ip_family_policy = spec.ip_family_policy or "SingleStack"
    if spec.type in ("NodePort", "LoadBalancer"):
        for port in spec.ports or ():
            if not port.node_port:
                port.node_port = random.choice(NODE_PORTS)


class ServiceStrategy(Strategy):
    name_validator = staticmethod(is_dns1035_label)
    columns = SERVICE_COLUMNS
    return_deleted_object = True
    selectable_fields = {**META_FIELDS, "spec.clusterIP": "spec.clusterIP", "spec.type": "spec.type"}

    def prepare_for_create(self, ctx: RequestContext, obj: Service) -> None:
        obj.status = ServiceStatus()
        _allocate(obj)

    def prepare_for_update(self, ctx: RequestContext, obj: Service, old: Service) -> None:
        obj.status = old.status
        if "ExternalName" not in (obj.spec.type, old.spec.type) and not obj.spec.cluster_ip:
            obj.spec.cluster_ip, obj.spec.cluster_ips = old.spec.cluster_ip, old.spec.cluster_ips  # allocated values stay
        _allocate(obj)

    def validate(self, ctx: RequestContext, obj: Service) -> list[FieldError]:
        return validate_service(obj)

    def validate_update(self, ctx: RequestContext, obj: Service, old: Service) -> list[FieldError]:
        errs = validate_service(obj)
        if "ExternalName" not in (obj.spec.type, old.spec.type) and old.spec.cluster_ip and obj.spec.cluster_ip != old.spec.cluster_ip:
            errs.append(invalid("spec.clusterIPs[0]", obj.spec.cluster_ip, "may not change once set"))
        return errs


class ServiceStatusStrategy(Strategy):
    columns = SERVICE_COLUMNS

    def prepare_for_update(self, ctx: RequestContext, obj: Service, old: Service) -> None:
        obj.spec = old.spec
