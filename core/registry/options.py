"""Parsed request options the Store acts on (``metav1.ListOptions`` and ``DeleteOptions``)."""

from __future__ import annotations

from dataclasses import dataclass

from core.meta.selectors import FieldSelectorExpr, LabelSelectorExpr


@dataclass(slots=True)
class ListOptions:
    label_selector: LabelSelectorExpr | None = None
    field_selector: FieldSelectorExpr | None = None
    limit: int = 0
    continue_: str = ""
    resource_version: str = ""
    resource_version_match: str = ""  # "", "Exact" or "NotOlderThan"


@dataclass(slots=True)
class WatchOptions:
    label_selector: LabelSelectorExpr | None = None
    field_selector: FieldSelectorExpr | None = None
    resource_version: str = ""
    allow_bookmarks: bool = False


@dataclass(slots=True)
class DeleteOptions:
    propagation_policy: str = ""  # "", "Foreground", "Background" or "Orphan"
    precondition_uid: str = ""
    precondition_resource_version: str = ""
    grace_period_seconds: int | None = None


PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")
