"""Validation and behaviour of PriorityClasses (``pkg/registry/scheduling/priorityclass``,
``ValidatePriorityClass``): names starting ``system-`` are the two built-in classes' only, user
values are at most ``1000000000``, value and preemption policy never change. That only one
class is the global default is the Priority admission's check (``plugins/core/pod_admission.py``)."""

from __future__ import annotations

from kplane.api import FIELD_IMMUTABLE, FieldError, RequestContext, Strategy, forbidden, invalid, not_supported
from kplane.plugins.scheduling import printers
from kplane.plugins.scheduling.types import PriorityClass

SYSTEM_PREFIX = "system-"
HIGHEST_USER_DEFINABLE = 1000000000
PREEMPTION_POLICIES = ["Never", "PreemptLowerPriority"]
#: ``scheduling.SystemPriorityClasses``: name -> (value, description), made at start.
SYSTEM_CLASSES = {
    "system-node-critical": (2000001000, "Used for system critical pods that must not be moved from their current node."),
    "system-cluster-critical": (2000000000, "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary."),
}


def _known_system_class(pc: PriorityClass) -> str | None:
    """``IsKnownSystemPriorityClass``: why ``pc`` is not one of the built-in classes, or None."""
    known = SYSTEM_CLASSES.get(pc.metadata.name or "")
    if known is None:
        return f"{pc.metadata.name} is not a known system priority class"
    if pc.value != known[0]:
        return f"value of {pc.metadata.name} PriorityClass must be {known[0]}"
    if pc.global_default:
        return f"globalDefault of {pc.metadata.name} PriorityClass must be false"
    return None


def validate_priority_class(pc: PriorityClass) -> list[FieldError]:
    errs: list[FieldError] = []
    if (pc.metadata.name or "").startswith(SYSTEM_PREFIX):
        why = _known_system_class(pc)
        if why:
            errs.append(forbidden("metadata.name", f"priority class names with '{SYSTEM_PREFIX}' prefix are reserved "
                                                   f"for system use only. error: {why}"))
    elif pc.value > HIGHEST_USER_DEFINABLE:
        errs.append(forbidden("value", f"maximum allowed value of a user defined priority is {HIGHEST_USER_DEFINABLE}"))
    if pc.preemption_policy is not None and pc.preemption_policy not in PREEMPTION_POLICIES:
        errs.append(not_supported("preemptionPolicy", pc.preemption_policy, PREEMPTION_POLICIES))
    return errs


class PriorityClassStrategy(Strategy):
    columns = printers.PRIORITY_CLASS_COLUMNS

    def validate(self, ctx: RequestContext, obj: PriorityClass) -> list[FieldError]:
        return validate_priority_class(obj)

    def validate_update(self, ctx: RequestContext, obj: PriorityClass, old: PriorityClass) -> list[FieldError]:
        errs = validate_priority_class(obj)
        if obj.value != old.value:
            errs.append(forbidden("value", "may not be changed in an update."))
        if obj.preemption_policy != old.preemption_policy:
            errs.append(invalid("preemptionPolicy", obj.preemption_policy, FIELD_IMMUTABLE))
        return errs
