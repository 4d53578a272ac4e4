"""apps/v1 conversions: the pod template's spec converts as every core/v1 PodSpec does."""

from __future__ import annotations

from typing import Any

from kplane.plugins.core.v1.conversion import pod_spec_from_internal, pod_spec_to_internal


def _template_spec(workload: dict[str, Any]) -> dict[str, Any] | None:
    template = (workload.get("spec") or {}).get("template")
    return template.get("spec") if isinstance(template, dict) else None


def to_internal(workload: dict[str, Any]) -> dict[str, Any]:
    """A workload's data (Deployment, ReplicaSet, DaemonSet), its template's ``serviceAccount`` alias read."""
    spec = _template_spec(workload)
    if spec:
        pod_spec_to_internal(spec)
    return workload


def from_internal(workload: dict[str, Any]) -> dict[str, Any]:
    spec = _template_spec(workload)
    if spec:
        pod_spec_from_internal(spec)
    return workload
