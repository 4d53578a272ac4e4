"""The field manager: the managedFields a write stores, and server-side apply.

The public face of :mod:`kplane.core.managedfields`: the HTTP layer calls
:func:`managed_fields_after_update` for every create, PUT and patch, and :func:`apply` (after
:func:`check_apply_body`) for ``application/apply-patch+yaml``. Both are pure functions of
decoded objects, a :class:`Shape`, the manager's name and the time.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import orjson

from kplane.core.managedfields.entries import (
    PROTECTED, STRIP, STRIPPED, BadManagedFields, Entry, decode_entries, drop_empty, encode_entries, identifier_json,
    managed_fields_of, record_update,
)
from kplane.core.managedfields.fieldpaths import TypedError, one_call, path_text
from kplane.core.managedfields.fieldsets import Node, diff, intersect, iter_paths, sort_set, union
from kplane.core.managedfields.fieldtypes import empty_object, struct_type
from kplane.core.managedfields.lastapplied import UPGRADING_MANAGER, last_applied_fields, sync_last_applied
from kplane.core.managedfields.merge import (
    compare_objects, drop_paths, has_null, merge, prune, skip_tree, strip_nulls, to_set,
)
from kplane.core.meta.errors import APIError, StatusReason, bad_request
from kplane.core.runtime.gojson import go_json_type
from kplane.core.runtime.schema import Shape

__all__ = [
    "ApplyConflict",
    "Conflict",
    "apply",
    "check_apply_body",
    "conflict_error",
    "default_ignored",
    "default_manager",
    "managed_fields_after_update",
]

FIELD_MANAGER_MAX_LENGTH = 128
BEFORE_FIRST_APPLY = "before-first-apply"


def default_ignored(subresource: str) -> tuple[str, ...]:
    """Reset fields a strategy overwrites, excluded from ownership (``GetResetFields``).

    The main resource never takes ``status`` from a write, the status subresource never takes
    ``spec`` (some kinds reset more, e.g. ``metadata.labels`` on Deployment status: pass those).
    """
    if not subresource:
        return ("status",)
    return ("spec",) if subresource == "status" else ()


def default_manager(user_agent: str) -> str:
    """The manager name of a write without ``fieldManager``: the User-Agent up to its first ``/``.

    As ``prefixFromUserAgent``: unprintable characters dropped, cut at 128 bytes; an empty
    result becomes ``unknown`` (``buildManagerInfo``).
    """
    out: list[str] = []
    size = 0
    for ch in user_agent.split("/", 1)[0]:
        if not ch.isprintable():
            continue
        size += len(ch.encode())
        if size > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(ch)
    return "".join(out) or "unknown"


@one_call
def managed_fields_after_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    shape: Shape,
    *,
    manager: str,
    api_version: str,
    now: str,
    subresource: str = "",
    ignored: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """The ``metadata.managedFields`` to store for a create (``old`` None), PUT or PATCH.

    ``new`` is the object as the write produced it, with the managedFields the client sent (a
    client may rewrite them; ``[]`` or ``[{}]`` clears them). The fields this write added or
    changed become owned by ``manager``'s Update entry for ``api_version``/``subresource``
    (merged with its earlier set, time ``now``) and are taken from every other entry; removed
    fields leave every entry; entries left empty are dropped. An existing object without
    managedFields stays untracked. An empty list means: store no managedFields.
    """
    old_fields = managed_fields_of(old)
    new_fields = managed_fields_of(new)
    try:
        if subresource:
            managed = decode_entries(old_fields, True)
        elif isinstance(new_fields, list) and (not new_fields or new_fields == [{}]):
            managed = {}
        else:
            managed = {}
            if new_fields:
                try:
                    managed = decode_entries(new_fields, new_fields is old_fields or new_fields == old_fields)
                except BadManagedFields:
                    managed = {}
            if not managed:
                managed = decode_entries(old_fields, True)
    except BadManagedFields:
        managed = {}
    if not managed and old is not None:
        return []
    root = struct_type(shape)
    skip = skip_tree((*STRIPPED, *(default_ignored(subresource) if ignored is None else ignored)))
    ident = (manager or "unknown", "Update", api_version, subresource)
    try:
        record_update(managed, old if old is not None else empty_object(root), new, root, skip, ident, now)
    except TypedError:
        return list(old_fields or [])  # UpdateNoErrors: keep what was there
    return encode_entries(managed)


@dataclass(frozen=True, slots=True)
class Conflict:
    """A field of the applied configuration that another manager owns with a different value."""

    manager: str
    operation: str
    api_version: str  # set for Update managers only
    subresource: str
    field: str  # ``.spec.replicas``

    @property
    def owner(self) -> str:
        """``"kubectl-edit" using apps/v1``: how kube-apiserver names the manager (printManager)."""
        text = orjson.dumps(self.manager).decode()
        if self.subresource:
            text += f" with subresource {orjson.dumps(self.subresource).decode()}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


class ApplyConflict(Exception):
    """The apply was refused: ``conflicts`` lists every field in dispute (409 ``Conflict``)."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        super().__init__(conflict_error(conflicts).message)
        self.conflicts = conflicts

    def api_error(self) -> APIError:
        return conflict_error(self.conflicts)


