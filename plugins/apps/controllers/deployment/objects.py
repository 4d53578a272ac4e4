"""Reading Deployments and ReplicaSets in wire form, as the controller gets them from its caches."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from kplane.api import ownership as own, spec_replicas

Obj = dict[str, Any]

API_VERSION, KIND = "apps/v1", "Deployment"
INT32_MAX = 2**31 - 1  # progressDeadlineSeconds / revisionHistoryLimit meaning "never"


def refresh(obj: Obj, fresh: Obj) -> None:
    """Replace ``obj``'s content with the server's reply, so every list holding it sees the new version."""
    obj.clear()
    obj.update(fresh)


def status(obj: Obj) -> Obj:
    """The object's status, made a dict in place so conditions can be set on it."""
    if not isinstance(obj.get("status"), dict):
        obj["status"] = {}
    return obj["status"]


def annotations(obj: Obj) -> dict[str, str]:
    return obj["metadata"].get("annotations") or {}


def name(obj: Obj) -> str:
    return str(obj["metadata"]["name"])


def available(rs: Obj) -> int:
    """Available pods counted for scaling down: at most ``spec.replicas``, since a ReplicaSet just
    scaled down still reports the pods it is about to delete."""
    return min(spec_replicas(rs), int(status(rs).get("availableReplicas") or 0))


def active(rss: Sequence[Obj | None]) -> list[Obj]:
    return [rs for rs in rss if rs is not None and spec_replicas(rs) > 0]


def created(obj: Obj) -> tuple[str, str]:
    """Sort key, oldest first: RFC 3339 UTC timestamps sort as text; the name breaks ties."""
    return (obj["metadata"].get("creationTimestamp") or "", name(obj))


def is_recreate(d: Obj) -> bool:
    return (own.spec(d).get("strategy") or {}).get("type") == "Recreate"


def parse_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def int_annotation(obj: Obj, key: str) -> int | None:
    value = annotations(obj).get(key)
    return None if value is None else parse_int(value)
