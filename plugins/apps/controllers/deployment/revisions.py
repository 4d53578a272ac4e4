"""Revisions and template hashes (``deploymentutil``'s revision helpers, ``controller.ComputeHash``).

Each ReplicaSet of a Deployment runs one pod template, labelled and named by its hash; the
annotation ``deployment.kubernetes.io/revision`` numbers them, and rolling back to an earlier
template gives its ReplicaSet the next number, keeping the old ones in ``revision-history``.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from kplane.api import ownership as own, safe_encode_string
from kplane.plugins.apps.controllers.deployment.objects import Obj, annotations, created, parse_int
from kplane.plugins.apps.controllers.deployment.scaling import DESIRED_REPLICAS, MAX_REPLICAS

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NOT_COPIED = frozenset({LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS})  # to the new ReplicaSet
MAX_REVISION_HISTORY_CHARS = 2000


def pod_template_hash(template: Obj, collision_count: int | None = None) -> str:
    """``controller.ComputeHash``: FNV-1a (32 bits) of the template's canonical JSON, defaulted
    empties left out, then of the collision count; its decimal digits in the safe alphabet."""
    data = orjson.dumps(_without_empties(template), option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        data += collision_count.to_bytes(4, "little")
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return safe_encode_string(str(value))


def _without_empties(value: Any) -> Any:
    """``value`` without nulls, empty objects and empty lists at any depth: decoders fill them in
    or leave them out (``creationTimestamp: null``, ``resources: {}``), and they mean nothing."""
    if isinstance(value, dict):
        kept = {k: _without_empties(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [_without_empties(v) for v in value]
    return value


def equal_ignore_hash(a: Obj, b: Obj) -> bool:
    """``EqualIgnoreHash``: two pod templates are the same but for the pod-template-hash label."""
    def strip(template: Obj) -> Any:
        copied = copy.deepcopy(template)
        ((copied.get("metadata") or {}).get("labels") or {}).pop(HASH_LABEL, None)
        return _without_empties(copied)
    return bool(strip(a) == strip(b))


def find_new_rs(d: Obj, rs_list: list[Obj]) -> Obj | None:
    """The oldest ReplicaSet running the Deployment's template (there may be several after a collision)."""
    template = own.spec(d).get("template") or {}
    return next((rs for rs in sorted(rs_list, key=created) if equal_ignore_hash(own.spec(rs).get("template") or {}, template)), None)


def set_new_rs_annotations(d: Obj, rs: Obj, revision: str) -> bool:
    """Copy the Deployment's annotations (but ours and last-applied) to the new ReplicaSet and
    raise its revision to ``revision``, keeping the one it had in the revision history; True
    when anything changed (``SetNewReplicaSetAnnotations``, but for the replicas annotations)."""
    values = rs["metadata"]["annotations"] = rs["metadata"].get("annotations") or {}
    changed = False
    for key, value in annotations(d).items():
        if key not in NOT_COPIED and values.get(key) != value:
            values[key] = value
            changed = True
    previous = values.get(REVISION)
    previous_number = parse_int(previous) if previous else 0
    if previous_number is not None and previous_number < int(revision):
        values[REVISION] = revision
        changed = True
        if previous:
            history = [r for r in values.get(REVISION_HISTORY, "").split(",") if r] + [previous]
            while len(",".join(history)) > MAX_REVISION_HISTORY_CHARS:
                history.pop(0)
            values[REVISION_HISTORY] = ",".join(history)
    return changed


def revision(rs: Obj) -> int | None:
    """The revision annotation; 0 without one, None when it is no number."""
    value = annotations(rs).get(REVISION)
    return 0 if value is None else parse_int(value)


def max_revision(rss: list[Obj]) -> int:
    return max((r for r in map(revision, rss) if r is not None), default=0)


def revision_order(rs: Obj) -> tuple[int, str, str]:
    return (revision(rs) or 0, *created(rs))
