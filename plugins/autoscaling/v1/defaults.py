"""autoscaling/v1 defaulting (``pkg/apis/autoscaling/v1/defaults.go``): one replica at least; the
80% CPU target is the conversion's to add (it alone sees the metrics the annotations carry)."""

from __future__ import annotations

from typing import Any


def default_hpa(hpa: dict[str, Any]) -> None:
    spec = hpa.get("spec")
    if spec is None:
        spec = hpa["spec"] = {}
    if spec.get("min_replicas") is None:
        spec["min_replicas"] = 1
