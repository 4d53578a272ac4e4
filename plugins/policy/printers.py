"""Table columns of PodDisruptionBudgets, as ``kubectl get pdb`` shows them on a cluster."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, dig


def _int_or_percent(obj: dict[str, Any], path: str) -> str:
    value = dig(obj, path)
    return "N/A" if value is None else str(value)


POD_DISRUPTION_BUDGET_COLUMNS = (
    NAME,
    Column("Min Available", "string", lambda o: _int_or_percent(o, "spec.minAvailable"),
           description="The minimum number or percentage of available pods this budget requires."),
    Column("Max Unavailable", "string", lambda o: _int_or_percent(o, "spec.maxUnavailable"),
           description="The maximum number or percentage of unavailable pods this budget requires."),
    Column("Allowed Disruptions", "integer", lambda o: dig(o, "status.disruptionsAllowed", 0),
           description="Calculated number of pods that may be disrupted at this time."),
    AGE,
)
