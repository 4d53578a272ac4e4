"""The endpoints a Service should have in EndpointSlices, grouped by the ports they offer
(``endpointslice/reconciler``'s desired state, ``podToEndpoint``, ``getEndpointPorts``)."""

from __future__ import annotations

from typing import Any

import orjson

from kplane.api import ownership as own
from kplane.plugins.core.controllers import podendpoints as pe

Obj = dict[str, Any]
ZONE_LABEL = "topology.kubernetes.io/zone"


def ports_key(ports: list[Obj] | None) -> bytes:
    """Slices group endpoints by port set: the same key for the same ports in any order."""
    return orjson.dumps(sorted(ports or [], key=lambda p: orjson.dumps(p, option=orjson.OPT_SORT_KEYS)), option=orjson.OPT_SORT_KEYS)


def endpoint_key(endpoint: Obj) -> str:
    """An endpoint is its Pod (or, for a hand-written one, its first address)."""
    ref = endpoint.get("targetRef") or {}
    return str(ref.get("uid") or (endpoint.get("addresses") or [""])[0])


def _endpoint(service: Obj, pod: Obj, zones: dict[str, str]) -> Obj:
    serving = pe.ready(pod)
    terminating = bool(pod["metadata"].get("deletionTimestamp"))
    ready = bool(own.spec(service).get("publishNotReadyAddresses")) or (serving and not terminating)
    endpoint: Obj = {"addresses": [pod["status"]["podIP"]],
                     "conditions": {"ready": ready, "serving": serving, "terminating": terminating},
                     "targetRef": pe.target_ref(pod)}
    if (name := pe.hostname(pod, service)) is not None:
        endpoint["hostname"] = name
    if node := own.spec(pod).get("nodeName"):
        endpoint["nodeName"] = node
        if zone := zones.get(node):
            endpoint["zone"] = zone
    return endpoint


def _ports(service: Obj, pod: Obj) -> list[Obj]:
    ports = []
    for service_port in own.spec(service).get("ports") or []:
        number = pe.find_port(pod, service_port)
        if number is None:
            continue
        port: Obj = {"name": service_port.get("name") or "", "port": number, "protocol": service_port.get("protocol") or "TCP"}
        if service_port.get("appProtocol") is not None:
            port["appProtocol"] = service_port["appProtocol"]
        ports.append(port)
    return ports


def desired(service: Obj, pods: list[Obj], zones: dict[str, str]) -> dict[bytes, tuple[list[Obj], dict[str, Obj]]]:
    """Port-set key -> (those ports, the endpoints offering them by :func:`endpoint_key`), for the
    Pods the Service selects that have an IP and have not finished for good, terminating or not."""
    groups: dict[bytes, tuple[list[Obj], dict[str, Obj]]] = {}
    for pod in pods:
        if not pe.included(pod, terminating=True):
            continue
        ports = _ports(service, pod)
        if own.spec(service).get("ports") and not ports:
            continue  # none of its ports resolves on this Pod
        endpoint = _endpoint(service, pod, zones)
        group = groups.setdefault(ports_key(ports), (ports, {}))
        group[1][endpoint_key(endpoint)] = endpoint
    return groups


def zones_of(nodes: list[Obj]) -> dict[str, str]:
    return {n["metadata"]["name"]: z for n in nodes if (z := (n["metadata"].get("labels") or {}).get(ZONE_LABEL))}
