"""The LimitRanger admission plugin (``plugin/pkg/admission/limitranger``).

Mutating, on pod creates: each container and init container without a request or limit of a
resource gets the default of the namespace's ``Container`` limits (``defaultRequest``,
``default``), and the pod is annotated ``kubernetes.io/limit-ranger: LimitRanger plugin set: cpu
request for container main; ...``. Validating, on pod creates and on claim creates and updates:
the ``min``, ``max`` and ``maxLimitRequestRatio`` of each item of type Container (each
container), Pod (the pod's totals) and PersistentVolumeClaim (``spec.resources.requests``),
refused with kube's messages (403, several joined as a list)::

    minimum cpu usage per Container is 100m, but request is 50m

LimitRanges are read from the loopback informer (:mod:`kplane.plugins.core.lookup`)."""

from __future__ import annotations

from fractions import Fraction
from typing import Any

from kplane.api import AdmissionRequest, Informer, Operation, Registry, deny, quantity
from kplane.plugins.core import lookup
from kplane.plugins.core.quota.usage import pod_requests_and_limits
from kplane.plugins.core.types import Container, Pod, ResourceRequirements
from kplane.plugins.core.volumes import PersistentVolumeClaim

Obj = dict[str, Any]
ANNOTATION = "kubernetes.io/limit-ranger"


def _parsed(values: dict[str, Any] | None) -> dict[str, quantity.Quantity]:
    found = {}
    for name, value in (values or {}).items():
        try:
            found[name] = quantity.parse(value)
        except ValueError:
            continue
    return found


def _comparable(*values: quantity.Quantity | None) -> list[int]:
    """``requestLimitEnforcedValues``: milli-units when every value fits them, else whole units."""
    present = [v for v in values if v is not None]
    milli = all(v.int_value() <= 9223372036854775 for v in present)  # MaxMilliValue
    return [0 if v is None else (v.milli_value() if milli else v.int_value()) for v in values]


def _min(kind: str, name: str, enforced: quantity.Quantity, requests: dict[str, quantity.Quantity],
         limits: dict[str, quantity.Quantity]) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, wanted = _comparable(req, lim, enforced)
    if req is None:
        return f"minimum {name} usage per {kind} is {enforced}.  No request is specified"
    if observed_req < wanted:
        return f"minimum {name} usage per {kind} is {enforced}, but request is {req}"
    if lim is not None and observed_lim < wanted:
        return f"minimum {name} usage per {kind} is {enforced}, but limit is {lim}"
    return None


def _max(kind: str, name: str, enforced: quantity.Quantity, requests: dict[str, quantity.Quantity],
         limits: dict[str, quantity.Quantity]) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim, wanted = _comparable(req, lim, enforced)
    if lim is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No limit is specified"
    if observed_lim > wanted:
        return f"maximum {name} usage per {kind} is {enforced}, but limit is {lim}"
    if req is not None and observed_req > wanted:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _max_request(kind: str, name: str, enforced: quantity.Quantity, requests: dict[str, quantity.Quantity]) -> str | None:
    """A claim has requests only: its max bounds them."""
    req = requests.get(name)
    observed_req, wanted = _comparable(req, enforced)
    if req is None:
        return f"maximum {name} usage per {kind} is {enforced}.  No request is specified"
    if observed_req > wanted:
        return f"maximum {name} usage per {kind} is {enforced}, but request is {req}"
    return None


def _ratio(kind: str, name: str, enforced: quantity.Quantity, requests: dict[str, quantity.Quantity],
           limits: dict[str, quantity.Quantity]) -> str | None:
    req, lim = requests.get(name), limits.get(name)
    observed_req, observed_lim = _comparable(req, lim)
    if req is None or observed_req == 0:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but no request is specified or request is 0"
    if lim is None or observed_lim == 0:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but no limit is specified or limit is 0"
    observed = Fraction(observed_lim, observed_req)
    if observed > enforced.value:
        return f"{name} max limit to request ratio per {kind} is {enforced}, but provided ratio is {float(observed):f}"
    return None


def _bounds(item: Obj, kind: str, requests: dict[str, quantity.Quantity], limits: dict[str, quantity.Quantity]) -> list[str]:
    problems = [_min(kind, name, value, requests, limits) for name, value in _parsed(item.get("min")).items()]
    problems += [_max(kind, name, value, requests, limits) for name, value in _parsed(item.get("max")).items()]
    problems += [_ratio(kind, name, value, requests, limits) for name, value in _parsed(item.get("maxLimitRequestRatio")).items()]
    return [p for p in problems if p]


def _container_wire(container: Container) -> dict[str, dict[str, quantity.Quantity]]:
    resources = container.resources or ResourceRequirements()
    return {"requests": _parsed(resources.requests), "limits": _parsed(resources.limits)}


