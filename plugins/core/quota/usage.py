"""What one object uses of a quota's resources (kube's quota evaluators,
``pkg/quota/v1/evaluator/core``), on wire-form objects, so the admission and the controller
count the same way.

Every namespaced resource counts as ``count/<plural>`` (``count/<plural>.<group>`` outside the
core group). Pods also use ``pods`` and their compute resources (``requests.cpu`` or ``cpu``,
``limits.memory``, ...; containers summed, the largest init container if it asks more, plus the
pod's overhead) while they are not finished; Services ``services``, ``services.nodeports`` and
``services.loadbalancers``; claims ``persistentvolumeclaims`` and ``requests.storage`` (also per
StorageClass); ConfigMaps, Secrets, ReplicationControllers and ResourceQuotas their legacy names.
Scopes select pods only: a quota with scopes counts nothing else.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from typing import Any

from kplane.api import quantity

Obj = dict[str, Any]
Usage = dict[str, Fraction]

LEGACY_COUNTS = {"configmaps": "configmaps", "secrets": "secrets", "replicationcontrollers": "replicationcontrollers",
                 "resourcequotas": "resourcequotas"}
COMPUTE = ("cpu", "memory", "ephemeral-storage")
#: With any of these in a quota, every container must say its request or limit (``podEvaluator.Constraints``).
VALIDATED = frozenset({"cpu", "memory", "requests.cpu", "requests.memory", "limits.cpu", "limits.memory"})
STORAGE_CLASS_SUFFIX = ".storageclass.storage.k8s.io/"
TERMINAL = ("Succeeded", "Failed")


def count_name(plural: str, group: str) -> str:
    return f"count/{plural}.{group}" if group else f"count/{plural}"


def _amount(value: Any) -> Fraction:
    try:
        return quantity.parse(value).value
    except ValueError:
        return Fraction(0)


def _add(into: Usage, more: dict[str, Any]) -> None:
    for name, value in more.items():
        into[name] = into.get(name, Fraction(0)) + _amount(value)


def _containers(pod: Obj, key: str) -> list[Obj]:
    return [c for c in (pod.get("spec") or {}).get(key) or () if isinstance(c, dict)]


def _resources(container: Obj, kind: str) -> dict[str, Any]:
    return (container.get("resources") or {}).get(kind) or {}


def pod_requests_and_limits(pod: Obj) -> tuple[Usage, Usage]:
    """``PodRequests``/``PodLimits``: containers summed, an init container's larger need kept
    (sidecars, ``restartPolicy: Always``, add to the rest), the overhead added."""
    totals: list[Usage] = []
    for kind in ("requests", "limits"):
        total: Usage = {}
        for container in _containers(pod, "containers"):
            _add(total, _resources(container, kind))
        sidecars: Usage = {}
        init: Usage = {}
        for container in _containers(pod, "initContainers"):
            if container.get("restartPolicy") == "Always":
                _add(total, _resources(container, kind))
                _add(sidecars, _resources(container, kind))
                continue
            need = dict(sidecars)
            _add(need, _resources(container, kind))
            for name, value in need.items():
                init[name] = max(init.get(name, Fraction(0)), value)
        for name, value in init.items():
            total[name] = max(total.get(name, Fraction(0)), value)
        _add(total, (pod.get("spec") or {}).get("overhead") or {})
        totals.append(total)
    return totals[0], totals[1]


def compute_usage(requests: Usage, limits: Usage) -> Usage:
    """``podComputeUsageHelper``: requests under their bare and ``requests.`` names, limits as ``limits.``."""
    result: Usage = {}
    for name, value in requests.items():
        if name in COMPUTE:
            result[name] = value
        result[f"requests.{name}"] = value
    for name, value in limits.items():
        result[f"limits.{name}"] = value
    return result


def pod_counts(pod: Obj) -> bool:
    """``QuotaV1Pod``: a pod uses compute quota until it finishes or its deletion grace is over."""
    return (pod.get("status") or {}).get("phase") not in TERMINAL


def usage(plural: str, group: str, obj: Obj) -> Usage:
    """What ``obj`` of ``group``/``plural`` uses."""
    result: Usage = {count_name(plural, group): Fraction(1)}
    if group:
        return result
    if plural == "pods":
        if pod_counts(obj):
            result["pods"] = Fraction(1)
            result.update(compute_usage(*pod_requests_and_limits(obj)))
    elif plural == "services":
        spec = obj.get("spec") or {}
        result["services"] = Fraction(1)
        kind = spec.get("type") or "ClusterIP"
        if kind in ("NodePort", "LoadBalancer"):
            result["services.nodeports"] = Fraction(len(spec.get("ports") or ()))
        if kind == "LoadBalancer":
            result["services.loadbalancers"] = Fraction(1)
    elif plural == "persistentvolumeclaims":
        spec = obj.get("spec") or {}
        storage = _amount(((spec.get("resources") or {}).get("requests") or {}).get("storage", 0))
        result["persistentvolumeclaims"] = Fraction(1)
        result["requests.storage"] = storage
        storage_class = spec.get("storageClassName")
        if storage_class:
            result[f"{storage_class}{STORAGE_CLASS_SUFFIX}persistentvolumeclaims"] = Fraction(1)
            result[f"{storage_class}{STORAGE_CLASS_SUFFIX}requests.storage"] = storage
    elif plural in LEGACY_COUNTS:
        result[LEGACY_COUNTS[plural]] = Fraction(1)
    return result


def missing_requests(pod: Obj, hard: Iterable[str]) -> str | None:
    """``podEvaluator.Constraints``: with cpu or memory quota, each container names what it uses;
    the message lists what each lacks (``limits.cpu for: a,b; requests.memory for: a``)."""
    required = VALIDATED.intersection(hard)
    if not required:
        return None
    missing: dict[str, set[str]] = {}
    for container in _containers(pod, "containers") + _containers(pod, "initContainers"):
        requests = {k: _amount(v) for k, v in _resources(container, "requests").items()}
        limits = {k: _amount(v) for k, v in _resources(container, "limits").items()}
        for name in required - set(compute_usage(requests, limits)):
            missing.setdefault(name, set()).add(str(container.get("name", "")))
    if not missing:
        return None
    return "must specify " + "; ".join(f"{name} for: {','.join(sorted(missing[name]))}" for name in sorted(missing))


def _best_effort(pod: Obj) -> bool:
    return all(not _resources(c, kind).get(name) for c in _containers(pod, "containers") + _containers(pod, "initContainers")
               for kind in ("requests", "limits") for name in ("cpu", "memory"))


def _scope_matches(scope: str, operator: str, values: list[str], pod: Obj) -> bool:
    spec = pod.get("spec") or {}
    if scope == "Terminating":
        return (spec.get("activeDeadlineSeconds") is not None and spec["activeDeadlineSeconds"] >= 0)
    if scope == "NotTerminating":
        return not _scope_matches("Terminating", operator, values, pod)
    if scope == "BestEffort":
        return _best_effort(pod)
    if scope == "NotBestEffort":
        return not _best_effort(pod)
    if scope == "PriorityClass":
        name = spec.get("priorityClassName") or ""
        return {"In": name in values, "NotIn": name not in values, "Exists": bool(name),
                "DoesNotExist": not name}.get(operator, False)
    if scope == "CrossNamespacePodAffinity":
        return False  # kplane's pods carry no cross-namespace affinity terms it would count
    return False


def scope_requirements(quota: Obj) -> list[tuple[str, str, list[str]]]:
    spec = quota.get("spec") or {}
    found = [(scope, "Exists", []) for scope in spec.get("scopes") or ()]
    for expr in ((spec.get("scopeSelector") or {}).get("matchExpressions") or ()):
        found.append((expr.get("scopeName", ""), expr.get("operator", ""), list(expr.get("values") or ())))
    return found


def quota_matches(quota: Obj, plural: str, group: str, obj: Obj) -> bool:
    """Whether ``quota`` counts ``obj``: every object when it has no scopes, else pods its scopes all select."""
    scopes = scope_requirements(quota)
    if not scopes:
        return True
    if (group, plural) != ("", "pods"):
        return False
    return all(_scope_matches(scope, operator, values, obj) for scope, operator, values in scopes)


def format_usage(values: Usage, like: dict[str, Any]) -> dict[str, str]:
    """Canonical strings, each in the format of the hard value of the same name (``1Gi`` stays binary)."""
    out = {}
    for name, value in values.items():
        try:
            kind = quantity.parse(like.get(name, "0")).format
        except ValueError:
            kind = quantity.DECIMAL_SI
        out[name] = quantity.canonical(value, kind)
    return out
