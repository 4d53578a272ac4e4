"""Query parameters, parsed the way kube-apiserver parses them.

Booleans are case-insensitive (the Python client sends ``watch=True``); unknown parameters are
ignored; malformed values are 400 BadRequest.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from dataclasses import dataclass
from typing import Any

from multidict import MultiMapping

from kplane.core.managedfields.fieldmanager import FIELD_MANAGER_MAX_LENGTH
from kplane.core.meta import deleteoptions, errors
from kplane.core.meta.deleteoptions import DeleteOptions, dry_run_problems
from kplane.core.meta.selectors import parse_field_selector, parse_label_selector
from kplane.core.registry.options import ListOptions, WatchOptions
from kplane.core.runtime.fields import INT64_MAX, INT64_MIN
from kplane.core.runtime.scheme import IGNORE, STRICT, WARN

FIELD_VALIDATION = (IGNORE, WARN, STRICT)
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


CREATE_OPTIONS, UPDATE_OPTIONS, PATCH_OPTIONS = "CreateOptions", "UpdateOptions", "PatchOptions"


@dataclass(frozen=True, slots=True)
class WriteOptions:
    """The CreateOptions, UpdateOptions or PatchOptions of a write, from its query."""

    dry_run: bool
    field_manager: str
    field_validation: str  # Ignore, Warn or Strict; Warn when not given
    force: bool = False


def write_options(query: MultiMapping[str], kind: str, *, apply: bool = False) -> WriteOptions:
    """The options of a create, update or patch (of a resource or any subresource), validated as
    kube-apiserver's ``ValidateCreateOptions``/``ValidateUpdateOptions``/``ValidatePatchOptions``
    validate them before the body is decoded: every problem is a cause of one 422 Invalid
    ``<kind>.meta.k8s.io``, so a request with bad options stores nothing.

    ``fieldValidation`` absent means Warn, as kube-apiserver (kubectl sends Strict itself; clients
    such as kopf send nothing and expect unknown fields to be dropped with a warning). ``apply``:
    a PATCH of type apply-patch, which needs a fieldManager and alone may say ``force``.
    """
    problems: list[errors.FieldError] = []
    field_manager = query.get("fieldManager", "")
    if kind == PATCH_OPTIONS:
        if not apply and "force" in query:  # Go's *bool: force=false is "specified" too
            problems.append(errors.forbidden("force", "may not be specified for non-apply patch"))
        elif apply and not field_manager:
            problems.append(errors.required("fieldManager", "is required for apply patch"))
    problems += field_manager_errors("fieldManager", field_manager)
    dry_run = query.getall("dryRun", [])
    problems += dry_run_problems(dry_run)
    validation = query.get("fieldValidation", "")
    if validation not in ("", *FIELD_VALIDATION):
        problems.append(errors.not_supported("fieldValidation", validation, ["", *sorted(FIELD_VALIDATION)]))
    if problems:
        raise errors.invalid_object(kind, "meta.k8s.io", "", problems)
    return WriteOptions(
        dry_run=bool(dry_run),
        field_manager=field_manager,
        field_validation=validation or WARN,
        force=kind == PATCH_OPTIONS and flag(query, "force"),
    )


def field_manager_errors(path: str, manager: str) -> list[errors.FieldError]:
    """``ValidateFieldManager``: at most 128 bytes, every character printable (Go's
    ``unicode.IsPrint``: letters, marks, numbers, punctuation, symbols and the ASCII space, which
    is what Python's ``str.isprintable`` keeps); positions are byte offsets, as Go ranges a string."""
    found = []
    if len(manager.encode(errors="surrogatepass")) > FIELD_MANAGER_MAX_LENGTH:
        found.append(errors.too_long(path, manager, FIELD_MANAGER_MAX_LENGTH))
    offset = 0
    for char in manager:
        if not char.isprintable():
            found.append(errors.invalid(path, manager, f"invalid character U+{ord(char):04X} (at position {offset})"))
        offset += len(char.encode(errors="surrogatepass"))
    return found


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


def delete_options(query: MultiMapping[str], body: object, api_versions: Collection[str]) -> DeleteOptions:
    """DeleteOptions as kube-apiserver reads them: from the body when there is one (kubectl),
    else from the query (the Python client); then validated, once, so a bad request deletes nothing.

    One deliberate difference: ``?dryRun=All`` is honoured even beside a body, which
    kube-apiserver would ignore. A dry run asked for anywhere must never delete for real.
    ``api_versions``: the apiVersions a body may name: :data:`deleteoptions.API_VERSIONS` and the
    resource's own group/versions (Kubernetes registers DeleteOptions in every group).
    """
    query_dry_run = [v for v in query.getall("dryRun", []) if v]
    if body is None:
        body = {key: _query_value(query, key, kind) for key, kind in deleteoptions.QUERY.items()}
    opts = deleteoptions.decode(body, api_versions)
    opts.dry_run += [v for v in query_dry_run if v not in opts.dry_run]
    opts.check()
    return opts


def _query_value(query: MultiMapping[str], key: str, kind: Any) -> object:
    """One DeleteOptions query parameter as the JSON value a body would give (None: not set)."""
    if kind is int:
        return integer(query, key) if query.get(key) else None
    if kind is bool:
        return flag(query, key) if key in query else None
    if kind is str:
        return query.get(key)
    return [v for v in query.getall(key, []) if v]  # list[str], the one other type of a query option
