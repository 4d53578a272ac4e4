"""core/v1 LimitRange and ResourceQuota: wire schemas and defaulting (``k8s.io/api/core/v1``,
``SetDefaults_LimitRangeItem``)."""

from __future__ import annotations

from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields

_META = ("Standard object metadata: name, namespace, labels, annotations, and what the server records about "
         "the object.")


def _resources(description: str) -> Any:
    return fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": description})


class LimitRangeItemSchema(Schema):
    """The bounds and defaults of one kind of consumer."""

    type = fields.Str(metadata={"omitempty": False, "description": "What is bounded: Container, Pod or PersistentVolumeClaim."})
    max = _resources("The most of each resource one consumer of this type may ask for (its limit).")
    min = _resources("The least of each resource one consumer of this type must ask for (its request).")
    default = _resources("The limits a container without one gets. Defaults to max.")
    default_request = _resources("The requests a container without one gets. Defaults to default, then max.")
    max_limit_request_ratio = _resources("The largest limit-to-request ratio allowed, per resource.")


class LimitRangeSpecSchema(Schema):
    """The limits a namespace's consumers must keep."""

    limits = fields.List(fields.Nested(LimitRangeItemSchema), metadata={"list_type": "atomic", "description": (
        "One entry per type of consumer."
    )})


class LimitRangeSchema(Schema):
    """A LimitRange bounds the resources each Pod, container or claim of a namespace may ask for, and gives
    containers that ask for nothing default requests and limits.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(LimitRangeSpecSchema, metadata={"description": "The limits enforced."})


class ScopedResourceSelectorRequirementSchema(Schema):
    """A condition on one scope."""

    scope_name = fields.Str(metadata={"omitempty": False, "description": (
        "The scope: Terminating, NotTerminating, BestEffort, NotBestEffort, PriorityClass or CrossNamespacePodAffinity."
    )})
    operator = fields.Str(metadata={"omitempty": False, "description": "In, NotIn, Exists or DoesNotExist."})
    values = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "The values for In and NotIn (PriorityClass names)."
    )})


class ScopeSelectorSchema(Schema):
    """Scopes by expressions, all of which must hold."""

    match_expressions = fields.List(fields.Nested(ScopedResourceSelectorRequirementSchema), metadata={
        "list_type": "atomic", "description": "The conditions, ANDed."})


class ResourceQuotaSpecSchema(Schema):
    """What the quota caps."""

    hard = _resources("The most of each named resource the namespace may hold, such as pods: 10 or requests.cpu: 4.")
    scopes = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "Which objects the quota counts; all must match. Unset: every object."
    )})
    scope_selector = fields.Nested(ScopeSelectorSchema, metadata={"pointer": True, "description": (
        "Which objects the quota counts, by expressions on scopes."
    )})


class ResourceQuotaStatusSchema(Schema):
    """What the namespace holds, written by the quota controller and the quota admission."""

    hard = _resources("The enforced hard limits.")
    used = _resources("What the namespace uses now, of each resource in hard.")


class ResourceQuotaSchema(Schema):
    """A ResourceQuota caps the total resources a namespace may consume and the number of objects of each kind
    it may hold; requests that would exceed it are refused.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(ResourceQuotaSpecSchema, metadata={"description": "What the quota caps."})
    status = fields.Nested(ResourceQuotaStatusSchema, metadata={"description": "What the namespace uses now."})


def default_limit_range(lr: dict[str, Any]) -> None:
    """For containers, a missing default limit is the max; a missing default request the default
    limit, else the min."""
    for item in (lr.get("spec") or {}).get("limits") or ():
        if not isinstance(item, dict) or item.get("type") != "Container":
            continue
        default = dict(item.get("default") or {})
        request = dict(item.get("default_request") or {})
        for name, value in (item.get("max") or {}).items():
            default.setdefault(name, value)
        for name, value in [*default.items(), *(item.get("min") or {}).items()]:
            request.setdefault(name, value)
        item["default"], item["default_request"] = default or None, request or None
