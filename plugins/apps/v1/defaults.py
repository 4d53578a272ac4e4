"""apps/v1 defaulting (``pkg/apis/apps/v1/defaults.go``); a template's spec gets what every
PodSpec gets, and not what only a Pod does (``SetObjectDefaults_Deployment``)."""

from __future__ import annotations

from typing import Any

from kplane.plugins.core.v1.defaults import default_pod_spec


def _default_template(spec: dict[str, Any]) -> None:
    template = spec.get("template")
    if template is None:
        template = spec["template"] = {}
    if template.get("spec") is None:
        template["spec"] = {}
    default_pod_spec(template["spec"])


def default_deployment(deployment: dict[str, Any]) -> None:
    spec = deployment.get("spec")
    if spec is None:
        spec = deployment["spec"] = {}
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    strategy = spec.get("strategy") or {}
    spec["strategy"] = strategy
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.get("rolling_update") or {}
        strategy["rolling_update"] = rolling
        for key in ("max_unavailable", "max_surge"):
            if rolling.get(key) is None:
                rolling[key] = "25%"
    if spec.get("revision_history_limit") is None:
        spec["revision_history_limit"] = 10
    if spec.get("progress_deadline_seconds") is None:
        spec["progress_deadline_seconds"] = 600
    _default_template(spec)


def default_replica_set(replica_set: dict[str, Any]) -> None:
    spec = replica_set.get("spec")
    if spec is None:
        spec = replica_set["spec"] = {}
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    _default_template(spec)


def default_daemon_set(daemon_set: dict[str, Any]) -> None:
    """``SetDefaults_DaemonSet``: RollingUpdate of one node at a time, no surge, ten revisions kept."""
    spec = daemon_set.get("spec")
    if spec is None:
        spec = daemon_set["spec"] = {}
    strategy = spec.get("update_strategy") or {}
    spec["update_strategy"] = strategy
    if not strategy.get("type"):
        strategy["type"] = "RollingUpdate"
    if strategy["type"] == "RollingUpdate":
        rolling = strategy.get("rolling_update") or {}
        strategy["rolling_update"] = rolling
        if rolling.get("max_unavailable") is None:
            rolling["max_unavailable"] = 1
        if rolling.get("max_surge") is None:
            rolling["max_surge"] = 0
    if spec.get("revision_history_limit") is None:
        spec["revision_history_limit"] = 10
    _default_template(spec)
