"""Reading and writing a CRD's conditions in its wire form, as the controllers see it."""

from __future__ import annotations

from typing import Any

from kplane.api import clock


def condition(crd: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (crd.get("status") or {}).get("conditions") or () if c.get("type") == kind), None)


def is_true(crd: dict[str, Any], kind: str) -> bool:
    found = condition(crd, kind)
    return found is not None and found.get("status") == "True"


def with_condition(crd: dict[str, Any], kind: str, status: str, reason: str, message: str) -> dict[str, Any]:
    """A copy of ``crd`` with one condition set (``lastTransitionTime`` moves only when its status
    does, as ``SetCRDCondition``)."""
    current = condition(crd, kind)
    moved = current.get("lastTransitionTime") if current is not None and current.get("status") == status else clock.now()
    wanted = {"type": kind, "status": status, "lastTransitionTime": moved, "reason": reason, "message": message}
    status_ = dict(crd.get("status") or {})
    conditions = list(status_.get("conditions") or [])
    index = next((i for i, c in enumerate(conditions) if c.get("type") == kind), None)
    if index is None:
        conditions.append(wanted)
    else:
        conditions[index] = wanted
    status_["conditions"] = conditions
    return {**crd, "status": status_}
