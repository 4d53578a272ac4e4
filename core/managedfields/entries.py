"""``metadata.managedFields`` entries: decoded, encoded, and changed by one Update.

Entries are keyed by manager identifier (manager, operation, apiVersion of an Update,
subresource). Entries a write did not change are written back as the very dicts that came in,
and client-written ones are validated and put in canonical form first.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import lru_cache
from typing import Any

import orjson

from kplane.core.managedfields.fieldpaths import key_pe
from kplane.core.managedfields.fieldsets import Node, diff, set_of, sort_set, union, union_node
from kplane.core.managedfields.fieldtypes import FieldType
from kplane.core.managedfields.merge import Skip, changed_set, compare_objects
from kplane.core.runtime.gojson import go_json

MAX_UPDATE_MANAGERS = 10  # capManagersManager: older Update entries are merged beyond this
ANCIENT_CHANGES = "ancient-changes"

ManagerId = tuple[str, str, str, str]  # manager, operation, apiVersion (Update only), subresource


# Never tracked (stripMetaManager); also never pruned, so an apply cannot delete system metadata.
STRIPPED = (
    "apiVersion",
    "kind",
    "metadata.name",
    "metadata.namespace",
    "metadata.creationTimestamp",
    "metadata.selfLink",
    "metadata.uid",
    "metadata.clusterName",
    "metadata.generation",
    "metadata.managedFields",
    "metadata.resourceVersion",
)
PROTECTED = set_of(STRIPPED)
STRIP = union(PROTECTED, {"f:metadata": {}})  # ``metadata`` itself is stripped too, not its children


class BadManagedFields(Exception):
    """managedFields that cannot be decoded (kube-apiserver then falls back or fails)."""


@lru_cache(maxsize=4096)
def _canonical_pe(pe: str) -> str | None:
    """A client-written path element in canonical form; None for element types SMD skips."""
    if len(pe) < 2:
        raise BadManagedFields("key must be 2 characters long:")
    if pe[1] != ":":
        raise BadManagedFields(f"missing colon: {pe}")
    kind, body = pe[0], pe[2:]
    try:
        if kind == "f":
            return pe
        if kind == "k":
            obj = orjson.loads(body)
            if not isinstance(obj, dict):
                raise BadManagedFields(f"parsing key as path element: {pe}")
            return key_pe(obj.items())
        if kind == "v":
            return "v:" + go_json(orjson.loads(body))
        if kind == "i":
            return f"i:{int(body)}"
    except (orjson.JSONDecodeError, ValueError) as err:
        raise BadManagedFields(f"parsing key as path element: {err}") from err
    return None


def _canonical(node: Any) -> Node:
    """A client-written fieldsV1 value, validated, canonicalized and sorted."""
    if not isinstance(node, dict):
        raise BadManagedFields("fieldsV1 must be a JSON object")
    out: Node = {}
    member = False
    for key, child in node.items():
        if key == ".":
            member = True
            continue
        pe = _canonical_pe(key)
        if pe is None:
            continue
        sub = _canonical(child)
        out[pe] = union_node(out[pe], sub) if pe in out else sub
    if member and out:
        out["."] = {}
    return sort_set(out)


class Entry:
    """One managedFields entry being worked on; untouched entries are written back as they came."""

    __slots__ = ("set", "api_version", "time", "raw", "_raw_set")

    def __init__(self, fset: Node, api_version: str, time: str | None, raw: dict[str, Any] | None = None) -> None:
        self.set = fset
        self.api_version = api_version
        self.time = time
        self.raw = raw
        self._raw_set = fset

    def encode(self, ident: ManagerId) -> dict[str, Any]:
        if self.raw is not None and self.set is self._raw_set:
            return self.raw
        manager, operation, _, subresource = ident
        out: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": self.api_version}
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = self.set
        if subresource:
            out["subresource"] = subresource
        return out


Managed = dict[ManagerId, Entry]


def managed_fields_of(obj: Mapping[str, Any] | None) -> Any:
    """An object's ``metadata.managedFields`` as it came (None when absent)."""
    meta = obj.get("metadata") if obj is not None else None
    return meta.get("managedFields") if isinstance(meta, dict) else None


