"""Table columns of PriorityClass, as ``kubectl get priorityclasses`` shows them on a cluster."""

from __future__ import annotations

from kplane.api import AGE, NAME, Column, dig

PRIORITY_CLASS_COLUMNS = (
    NAME,
    Column("Value", "integer", lambda o: o.get("value", 0), description="Value is the integer value of this priority class."),
    Column("Global-Default", "boolean", lambda o: bool(o.get("globalDefault")),
           description="globalDefault specifies whether this PriorityClass should be considered as the default priority."),
    AGE,
    Column("PreemptionPolicy", "string", lambda o: dig(o, "preemptionPolicy", ""),
           description="PreemptionPolicy is the Policy for preempting pods with lower priority."),
)
