"""Table columns: what ``kubectl get`` shows for a kind (server-side printing).

A strategy lists its columns; each computes one cell from the object in its storage version's
wire form (a dict, read-only), or, for a kind that says ``reads_in_request_version`` (custom
resources, whose columns are per version), in the request's version. ``priority=1`` columns appear only with ``-o wide``. A kind that
declares nothing gets NAME and AGE, as kube-apiserver prints for custom resources.

    columns = [NAME, Column("Ready", "string", ready), Column("Up-to-date", "integer", updated), AGE]
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

from kplane.core.meta import clock

Cell = str | int | float | bool | None


@dataclass(frozen=True, slots=True)
class Column:
    """One column of ``kubectl get``: its definition in the Table, and how to read a row's cell."""

    name: str
    type: str  # "string", "integer", "number", "boolean" or "date"
    cell: Callable[[dict[str, Any]], Cell]
    description: str = ""
    priority: int = 0
    format: str = ""

    def definition(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "type": self.type,
            "format": self.format,
            "description": self.description,
            "priority": self.priority,
        }


def human_duration(seconds: float) -> str:
    """Kubernetes' ``duration.HumanDuration``: ``45s``, ``5m10s``, ``3h``, ``2d5h``, ``400d``, ``3y``."""
    if seconds < -1:
        return "<invalid>"
    s = max(int(seconds), 0)
    if s < 120:
        return f"{s}s"
    minutes = s // 60
    if minutes < 10:
        return f"{minutes}m{s % 60}s" if s % 60 else f"{minutes}m"
    if minutes < 180:
        return f"{minutes}m"
    hours = minutes // 60
    if hours < 8:
        return f"{hours}h{minutes % 60}m" if minutes % 60 else f"{hours}h"
    if hours < 48:
        return f"{hours}h"
    days = hours // 24
    if hours < 24 * 8:
        return f"{days}d{hours % 24}h" if hours % 24 else f"{days}d"
    if days < 365 * 2:
        return f"{days}d"
    if days < 365 * 8:
        return f"{days // 365}y{days % 365}d" if days % 365 else f"{days // 365}y"
    return f"{days // 365}y"


def age(timestamp: str | None) -> str:
    """How long ago ``timestamp`` was, the way kubectl shows ages; ``<unknown>`` without one."""
    if not timestamp:
        return "<unknown>"
    return human_duration((datetime.now(UTC) - clock.parse(timestamp)).total_seconds())


def dig(obj: dict[str, Any], path: str, default: Any = None) -> Any:
    """``dig(obj, "status.readyReplicas", 0)``: a nested value, or the default when missing."""
    value: Any = obj
    for part in path.split("."):
        if not isinstance(value, dict) or value.get(part) is None:
            return default
        value = value[part]
    return value


#: The Name column, first in ``kubectl get``'s tables.
NAME = Column(
    "Name", "string", lambda o: o["metadata"].get("name", ""), format="name",
    description="Name must be unique within a namespace.",
)
#: The Age column, last in ``kubectl get``'s tables.
AGE = Column(
    "Age", "string", lambda o: age(o["metadata"].get("creationTimestamp")),
    description="The time since the object was created.",
)
DEFAULT_COLUMNS = (NAME, AGE)
