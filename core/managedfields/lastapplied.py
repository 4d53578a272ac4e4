"""Taking over from client-side apply: the ``last-applied-configuration`` annotation.

``kubectl apply`` without --server-side keeps its configuration in an annotation and writes as
the Update manager ``kubectl-client-side-apply``. kube-apiserver lets ``kubectl apply
--server-side`` (manager ``kubectl``, and no other) take over the fields that annotation lists
(lastAppliedManager), and keeps the annotation up to date while it is there (lastAppliedUpdater),
so that either kind of apply may follow the other.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from kplane.core.managedfields.fieldpaths import TypedError
from kplane.core.managedfields.fieldsets import Node, diff, sort_set
from kplane.core.managedfields.fieldtypes import FieldType
from kplane.core.managedfields.merge import compare_objects, to_set
from kplane.core.runtime.gojson import go_json

LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
UPGRADING_MANAGER = "kubectl"  # the one apply manager that takes over from client-side apply
ANNOTATIONS_SIZE_LIMIT = 256 * 1024  # TotalAnnotationSizeLimitB


def _annotations(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    meta = obj.get("metadata") if obj is not None else None
    found = meta.get("annotations") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def last_applied_fields(live: Mapping[str, Any], root: FieldType, api_version: str) -> Node:
    """The fields of live's last-applied configuration that still hold the values it applied.

    Nothing when the annotation is missing, is not a JSON object with a ``kind`` in
    ``api_version`` or does not fit the schema: conflicts then stand as they are.
    """
    text = _annotations(live).get(LAST_APPLIED)
    if not isinstance(text, str) or not text:
        return {}
    try:
        last = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    if not isinstance(last, dict) or not last.get("kind") or not isinstance(last["kind"], str):
        return {}
    if last.get("apiVersion") != api_version:
        return {}
    errors: list[str] = []
    fset: Node = {}
    try:
        to_set(last, root, [], fset, errors)
        c = compare_objects(last, dict(live), root, {})
    except TypedError:
        return {}
    if errors:
        return {}
    return diff(diff(diff(sort_set(fset), c.modified), c.added), c.removed)


def sync_last_applied(meta: dict[str, Any], applied: Mapping[str, Any]) -> None:
    """Rewrite a last-applied annotation the apply left in ``meta`` to the configuration just
    applied (without that annotation), as kubectl writes it: Go's JSON and a newline. Dropped
    when the annotations would outgrow their size limit."""
    annotations = _annotations({"metadata": meta})
    current = annotations.get(LAST_APPLIED)
    if not isinstance(current, str) or not current:
        return
    config = applied
    config_meta = applied.get("metadata")
    if isinstance(config_meta, dict) and "annotations" in config_meta:
        kept = {k: v for k, v in config_meta.items() if k != "annotations"}
        if isinstance(config_meta["annotations"], dict):  # Go drops anything else with the annotation
            kept["annotations"] = {k: v for k, v in config_meta["annotations"].items() if k != LAST_APPLIED}
        config = {**applied, "metadata": kept}
    updated = {**annotations, LAST_APPLIED: go_json(config) + "\n"}
    if _annotations_size(updated) > ANNOTATIONS_SIZE_LIMIT:
        del updated[LAST_APPLIED]
    meta["annotations"] = updated


def _annotations_size(annotations: Mapping[str, Any]) -> int:
    """``ValidateAnnotationsSize``: bytes of every key and value."""
    return sum(len(k.encode()) + len(v.encode() if isinstance(v, str) else b"") for k, v in annotations.items())
