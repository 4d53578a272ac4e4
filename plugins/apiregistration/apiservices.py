"""Reading APIService objects as the loopback informers deliver them (wire dicts), and the
priorities of the groups Kubernetes ranks (``apiVersionPriorities`` of kube-apiserver)."""

from __future__ import annotations

from typing import Any

from kplane.plugins.apiregistration.strategy import AVAILABLE

GROUP, VERSION, RESOURCE = "apiregistration.k8s.io", "v1", "apiservices"
DEFAULT_GROUP_PRIORITY = 1000  # a group Kubernetes does not list, as its CRDs get
DEFAULT_VERSION_PRIORITY = 15

# Kubernetes' own groups rank as kube-apiserver ranks them (``apiVersionPriorities``).
GROUP_PRIORITIES = {
    "": 18000,
    GROUP: 18000,  # apiregistration.k8s.io
    "apps": 17800,
    "events.k8s.io": 17750,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "autoscaling": 17500,
    "batch": 17400,
    "certificates.k8s.io": 17300,
    "networking.k8s.io": 17200,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "storage.k8s.io": 16800,
    "admissionregistration.k8s.io": 16700,
    "apiextensions.k8s.io": 16700,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "node.k8s.io": 16300,
    "discovery.k8s.io": 16200,
    "flowcontrol.apiserver.k8s.io": 16100,
}
VERSION_PRIORITIES = {("", "v1"): 1}


def priorities(group: str, versions: list[str]) -> dict[str, tuple[int, int]]:
    """(groupPriorityMinimum, versionPriority) per served version, preferred version first: the
    preferred one gets 15, each later one one less (at least 1)."""
    group_priority = GROUP_PRIORITIES.get(group, DEFAULT_GROUP_PRIORITY)
    return {
        v: (group_priority, VERSION_PRIORITIES.get((group, v), max(1, DEFAULT_VERSION_PRIORITY - i)))
        for i, v in enumerate(versions)
    }



def group_version(api_service: dict[str, Any]) -> tuple[str, str]:
    spec = api_service.get("spec") or {}
    return spec.get("group") or "", spec.get("version") or ""


def is_local(api_service: dict[str, Any]) -> bool:
    spec = api_service.get("spec") or {}
    return spec.get("service") is None and not spec.get("url")


def condition(api_service: dict[str, Any], type_: str = AVAILABLE) -> dict[str, Any] | None:
    for cond in (api_service.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return cond
    return None


def priorities_of(api_service: dict[str, Any]) -> tuple[int, int]:
    spec = api_service.get("spec") or {}
    return int(spec.get("groupPriorityMinimum") or 0), int(spec.get("versionPriority") or 0)
