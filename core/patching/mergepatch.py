"""JSON merge patch (RFC 7386, ``application/merge-patch+json``) over decoded JSON values.

``null`` deletes, objects merge, anything else replaces. Only the maps on the patch's paths are
rebuilt: the result shares untouched sub-objects with ``doc``; treat both as read-only.
"""

from __future__ import annotations

from typing import Any

from kplane.core.patching.errors import PatchError


def apply_merge_patch(doc: Any, patch: Any) -> Any:
    """Apply an RFC 7386 merge patch: null deletes, objects merge, anything else replaces.

    As kube-apiserver (evanphx/json-patch ``MergePatch``): a patch document that is ``null`` or a
    scalar is refused with 400 "Invalid JSON Patch"; an array replaces the whole document (which
    then fails to decode as an object), with its ``null`` items left out.
    """
    if patch is None or not isinstance(patch, (dict, list)):
        raise PatchError("Invalid JSON Patch", 400)
    if isinstance(patch, list):
        return [item for item in patch if item is not None]
    return _merge_objects(doc, patch)


def _merge_objects(doc: Any, patch: dict[str, Any]) -> Any:
    result = dict(doc) if isinstance(doc, dict) else {}
    for key, value in patch.items():
        if value is None:
            result.pop(key, None)
        elif isinstance(value, dict):
            result[key] = _merge_objects(result.get(key), value)
        else:
            result[key] = value
    return result
