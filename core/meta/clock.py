"""Timestamps as Kubernetes writes them: RFC 3339, UTC, whole seconds."""

from __future__ import annotations

import time
from datetime import UTC, datetime

_formatted: tuple[int, str] = (-1, "")  # the last second formatted, and its text


def now() -> str:
    """The current second as a timestamp: formatted once a second, not on every write (a create
    stamps several: creationTimestamp, its managedFields' time)."""
    global _formatted
    second = int(time.time())
    if _formatted[0] != second:
        _formatted = (second, at(datetime.fromtimestamp(second, UTC)))
    return _formatted[1]


def at(moment: datetime) -> str:
    """``moment`` as a Kubernetes timestamp (a deletionTimestamp ahead of now, say)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(timestamp: str) -> datetime:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def epoch(timestamp: str | None) -> float:
    """Seconds since the epoch of a Kubernetes timestamp; 0 without one (a time never set)."""
    return parse(timestamp).timestamp() if timestamp else 0.0
