"""Parsed request options the Store acts on: ``metav1.ListOptions`` (and a watch's); DeleteOptions
are :mod:`kplane.core.meta.deleteoptions`."""

from __future__ import annotations

from dataclasses import dataclass

from kplane.core.meta.selectors import FieldSelectorExpr, LabelSelectorExpr


@dataclass(slots=True)
class ListOptions:
    """A list's query, parsed: selectors, paging and which resourceVersion to read at."""

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
