"""core/v1 defaulting (``pkg/apis/core/v1/defaults.go``), on decoded Python-named data.

``default_pod_spec`` is shared with every kind that embeds a pod template (Deployments, ...).
"""

from __future__ import annotations

from typing import Any


def _image_pull_policy(image: str) -> str:
    """``Always`` for ``:latest`` or untagged images, else ``IfNotPresent``."""
    if "@" in image:
        return "IfNotPresent"
    last = image.rsplit("/", 1)[-1]
    tag = last.rsplit(":", 1)[1] if ":" in last else ""
    return "Always" if tag in ("", "latest") else "IfNotPresent"


def default_container(container: dict[str, Any]) -> None:
    container.setdefault("termination_message_path", "/dev/termination-log")
    container.setdefault("termination_message_policy", "File")
    if not container.get("image_pull_policy"):
        container["image_pull_policy"] = _image_pull_policy(container.get("image") or "")
    if container.get("resources") is None:
        container["resources"] = {}
    for port in container.get("ports") or ():
        if not port.get("protocol"):
            port["protocol"] = "TCP"


def default_pod_spec(spec: dict[str, Any]) -> None:
    for key, value in (
        ("restart_policy", "Always"),
        ("termination_grace_period_seconds", 30),
        ("dns_policy", "ClusterFirst"),
        ("scheduler_name", "default-scheduler"),
        ("security_context", {}),
        ("enable_service_links", True),
    ):
        if spec.get(key) is None:
            spec[key] = value
    if spec.get("service_account") and not spec.get("service_account_name"):
        spec["service_account_name"] = spec["service_account"]
    for container in (spec.get("containers") or []) + (spec.get("init_containers") or []):
        default_container(container)


def default_pod(pod: dict[str, Any]) -> None:
    spec = pod.get("spec")
    if spec is None:
        spec = pod["spec"] = {}
    default_pod_spec(spec)


def default_secret(secret: dict[str, Any]) -> None:
    if not secret.get("type"):
        secret["type"] = "Opaque"
