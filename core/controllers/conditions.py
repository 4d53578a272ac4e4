"""Status conditions of wire-form objects, as controllers set them (``SetDeploymentCondition``,
apimachinery's ``meta.SetStatusCondition``).

A condition is a dict in ``status["conditions"]`` keyed by ``type``. Its ``lastTransitionTime``
says since when its status holds, so it moves only when the status does; a new reason or
message with the same status keeps it. The functions replace lists rather than change them in
place: the status may be a shallow copy of an informer's cached object.
"""

from __future__ import annotations

from kplane.core.controllers.ownership import Obj
from kplane.core.meta import clock


def new_condition(type_: str, status: str, reason: str, message: str, *, with_update_time: bool = False) -> Obj:
    """A condition that changes now; ``with_update_time`` adds ``lastUpdateTime`` (Deployment
    conditions carry it: the progress deadline counts from it)."""
    now = clock.now()
    condition: Obj = {"type": type_, "status": status}
    if with_update_time:
        condition["lastUpdateTime"] = now
    condition.update(lastTransitionTime=now, reason=reason, message=message)
    return condition


def get_condition(status: Obj, type_: str) -> Obj | None:
    """The condition of ``type_`` in ``status``, or None."""
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), None)


def set_condition(status: Obj, condition: Obj) -> None:
    """Put ``condition`` in place of the one of its type, unless that has the same status and
    reason (then nothing changes); with only the reason changed its lastTransitionTime stays."""
    current = get_condition(status, condition["type"])
    if current is not None and current.get("status") == condition["status"]:
        if current.get("reason") == condition["reason"]:
            return
        condition["lastTransitionTime"] = current.get("lastTransitionTime")
    replace_condition(status, condition)


def replace_condition(status: Obj, condition: Obj) -> None:
    """Put ``condition`` last, in place of any of its type, as it is (its caller chose the times)."""
    remove_condition(status, condition["type"])
    status["conditions"] = [*status["conditions"], condition]


def remove_condition(status: Obj, type_: str) -> None:
    """Drop the condition of ``type_`` from ``status``, if there is one."""
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != type_]