def conflict_error(conflicts: Sequence[Conflict]) -> APIError:
    """The Status kube-apiserver sends for apply conflicts (``errors.NewApplyConflict``).

    Details carry only the causes (no name or kind), one ``FieldManagerConflict`` per field.
    """
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {c.owner}", "field": c.field} for c in conflicts
    ]
    if len(conflicts) == 1:
        message = f"Apply failed with 1 conflict: conflict with {conflicts[0].owner}: {conflicts[0].field}"
    else:
        by_manager: dict[str, list[Conflict]] = {}
        for c in conflicts:
            ident = (c.manager, c.operation, c.api_version, c.subresource)
            by_manager.setdefault(identifier_json(ident), []).append(c)
        lines = []
        for key in sorted(by_manager):
            group = by_manager[key]
            lines.append(f"conflicts with {group[0].owner}:")
            lines.extend(f"- {c.field}" for c in group)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return APIError(409, StatusReason.CONFLICT, message, {"causes": causes})


def _group_version(api_version: Any) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``; None when it fails (more than one ``/``)."""
    if not isinstance(api_version, str) or not api_version:
        return ("", "")
    parts = api_version.split("/")
    if len(parts) == 1:
        return ("", parts[0])
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _gvk(obj: Mapping[str, Any]) -> str:
    """``apps/v1, Kind=Deployment``: an unstructured object's GroupVersionKind as Go prints it."""
    gv = _group_version(obj.get("apiVersion"))
    kind = obj.get("kind")
    if gv is None:
        gv, kind = ("", ""), ""
    return f"{gv[0]}/{gv[1]}, Kind={kind if isinstance(kind, str) else ''}"


def check_apply_body(body: Any, api_version: str, kind: str) -> None:
    """Refuse an apply configuration kube-apiserver refuses, with its 400 BadRequest.

    The body must be an object (``null`` counts as ``{}``) of exactly the endpoint's
    apiVersion and kind, and must not set ``metadata.managedFields``.
    """
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise bad_request(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal "
            f"{go_json_type(body)} into Go value of type map[string]interface {{}}"
        )
    got = _gvk(body)
    if got != _gvk({"apiVersion": api_version, "kind": kind}):
        raise bad_request(f"invalid object type: {got}")
    entries = managed_fields_of(body)
    if isinstance(entries, list) and all(isinstance(e, dict) for e in entries):
        raise bad_request("metadata.managedFields must be nil")


