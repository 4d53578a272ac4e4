"""core/v1 LimitRange and ResourceQuota: internal types, validation and behaviour
(``pkg/registry/core/{limitrange,resourcequota}``, ``ValidateLimitRange``, ``ValidateResourceQuota``).

A LimitRange gives a namespace's containers default requests and limits and bounds what pods
and claims may ask for (enforced by the LimitRanger admission, :mod:`.limitranger`); a
ResourceQuota caps what a namespace may hold in total (the ResourceQuota admission,
:mod:`.quota.admission`, and the resource-quota controller, which keeps ``status.used``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import FieldError, ObjectMeta, RequestContext, Strategy, duplicate, forbidden, invalid, not_supported, quantity, required
from kplane.plugins.core import printers

ResourceList = dict[str, Any]
LIMIT_TYPES = ["Pod", "Container", "PersistentVolumeClaim"]
SCOPES = ["Terminating", "NotTerminating", "BestEffort", "NotBestEffort", "PriorityClass", "CrossNamespacePodAffinity"]
SCOPE_OPERATORS = ["In", "NotIn", "Exists", "DoesNotExist"]
NON_NEGATIVE = "must be greater than or equal to 0"


@dataclass(slots=True)
class LimitRangeItem:
    type: str = ""
    max: ResourceList | None = None
    min: ResourceList | None = None
    default: ResourceList | None = None
    default_request: ResourceList | None = None
    max_limit_request_ratio: ResourceList | None = None


@dataclass(slots=True)
class LimitRangeSpec:
    limits: list[LimitRangeItem] | None = None


@dataclass(slots=True)
class LimitRange:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: LimitRangeSpec = field(default_factory=LimitRangeSpec)


@dataclass(slots=True)
class ScopedResourceSelectorRequirement:
    scope_name: str = ""
    operator: str = ""
    values: list[str] | None = None


@dataclass(slots=True)
class ScopeSelector:
    match_expressions: list[ScopedResourceSelectorRequirement] | None = None


@dataclass(slots=True)
class ResourceQuotaSpec:
    hard: ResourceList | None = None
    scopes: list[str] | None = None
    scope_selector: ScopeSelector | None = None


@dataclass(slots=True)
class ResourceQuotaStatus:
    hard: ResourceList | None = None
    used: ResourceList | None = None


@dataclass(slots=True)
class ResourceQuota:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ResourceQuotaSpec = field(default_factory=ResourceQuotaSpec)
    status: ResourceQuotaStatus = field(default_factory=ResourceQuotaStatus)


# -- validation --------------------------------------------------------------------------------
def _quantities(values: ResourceList | None, path: str) -> tuple[dict[str, quantity.Quantity], list[FieldError]]:
    """Each value parsed, and not negative (``ValidateResourceQuantityValue``)."""
    parsed: dict[str, quantity.Quantity] = {}
    errs: list[FieldError] = []
    for name, value in (values or {}).items():
        try:
            parsed[name] = quantity.parse(value)
        except ValueError as err:
            errs.append(invalid(f"{path}[{name}]", value, str(err)))
            continue
        if parsed[name].value < 0:
            errs.append(invalid(f"{path}[{name}]", value, NON_NEGATIVE))
    return parsed, errs


def _above(low: dict[str, quantity.Quantity], high: dict[str, quantity.Quantity], path: str, what: str) -> list[FieldError]:
    """For each resource in both, ``low`` may not exceed ``high``; the message names them as kube's."""
    low_name, high_name = what.split("|")
    return [invalid(path + f"[{name}]", str(low[name]), f"{low_name} value {low[name]} is greater than {high_name} value {high[name]}")
            for name in sorted(low) if name in high and low[name] > high[name]]


