"""Validation of networking.k8s.io kinds (``pkg/apis/networking/validation``), on internal objects."""

from __future__ import annotations

import ipaddress
import re
from typing import Any

from kplane.api import (
    FIELD_IMMUTABLE, FieldError, LabelSelector, LabelSelectorRequirement, forbidden, invalid, is_dns1035_label,
    is_dns1123_subdomain, not_supported, required, too_long, validate_label_selector,
)
from kplane.plugins.core.services import PROTOCOLS
from kplane.plugins.networking.types import Ingress, IngressClass, NetworkPolicy

PATH_TYPES = ["Exact", "ImplementationSpecific", "Prefix"]
POLICY_TYPES = ["Egress", "Ingress"]
MAX_CONTROLLER = 250
_BAD_PATH_PARTS = ("//", "/./", "/../", "%2f", "%2F")
_PORT_NAME = re.compile(r"^[a-z0-9]([a-z0-9-]*[a-z0-9])?$")


def _selector(wire: Any, path: str) -> list[FieldError]:
    """A label selector kept as wire JSON, checked as a typed one."""
    if not isinstance(wire, dict):
        return []
    expressions = [LabelSelectorRequirement(e.get("key", ""), e.get("operator", ""), e.get("values"))
                   for e in wire.get("matchExpressions") or () if isinstance(e, dict)]
    return validate_label_selector(LabelSelector(wire.get("matchLabels"), expressions), path)


def _host(host: str, path: str) -> list[FieldError]:
    """A DNS name, or a wildcard one (``*.example.com``), never an IP address."""
    try:
        ipaddress.ip_address(host)
    except ValueError:
        pass
    else:
        return [invalid(path, host, "must be a DNS name, not an IP address")]
    name = host[2:] if host.startswith("*.") else host
    return [invalid(path, host, msg) for msg in is_dns1123_subdomain(name)]


def _backend(backend: Any, path: str) -> list[FieldError]:
    if not isinstance(backend, dict):
        return [required(path)]
    service, resource = backend.get("service"), backend.get("resource")
    if service is not None and resource is not None:
        return [invalid(path, "", "cannot set both resource and service backends")]
    if resource is not None:
        return [required(f"{path}.resource.{k}") for k in ("kind", "name") if not (resource or {}).get(k)]
    if service is None:
        return [invalid(path, "", "resource or service backend is required")]
    errs = [invalid(f"{path}.service.name", service.get("name"), msg) for msg in is_dns1035_label(service.get("name") or "")]
    port = service.get("port") or {}
    if port.get("name") and port.get("number"):
        errs.append(invalid(f"{path}.service.port", port, "cannot set both port name & port number"))
    elif port.get("name"):
        if not _PORT_NAME.match(port["name"]) or len(port["name"]) > 15:
            errs.append(invalid(f"{path}.service.port.name", port["name"], "must be a valid port name (IANA_SVC_NAME)"))
    elif port.get("number") is not None:
        if not 1 <= int(port["number"]) <= 65535:
            errs.append(invalid(f"{path}.service.port.number", port["number"], "must be between 1 and 65535, inclusive"))
    else:
        errs.append(required(f"{path}.service.port", "port name or number is required"))
    return errs