def _object_text(obj: Mapping[str, Any]) -> str:
    """``default/web; apps/v1, Kind=Deployment``, as kube-apiserver names an object in errors."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; {_gvk(obj)}"


def _typed_error(what: str, obj: Mapping[str, Any], errors: list[str]) -> APIError:
    # kube-apiserver answers this with a 500; it is the client's input that is wrong, so 400.
    detail = errors[0] if len(errors) == 1 else "errors:\n  " + "\n  ".join(errors)
    message = f"failed to create typed {what} object ({_object_text(obj)}): {detail}"
    return APIError(400, StatusReason.BAD_REQUEST, message)


@one_call
def apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    shape: Shape,
    *,
    manager: str,
    force: bool,
    api_version: str,
    now: str,
    subresource: str = "",
    ignored: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Server-side apply of ``applied`` (checked by :func:`check_apply_body`) onto ``live``.

    ``live`` None creates. The result is live merged with the configuration (applied values win,
    associative lists merge by key, sets union, atomic lists and scalars are replaced); fields
    ``manager`` applied last time and no longer applies are removed unless someone else owns
    them. Changing a field another manager owns raises :class:`ApplyConflict` unless ``force``
    moves it. ``ignored`` paths (default :func:`default_ignored`) are neither merged nor owned.
    The result carries the new ``metadata.managedFields``.
    """
    root = struct_type(shape)
    ignore_paths = tuple(default_ignored(subresource) if ignored is None else ignored)
    ignore = skip_tree(ignore_paths)
    config = drop_paths(applied, ignore) if ignore else applied
    errors: list[str] = []
    new_set: Node = {}
    to_set(config, root, [], new_set, errors)
    if errors:
        raise _typed_error("patch", applied, errors)
    new_set = sort_set(new_set)
    base = live if live is not None else {}
    try:
        managed = decode_entries(managed_fields_of(live), True)
    except BadManagedFields as err:
        raise APIError(500, StatusReason.INTERNAL_ERROR, f"failed to decode managed fields: {err}") from err
    skip = skip_tree((*STRIPPED, *ignore_paths))
    ident = (manager, "Apply", "", subresource)
    try:
        if not managed and live is not None:  # start tracking what was there before
            record_update(managed, empty_object(root), live, root, skip, (BEFORE_FIRST_APPLY, "Update", api_version, subresource), now)
        last = managed.get(ident)
        merged = merge(base, config, root, [])
        if last is not None and last.set:
            owners = [e.set for i, e in managed.items() if i != ident] + [new_set, PROTECTED]
            merged = prune(merged, root, last.set, owners, False)
        c = compare_objects(base, merged, root, skip)
    except TypedError as err:
        raise _typed_error("live", base, [str(err)]) from err
    changes = union(c.modified, c.added)
    disputed = [(i, intersect(changes, e.set)) for i, e in managed.items() if i != ident]
    disputed = sorted(((i, s) for i, s in disputed if s), key=lambda p: identifier_json(p[0]))
    if disputed and not force:
        refused = disputed
        if manager == UPGRADING_MANAGER:  # lastAppliedManager: kubectl takes over its client-side apply
            allowed = last_applied_fields(base, root, api_version)
            refused = [(i, rest) for i, s in disputed if (rest := diff(s, allowed))]
        if refused:
            raise ApplyConflict(
                [Conflict(i[0], i[1], i[2], i[3], path_text(path)) for i, s in refused for path in iter_paths(s, [])]
            )
    for i, s in disputed:
        managed[i].set = diff(managed[i].set, s)
    if c.removed:
        for i, e in managed.items():
            if i != ident:
                e.set = diff(e.set, c.removed)
    time = now if c.changed() else (last.time if last is not None else None)
    managed[ident] = Entry(diff(new_set, STRIP), api_version, time)
    drop_empty(managed)
    if has_null(config):
        merged = strip_nulls(merged, config)
    entries = encode_entries(managed)
    meta = dict(merged.get("metadata") or {})
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)
    if manager == UPGRADING_MANAGER:
        sync_last_applied(meta, applied)
    return {**merged, "metadata": meta}
