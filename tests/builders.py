"""Manifests the tests build on: small, valid, real-shaped objects."""

from __future__ import annotations

from typing import Any

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
# Pods for API-level tests name a scheduler nobody runs, so the simulated nodes leave them alone.
UNSCHEDULED = "nobody"


def deployment(name: str = "web", replicas: int | None = 2, version: str = "apps/v1", **spec: Any) -> dict[str, Any]:
    body: dict[str, Any] = {
        "apiVersion": version,
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "selector": {"matchLabels": {"app": name}},
            "template": {
                "metadata": {"labels": {"app": name}},
                "spec": {"containers": [{"name": "nginx", "image": "nginx:1.25"}]},
            },
            **spec,
        },
    }
    if replicas is not None:
        body["spec"]["replicas"] = replicas
    return body


def configmap(name: str, data: dict[str, str] | None = None, **meta: Any) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": name, **meta}, "data": {"a": "b"} if data is None else data}
