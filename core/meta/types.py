"""Internal (unversioned) meta types shared by every kind: ObjectMeta, OwnerReference, LabelSelector.

Internal types carry Python names and no wire format; the schemas in :mod:`kplane.core.meta.schemas`
own the JSON shape. Timestamps stay RFC 3339 strings: nothing on the server does arithmetic on
most of them, and parsing every one on every write would only cost time.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(slots=True)
class OwnerReference:
    api_version: str = ""
    kind: str = ""
    name: str = ""
    uid: str = ""
    controller: bool | None = None
    block_owner_deletion: bool | None = None


@dataclass(slots=True)
class ManagedFieldsEntry:
    manager: str | None = None
    operation: str | None = None
    api_version: str | None = None
    time: str | None = None
    fields_type: str | None = None
    fields_v1: dict[str, Any] | None = None
    subresource: str | None = None


@dataclass(slots=True)
class ObjectMeta:
    """``metav1.ObjectMeta``, internal: what every object's ``metadata`` holds, with Python names."""

    name: str | None = None
    generate_name: str | None = None
    namespace: str | None = None
    self_link: str | None = None
    uid: str | None = None
    resource_version: str | None = None
    generation: int | None = None
    creation_timestamp: str | None = None
    deletion_timestamp: str | None = None
    deletion_grace_period_seconds: int | None = None
    labels: dict[str, str] | None = None
    annotations: dict[str, str] | None = None
    owner_references: list[OwnerReference] | None = None
    finalizers: list[str] | None = None
    managed_fields: list[ManagedFieldsEntry] | None = None


@dataclass(slots=True)
class LabelSelectorRequirement:
    """``metav1.LabelSelectorRequirement``, internal: one condition on a label."""

    key: str = ""
    operator: str = ""
    values: list[str] | None = None


@dataclass(slots=True)
class LabelSelector:
    """``metav1.LabelSelector``, internal: the selector a spec holds (match it through the selectors' helpers)."""

    match_labels: dict[str, str] | None = None
    match_expressions: list[LabelSelectorRequirement] | None = None


@dataclass(slots=True)
class Condition:
    """``metav1.Condition``: the standard condition shape for new kinds."""

    type: str = ""
    status: str = ""
    observed_generation: int | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None
