"""Wire schema and defaulting of scheduling.k8s.io/v1 (``k8s.io/api/scheduling/v1``)."""

from __future__ import annotations

from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields

DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"


class PriorityClassSchema(Schema):
    """PriorityClass maps a name to an integer priority. Pods name a class in priorityClassName; the scheduler
    places higher priorities first and may preempt lower ones to make room.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, labels, annotations, and what the server records about the object."
    )})
    value = fields.Int32(metadata={"omitempty": False, "description": (
        "The priority of pods naming this class: the higher, the more important. At most 1000000000 for "
        "user classes; larger values are reserved for the system-* classes."
    )})
    global_default = fields.Bool(metadata={"description": (
        "Whether pods naming no class get this one. At most one class may be the global default."
    )})
    description = fields.Str(metadata={"description": "When to use this class, in words."})
    preemption_policy = fields.Str(metadata={"description": (
        "Never or PreemptLowerPriority: whether pods of this class may preempt lower-priority pods. "
        "Defaults to PreemptLowerPriority."
    )})


def default_priority_class(pc: dict[str, Any]) -> None:
    if not pc.get("preemption_policy"):
        pc["preemption_policy"] = DEFAULT_PREEMPTION_POLICY
