"""An apply configuration merged into an object without taking ownership: what a
MutatingAdmissionPolicy's ``ApplyConfiguration`` mutation does (kube's
``patch.ApplyStructuredMergeDiff``).

The merge is server-side apply's (associative lists by key, sets by value, maps and structs
field by field, scalars replaced) but nothing is owned and nothing is pruned. Atomic lists, maps
and structs are refused, as kube refuses them: replacing one whole would silently drop the
fields a policy did not mention.
"""

from __future__ import annotations

from typing import Any

from kplane.core.managedfields.fieldpaths import TypedError
from kplane.core.managedfields.fieldsets import Node
from kplane.core.managedfields.fieldtypes import ASSOC, ATOMIC, MAP, SET, STRUCT, FieldType, struct_type
from kplane.core.managedfields.merge import has_null, merge, strip_nulls, to_set
from kplane.core.runtime.schema import Shape


class ApplyConfigurationError(Exception):
    """A configuration that cannot be merged; the message is kube's wording."""


def merge_configuration(obj: dict[str, Any], config: dict[str, Any], shape: Shape, *,
                        declared_only: bool = True) -> dict[str, Any]:
    """``obj`` (a wire dict of the kind ``shape`` describes) with ``config`` merged in.

    Raises ApplyConfigurationError for a configuration with bad list keys, atomic values, or
    (``declared_only``: the schema declares every field, as a built-in kind's does, not a
    custom resource's that may keep unknown fields) fields the schema does not declare."""
    root = struct_type(shape)
    errors: list[str] = []
    owned: Node = {}
    to_set(config, root, [], owned, errors)
    if errors:
        raise ApplyConfigurationError("failed to convert patch object to typed object: " + "; ".join(errors))
    undeclared: list[str] = []
    atomics: list[str] = []
    _walk(config, root, "", undeclared, atomics)
    if undeclared and declared_only:
        raise ApplyConfigurationError("failed to convert patch object to typed object: "
                                      + ", ".join(f"{path}: field not declared in schema" for path in undeclared))
    if atomics:
        raise ApplyConfigurationError(
            "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: " + ", ".join(atomics))
    try:
        merged = merge(obj, config, root, [])
    except TypedError as err:
        raise ApplyConfigurationError(f"failed to merge patch: {err}") from None
    return strip_nulls(merged, config) if has_null(config) else merged


def _walk(v: Any, t: FieldType, path: str, undeclared: list[str], atomics: list[str]) -> None:
    """The paths (``.spec.args``) of fields the schema does not declare, and of lists, maps and
    structs it makes atomic."""
    if isinstance(v, dict):
        if t.kind == ATOMIC:
            atomics.append(path)
            return
        if t.kind not in (STRUCT, MAP):
            return
        for key, child in v.items():
            if t.kind == STRUCT and t.shape is not None and key not in t.shape.by_key and not (
                    not path and key in ("apiVersion", "kind")):
                undeclared.append(f"{path}.{key}")
                continue
            _walk(child, t.member(key), f"{path}.{key}", undeclared, atomics)
    elif isinstance(v, list):
        if t.kind == ATOMIC:
            atomics.append(path)
            return
        if t.kind not in (ASSOC, SET):
            return
        for i, item in enumerate(v):
            _walk(item, t.item, f"{path}[{i}]", undeclared, atomics)