def _http_path(item: dict[str, Any], path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    kind, value = item.get("pathType"), item.get("path") or ""
    if kind is None:
        errs.append(required(f"{path}.pathType", "pathType must be specified"))
    elif kind not in PATH_TYPES:
        errs.append(not_supported(f"{path}.pathType", kind, PATH_TYPES))
    elif kind in ("Exact", "Prefix"):
        if not value.startswith("/"):
            errs.append(invalid(f"{path}.path", value, "must be an absolute path"))
        elif any(part in value for part in _BAD_PATH_PARTS) or value.endswith(("/..", "/.")):
            errs.append(invalid(f"{path}.path", value, "must not contain '//', '/./', '/../', '%2f', '%2F' or end with '/..', '/.'"))
    return errs + _backend(item.get("backend"), f"{path}.backend")


def validate_ingress(ingress: Ingress) -> list[FieldError]:
    spec = ingress.spec
    errs: list[FieldError] = []
    if not spec.rules and spec.default_backend is None:
        errs.append(invalid("spec.rules", [], "either `defaultBackend` or `rules` must be specified"))
    if spec.default_backend is not None:
        errs += _backend(spec.default_backend, "spec.defaultBackend")
    for i, rule in enumerate(spec.rules or ()):
        at = f"spec.rules[{i}]"
        if rule.get("host"):
            errs += _host(rule["host"], f"{at}.host")
        http = rule.get("http")
        if http is not None:
            paths = http.get("paths") or []
            if not paths:
                errs.append(required(f"{at}.http.paths"))
            for j, item in enumerate(paths):
                errs += _http_path(item, f"{at}.http.paths[{j}]")
    for i, tls in enumerate(spec.tls or ()):
        for j, host in enumerate(tls.get("hosts") or ()):
            errs += _host(host, f"spec.tls[{i}].hosts[{j}]")
        if tls.get("secretName"):
            errs += [invalid(f"spec.tls[{i}].secretName", tls["secretName"], msg) for msg in is_dns1123_subdomain(tls["secretName"])]
    if spec.ingress_class_name is not None:
        errs += [invalid("spec.ingressClassName", spec.ingress_class_name, msg) for msg in is_dns1123_subdomain(spec.ingress_class_name)]
    return errs


def validate_ingress_class(ingress_class: IngressClass) -> list[FieldError]:
    spec = ingress_class.spec
    errs: list[FieldError] = []
    if not spec.controller:
        errs.append(required("spec.controller"))
    elif len(spec.controller) > MAX_CONTROLLER:
        errs.append(too_long("spec.controller", spec.controller, MAX_CONTROLLER))
    parameters = spec.parameters
    if parameters is not None:
        errs += [required(f"spec.parameters.{k}") for k in ("kind", "name") if not parameters.get(k)]
        scope = parameters.get("scope")
        if scope is not None and scope not in ("Cluster", "Namespace"):
            errs.append(not_supported("spec.parameters.scope", scope, ["Cluster", "Namespace"]))
        if scope == "Namespace" and not parameters.get("namespace"):
            errs.append(required("spec.parameters.namespace", "`parameters.scope` is set to 'Namespace'"))
        if scope != "Namespace" and parameters.get("namespace"):
            errs.append(forbidden("spec.parameters.namespace", "`parameters.scope` is set to 'Cluster'"))
    return errs


def validate_ingress_class_update(ingress_class: IngressClass, old: IngressClass) -> list[FieldError]:
    errs = validate_ingress_class(ingress_class)
    if ingress_class.spec.controller != old.spec.controller:
        errs.append(invalid("spec.controller", ingress_class.spec.controller, FIELD_IMMUTABLE))
    return errs


def _peer(peer: Any, path: str) -> list[FieldError]:
    if not isinstance(peer, dict) or not any(peer.get(k) is not None for k in ("podSelector", "namespaceSelector", "ipBlock")):
        return [required(path, "must specify a peer")]
    if peer.get("ipBlock") is not None and (peer.get("podSelector") is not None or peer.get("namespaceSelector") is not None):
        return [forbidden(path, "may not specify more than 1 peer")]
    errs = _selector(peer.get("podSelector"), f"{path}.podSelector") + _selector(peer.get("namespaceSelector"), f"{path}.namespaceSelector")
    block = peer.get("ipBlock")
    if block is not None:
        try:
            network = ipaddress.ip_network(block.get("cidr") or "", strict=False)
        except ValueError:
            return errs + [invalid(f"{path}.ipBlock.cidr", block.get("cidr"), "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")]
        for i, cidr in enumerate(block.get("except") or ()):
            try:
                inner = ipaddress.ip_network(cidr, strict=False)
            except ValueError:
                errs.append(invalid(f"{path}.ipBlock.except[{i}]", cidr, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)"))
                continue
            if inner.version != network.version or not inner.subnet_of(network) or inner == network:  # type: ignore[arg-type]
                errs.append(invalid(f"{path}.ipBlock.except[{i}]", cidr, "must be a strict subset of `cidr`"))
    return errs


def _port(port: Any, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    protocol = port.get("protocol")
    if protocol is not None and protocol not in PROTOCOLS:
        errs.append(not_supported(f"{path}.protocol", protocol, PROTOCOLS))
    value, end = port.get("port"), port.get("endPort")
    if isinstance(value, int):
        if not 1 <= value <= 65535:
            errs.append(invalid(f"{path}.port", value, "must be between 1 and 65535, inclusive"))
        if end is not None and (not isinstance(end, int) or end < value):
            errs.append(invalid(f"{path}.endPort", end, "must be greater than or equal to `port`"))
    elif isinstance(value, str):
        if not _PORT_NAME.match(value) or len(value) > 15:
            errs.append(invalid(f"{path}.port", value, "must be a valid port name (IANA_SVC_NAME)"))
        if end is not None:
            errs.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is non-numeric"))
    elif end is not None:
        errs.append(invalid(f"{path}.endPort", end, "may not be specified when `port` is not specified"))
    return errs


def validate_network_policy(policy: NetworkPolicy) -> list[FieldError]:
    spec = policy.spec
    errs = validate_label_selector(spec.pod_selector, "spec.podSelector")
    for direction, peers in (("ingress", "from"), ("egress", "to")):
        for i, rule in enumerate(getattr(spec, direction) or ()):
            at = f"spec.{direction}[{i}]"
            for j, port in enumerate((rule or {}).get("ports") or ()):
                errs += _port(port or {}, f"{at}.ports[{j}]")
            for j, peer in enumerate((rule or {}).get(peers) or ()):
                errs += _peer(peer, f"{at}.{peers}[{j}]")
    types = spec.policy_types or []
    errs += [not_supported(f"spec.policyTypes[{i}]", t, POLICY_TYPES) for i, t in enumerate(types) if t not in POLICY_TYPES]
    if len(types) > len(POLICY_TYPES):
        errs.append(invalid("spec.policyTypes", types, "may not specify more than two policyTypes"))
    return errs