def decode_entries(entries: Any, trusted: bool) -> Managed:
    """Decode managedFields; ``trusted`` entries were written by this library and are used as-is."""
    managed: Managed = {}
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise BadManagedFields("managedFields must be a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise BadManagedFields(f"managed fields entry {i} must be an object")
        operation = entry.get("operation")
        if operation not in ("Apply", "Update"):
            raise BadManagedFields("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion") or ""
        if not api_version:
            raise BadManagedFields("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if not fields_type:
            raise BadManagedFields(f"missing fieldsType in managed fields entry {i}")
        if fields_type != "FieldsV1":
            raise BadManagedFields(f'invalid fieldsType "{fields_type}" in managed fields entry {i}')
        fset = entry.get("fieldsV1")
        if fset is None:
            fset = {}
        elif not trusted:
            fset = _canonical(fset)
        version = api_version if operation == "Update" else ""  # an applier keeps its entry across versions
        ident = (entry.get("manager") or "", operation, version, entry.get("subresource") or "")
        managed[ident] = Entry(fset, api_version, entry.get("time"), entry if trusted else None)
    return managed


def _seconds(time: str | None) -> int:
    if not time:
        return 0
    try:
        return int(datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def encode_entries(managed: Managed) -> list[dict[str, Any]]:
    """Entries in kube-apiserver's order: Apply before Update, then by time, manager, version."""
    order = sorted(managed, key=lambda i: (i[1], _seconds(managed[i].time), i[0], managed[i].api_version, i[3]))
    return [managed[ident].encode(ident) for ident in order]


def drop_empty(managed: Managed) -> None:
    """Entries that own nothing any more are not written back."""
    for ident in [i for i, e in managed.items() if not e.set]:
        del managed[ident]


def _cap_update_managers(managed: Managed) -> None:
    """capManagersManager: fold the oldest Update entries into ``ancient-changes`` per version."""
    updaters = [i for i in managed if i[1] == "Update"]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda i: (_seconds(managed[i].time), identifier_json(i)))
    first: dict[str, ManagerId] = {}
    length = len(updaters)
    for ident in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        entry = managed[ident]
        version = entry.api_version
        if version not in first:
            first[version] = ident
            continue
        bucket = (ANCIENT_CHANGES, "Update", version, "")
        if bucket not in managed:
            managed[bucket] = managed.pop(first[version])
        managed[bucket] = Entry(union(managed[bucket].set, entry.set), version, entry.time)
        del managed[ident]
        length -= 1


def identifier_json(ident: ManagerId) -> str:
    """The manager identifier kube-apiserver keys entries by (sorting conflicts uses it)."""
    pairs = zip(("manager", "operation", "apiVersion", "subresource"), ident)
    return "{" + ",".join(f'"{name}":{go_json(value)}' for name, value in pairs if value) + "}"


def record_update(
    managed: Managed, old: dict[str, Any], new: dict[str, Any], root: FieldType, skip: Skip, ident: ManagerId, now: str
) -> None:
    """One Update operation (SMD ``Updater.Update`` behind kube-apiserver's managedFieldsUpdater)."""
    api_version = ident[2]
    if managed:
        c = compare_objects(old, new, root, skip)
        changes = union(c.modified, c.added)
        for entry in managed.values():  # the manager's own entry too: it is merged back below
            entry.set = diff(diff(entry.set, changes), c.removed)
    else:  # a create: no entry to take fields from, so what it removed does not matter
        changes = changed_set(old, new, root, skip)
    current = diff(changes, STRIP)
    if current:
        previous = managed.get(ident)
        managed[ident] = Entry(union(previous.set, current) if previous else current, api_version, now)
    drop_empty(managed)
    _cap_update_managers(managed)