def validate_limit_range(lr: LimitRange) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, item in enumerate(lr.spec.limits or ()):
        at = f"spec.limits[{i}]"
        if not item.type:
            errs.append(required(f"{at}.type"))
        elif item.type in seen:
            errs.append(duplicate(f"{at}.type", item.type))
        seen.add(item.type)
        mins, more = _quantities(item.min, f"{at}.min")
        maxes, more2 = _quantities(item.max, f"{at}.max")
        defaults, more3 = _quantities(item.default, f"{at}.default")
        requests, more4 = _quantities(item.default_request, f"{at}.defaultRequest")
        ratios, more5 = _quantities(item.max_limit_request_ratio, f"{at}.maxLimitRequestRatio")
        errs += more + more2 + more3 + more4 + more5
        if item.type == "Pod":
            if item.default:
                errs.append(forbidden(f"{at}.default", "may not be specified when `type` is 'Pod'"))
            if item.default_request:
                errs.append(forbidden(f"{at}.defaultRequest", "may not be specified when `type` is 'Pod'"))
        if item.type == "PersistentVolumeClaim" and "storage" not in mins and "storage" not in maxes:
            errs.append(required(f"{at}.limits", "either minimum or maximum storage value is required, but neither was provided"))
        errs += _above(mins, maxes, f"{at}.min", "min|max")
        errs += _above(requests, defaults, f"{at}.defaultRequest", "default request|default limit")
        errs += _above(mins, requests, f"{at}.defaultRequest", "min|default request")
        errs += _above(requests, maxes, f"{at}.defaultRequest", "default request|max")
        errs += _above(mins, defaults, f"{at}.default", "min|default")
        errs += _above(defaults, maxes, f"{at}.default", "default|max")
        for name, ratio in sorted(ratios.items()):
            if ratio.value < 1:
                errs.append(invalid(f"{at}.maxLimitRequestRatio[{name}]", str(ratio), f"ratio {ratio} is less than 1"))
            if name in mins and name in maxes and mins[name].value > 0 and ratio.value > maxes[name].value / mins[name].value:
                errs.append(invalid(f"{at}.maxLimitRequestRatio[{name}]", str(ratio),
                                    f"ratio {ratio} is greater than max/min = {float(maxes[name].value / mins[name].value):f}"))
    return errs


#: Resources a quota counts in whole objects: their hard values must be integers.
INTEGER_RESOURCES = frozenset({"pods", "services", "replicationcontrollers", "resourcequotas", "secrets", "configmaps",
                               "persistentvolumeclaims", "services.nodeports", "services.loadbalancers"})


def validate_resource_quota(rq: ResourceQuota) -> list[FieldError]:
    hard, errs = _quantities(rq.spec.hard, "spec.hard")
    for name, value in sorted(hard.items()):
        if (name in INTEGER_RESOURCES or name.startswith("count/")) and value.value.denominator != 1:
            errs.append(invalid(f"spec.hard[{name}]", str(value), "must be an integer"))
    scopes = list(rq.spec.scopes or [])
    for i, scope in enumerate(scopes):
        if scope not in SCOPES:
            errs.append(not_supported(f"spec.scopes[{i}]", scope, SCOPES))
    selector = rq.spec.scope_selector
    for i, expr in enumerate((selector.match_expressions if selector else None) or ()):
        at = f"spec.scopeSelector.matchExpressions[{i}]"
        if expr.scope_name not in SCOPES:
            errs.append(not_supported(f"{at}.scopeName", expr.scope_name, SCOPES))
        if expr.operator not in SCOPE_OPERATORS:
            errs.append(not_supported(f"{at}.operator", expr.operator, SCOPE_OPERATORS))
        elif expr.operator in ("In", "NotIn") and not expr.values:
            errs.append(required(f"{at}.values", "must be at least one value when `operator` is 'In' or 'NotIn' for scope selector"))
        elif expr.operator in ("Exists", "DoesNotExist") and expr.values:
            errs.append(invalid(f"{at}.values", expr.values, "must be no value when `operator` is 'Exist' or 'DoesNotExist' for scope selector"))
        scopes.append(expr.scope_name)
    for pair in (("Terminating", "NotTerminating"), ("BestEffort", "NotBestEffort")):
        if set(pair) <= set(scopes):
            errs.append(invalid("spec.scopeSelector" if selector else "spec.scopes", scopes, f"conflicting scopes: {pair[0]}, {pair[1]}"))
    return errs


# -- strategies --------------------------------------------------------------------------------
class LimitRangeStrategy(Strategy):
    columns = printers.LIMIT_RANGE_COLUMNS

    def validate(self, ctx: RequestContext, obj: LimitRange) -> list[FieldError]:
        return validate_limit_range(obj)


class ResourceQuotaStrategy(Strategy):
    """Create clears the status; an update keeps it (the controller and the admission write it)."""

    columns = printers.RESOURCE_QUOTA_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: ResourceQuota) -> None:
        obj.status = ResourceQuotaStatus()

    def prepare_for_update(self, ctx: RequestContext, obj: ResourceQuota, old: ResourceQuota) -> None:
        obj.status = old.status

    def validate(self, ctx: RequestContext, obj: ResourceQuota) -> list[FieldError]:
        return validate_resource_quota(obj)


class ResourceQuotaStatusStrategy(Strategy):
    """``/status``: the spec stays as stored; hard and used are quantities, never negative."""

    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: ResourceQuota, old: ResourceQuota) -> None:
        obj.spec = old.spec

    def validate_update(self, ctx: RequestContext, obj: ResourceQuota, old: ResourceQuota) -> list[FieldError]:
        return _quantities(obj.status.hard, "status.hard")[1] + _quantities(obj.status.used, "status.used")[1]
