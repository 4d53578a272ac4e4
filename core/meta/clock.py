"""Timestamps as Kubernetes writes them: RFC 3339, UTC, whole seconds."""

from __future__ import annotations

from datetime import UTC, datetime


def now() -> str:
    return at(datetime.now(UTC))


def at(moment: datetime) -> str:
    """``moment`` as a Kubernetes timestamp (a deletionTimestamp ahead of now, say)."""
    return moment.astimezone(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")


def parse(timestamp: str) -> datetime:
    return datetime.fromisoformat(timestamp.replace("Z", "+00:00"))


def epoch(timestamp: str | None) -> float:
    """Seconds since the epoch of a Kubernetes timestamp; 0 without one (a time never set)."""
    return parse(timestamp).timestamp() if timestamp else 0.0
