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


def merge_configuration(obj: dict[str, Any], config: dict[str, Any], shape: Shape) -> dict[str, Any]:
    """``obj`` (a wire dict of the kind ``shape`` describes) with ``config`` merged in.

    Raises ApplyConfigurationError for a configuration with bad list keys or atomic values."""
    root = struct_type(shape)
    errors: list[str] = []
    owned: Node = {}
    to_set(config, root, [], owned, errors)
    if errors:
        raise ApplyConfigurationError("failed to convert patch object to typed object: " + "; ".join(errors))
    atomics: list[str] = []
    _find_atomics(config, root, "", atomics)
    if atomics:
        raise ApplyConfigurationError(
            "invalid ApplyConfiguration: may not mutate atomic arrays, maps or structs: " + ", ".join(atomics))
    try:
        merged = merge(obj, config, root, [])
    except TypedError as err:
        raise ApplyConfigurationError(f"failed to merge patch: {err}") from None
    return strip_nulls(merged, config) if has_null(config) else merged


def _find_atomics(v: Any, t: FieldType, path: str, out: list[str]) -> None:
    """The paths (``.spec.args``) of lists, maps and structs the schema makes atomic."""
    if isinstance(v, dict):
        if t.kind == ATOMIC:
            out.append(path)
            return
        if t.kind not in (STRUCT, MAP):
            return
        for key, child in v.items():
            _find_atomics(child, t.member(key), f"{path}.{key}", out)
    elif isinstance(v, list):
        if t.kind == ATOMIC:
            out.append(path)
            return
        if t.kind not in (ASSOC, SET):
            return
        for i, item in enumerate(v):
            _find_atomics(item, t.item, f"{path}[{i}]", out)