def _limits(limit_ranges: list[Obj]) -> list[Obj]:
    return [item for lr in sorted(limit_ranges, key=lambda o: o["metadata"]["name"])
            for item in (lr.get("spec") or {}).get("limits") or () if isinstance(item, dict)]


def _set_defaults(pod: Pod, items: list[Obj]) -> None:
    """``mergePodResourceRequirements``: what a container lacks, from the Container defaults."""
    requests: dict[str, Any] = {}
    limits: dict[str, Any] = {}
    for item in items:
        if item.get("type") == "Container":
            requests.update(item.get("defaultRequest") or {})
            limits.update(item.get("default") or {})
    if not requests and not limits:
        return
    notes = []
    for prefix, containers in (("container", pod.spec.containers or []), ("init container", pod.spec.init_containers or [])):
        for container in containers:
            resources = container.resources = container.resources or ResourceRequirements()
            set_limits = sorted(name for name in limits if name not in (resources.limits or {}))
            set_requests = sorted(name for name in requests if name not in (resources.requests or {}))
            if set_limits:
                resources.limits = {**(resources.limits or {}), **{name: limits[name] for name in set_limits}}
            if set_requests:
                resources.requests = {**(resources.requests or {}), **{name: requests[name] for name in set_requests}}
            if set_requests:
                notes.append(f"{', '.join(set_requests)} request for {prefix} {container.name}")
            if set_limits:
                notes.append(f"{', '.join(set_limits)} limit for {prefix} {container.name}")
    if notes:
        pod.metadata.annotations = {**(pod.metadata.annotations or {}), ANNOTATION: "LimitRanger plugin set: " + "; ".join(notes)}


def _pod_problems(pod: Pod, wire: Obj, items: list[Obj]) -> list[str]:
    problems: list[str] = []
    for item in items:
        if item.get("type") == "Container":
            for container in (pod.spec.containers or []) + (pod.spec.init_containers or []):
                resources = _container_wire(container)
                problems += _bounds(item, "Container", resources["requests"], resources["limits"])
        elif item.get("type") == "Pod":
            requests, limits = pod_requests_and_limits(wire)
            problems += _bounds(item, "Pod", {n: quantity.Quantity(v) for n, v in requests.items()},
                                {n: quantity.Quantity(v) for n, v in limits.items()})
    return problems


def _claim_problems(claim: PersistentVolumeClaim, items: list[Obj]) -> list[str]:
    requests = _parsed(claim.spec.resources.requests)
    problems: list[str | None] = []
    for item in items:
        if item.get("type") == "PersistentVolumeClaim":
            problems += [_min("PersistentVolumeClaim", n, v, requests, {}) for n, v in _parsed(item.get("min")).items()]
            problems += [_max_request("PersistentVolumeClaim", n, v, requests) for n, v in _parsed(item.get("max")).items()]
    return [p for p in problems if p]


def _refuse(request: AdmissionRequest, problems: list[str]) -> None:
    if problems:  # utilerrors.NewAggregate: one message as it is, several as a list
        raise deny(request, problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]")


class LimitRanger:
    """Both halves share one reader of LimitRanges (``limit_ranges``: the loopback informer)."""

    def __init__(self, registry: Registry, limit_ranges: Informer | None) -> None:
        self.registry = registry
        self.limit_ranges = limit_ranges

    def _applies(self, request: AdmissionRequest) -> str:
        """``SupportsAttributes``: pods on create, claims on create and update; objects being deleted are let be."""
        rt = request.resource
        if rt.group != "" or request.subresource:
            return ""
        if request.old is not None and request.old.metadata.deletion_timestamp:
            return ""
        if rt.plural == "pods" and request.operation == Operation.CREATE and isinstance(request.obj, Pod):
            return "pods"
        if (rt.plural == "persistentvolumeclaims" and request.operation in (Operation.CREATE, Operation.UPDATE)
                and isinstance(request.obj, PersistentVolumeClaim)):
            return "persistentvolumeclaims"
        return ""

    async def _items(self, request: AdmissionRequest) -> list[Obj]:
        return _limits(await lookup.objects(self.registry, self.limit_ranges, "", "limitranges", request.namespace))

    async def mutate(self, request: AdmissionRequest) -> None:
        if self._applies(request) == "pods":
            items = await self._items(request)
            if items:
                _set_defaults(request.obj, items)

    async def validate(self, request: AdmissionRequest) -> None:
        kind = self._applies(request)
        if not kind:
            return
        items = await self._items(request)
        if not items:
            return
        if kind == "pods":
            wire = request.resource.encode(request.obj, request.resource.storage_version)
            _refuse(request, _pod_problems(request.obj, wire, items))
        else:
            _refuse(request, _claim_problems(request.obj, items))
