"""Query parameters, parsed the way kube-apiserver parses them.

Booleans are case-insensitive (the Python client sends ``watch=True``); unknown parameters are
ignored; malformed values are 400 BadRequest.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

from multidict import MultiMapping

from core.meta import errors
from core.meta.selectors import parse_field_selector, parse_label_selector
from core.registry.options import DeleteOptions, ListOptions, WatchOptions
from core.runtime.scheme import IGNORE, STRICT, WARN

FIELD_VALIDATION = (IGNORE, WARN, STRICT)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1
_INT = re.compile(r"[+-]?[0-9]+", re.ASCII)


def flag(query: Mapping[str, str], name: str) -> bool:
    value = query.get(name)
    if value is None:
        return False
    lowered = value.lower()
    if lowered in ("true", "1", ""):
        return True
    if lowered in ("false", "0"):
        return False
    raise errors.bad_request(f'invalid boolean value for {name}: "{value}"')


def integer(query: Mapping[str, str], name: str, default: int = 0) -> int:
    """An int64 parameter, read as Go's ``strconv.ParseInt(value, 10, 64)`` reads it: an optional
    sign and ASCII digits (Python's ``int`` would also take ``1_000``, spaces and other scripts'
    digits), and nothing outside int64."""
    value = query.get(name)
    if value is None or value == "":
        return default
    if not _INT.fullmatch(value):
        raise errors.bad_request(f'invalid value for {name}: "{value}" is not an integer')
    number = int(value)
    if not INT64_MIN <= number <= INT64_MAX:
        raise errors.bad_request(f'invalid value for {name}: "{value}" is out of range for a 64-bit integer')
    return number


def dry_run(query: MultiMapping[str]) -> bool:
    values = query.getall("dryRun", [])
    for value in values:
        if value not in ("All", ""):
            raise errors.invalid_object(
                "DryRun", "", "", [errors.not_supported("dryRun", value, ["All"])]
            )
    return any(v == "All" for v in values)


def field_validation(query: Mapping[str, str]) -> str:
    """``fieldValidation``: Warn when absent, as kube-apiserver (kubectl sends Strict itself;
    clients such as kopf send nothing and expect unknown fields to be dropped with a warning)."""
    value = query.get("fieldValidation", "") or WARN
    for known in FIELD_VALIDATION:
        if value.lower() == known.lower():
            return known
    raise errors.bad_request(
        f'fieldValidation parameter unsupported: "{value}" (supported values: Ignore, Warn, Strict)'
    )


def list_options(query: Mapping[str, str]) -> ListOptions:
    limit = integer(query, "limit")
    return ListOptions(
        label_selector=parse_label_selector(query.get("labelSelector", "")) if query.get("labelSelector") else None,
        field_selector=parse_field_selector(query.get("fieldSelector", "")) if query.get("fieldSelector") else None,
        limit=min(max(limit, 0), INT64_MAX - 1),  # storages read one past the limit to see if more follow
        continue_=query.get("continue", ""),
        resource_version=query.get("resourceVersion", ""),
        resource_version_match=query.get("resourceVersionMatch", ""),
    )


def watch_options(query: Mapping[str, str]) -> WatchOptions:
    opts = list_options(query)
    return WatchOptions(
        label_selector=opts.label_selector,
        field_selector=opts.field_selector,
        resource_version=opts.resource_version,
        allow_bookmarks=flag(query, "allowWatchBookmarks"),
    )


def delete_options(query: Mapping[str, str], body: object) -> DeleteOptions:
    """DeleteOptions from the body (kubectl) and the query (the Python client); query wins."""
    opts = DeleteOptions()
    if isinstance(body, dict):
        if body.get("kind") not in (None, "DeleteOptions"):
            raise errors.bad_request(f'the body of a delete must be DeleteOptions, not {body.get("kind")}')
        opts.propagation_policy = body.get("propagationPolicy") or ""
        preconditions = body.get("preconditions") or {}
        opts.precondition_uid = preconditions.get("uid") or ""
        opts.precondition_resource_version = preconditions.get("resourceVersion") or ""
        if body.get("orphanDependents") is True and not opts.propagation_policy:
            opts.propagation_policy = "Orphan"
        opts.grace_period_seconds = body.get("gracePeriodSeconds")
    if query.get("propagationPolicy"):
        opts.propagation_policy = query["propagationPolicy"]
    if query.get("gracePeriodSeconds"):
        opts.grace_period_seconds = integer(query, "gracePeriodSeconds")
    return opts
