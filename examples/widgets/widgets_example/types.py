"""The internal Widget: what the server's own code (strategy, admission) works on.

Plain dataclasses with Python names and no wire format; every served version converts to and
from them.
"""

from dataclasses import dataclass, field

from kplane.api import Condition, ObjectMeta

GROUP = "widgets.example.com"
COLORS = ["grey", "red", "green", "blue"]


@dataclass(slots=True)
class Size:
    width: int | None = None
    height: int | None = None


@dataclass(slots=True)
class WidgetSpec:
    color: str | None = None
    size: Size | None = None


@dataclass(slots=True)
class WidgetStatus:
    observed_generation: int | None = None
    area: int | None = None
    conditions: list[Condition] | None = None


@dataclass(slots=True)
class Widget:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: WidgetSpec = field(default_factory=WidgetSpec)
    status: WidgetStatus | None = None
