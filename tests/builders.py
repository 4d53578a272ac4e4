"""Manifests the tests build on: small, valid, real-shaped objects."""

from __future__ import annotations

from dataclasses import dataclass, field
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


# One valid object of each kind the server serves by default, for tests that go over all of them.
PODSPEC = {"schedulerName": UNSCHEDULED, "containers": [{"name": "c", "image": "nginx:1.25"}]}


@dataclass(frozen=True)
class Kind:
    """A served kind: where its collection is and a valid object of it (named later)."""

    collection: str
    api_version: str
    kind: str
    content: dict[str, Any] = field(default_factory=dict)
    seed: str = "seed"  # the name tests give the one object of this kind they keep

    def body(self, name: str = "corpus", **meta: Any) -> dict[str, Any]:
        return {"apiVersion": self.api_version, "kind": self.kind, "metadata": {"name": name, **meta}, **self.content}

    def item(self, name: str = "") -> str:
        return f"{self.collection}/{name or self.seed}"


KINDS = {
    "configmap": Kind("/api/v1/namespaces/default/configmaps", "v1", "ConfigMap", {"data": {"a": "b"}}),
    "secret": Kind("/api/v1/namespaces/default/secrets", "v1", "Secret", {"stringData": {"a": "b"}}),
    "service": Kind("/api/v1/namespaces/default/services", "v1", "Service", {"spec": {"ports": [{"port": 80}]}}),
    "pod": Kind("/api/v1/namespaces/default/pods", "v1", "Pod", {"spec": PODSPEC}),
    "serviceaccount": Kind("/api/v1/namespaces/default/serviceaccounts", "v1", "ServiceAccount"),
    "event": Kind("/api/v1/namespaces/default/events", "v1", "Event", {
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "seed"}, "reason": "Test",
        "message": "m", "type": "Normal"}),
    "namespace": Kind("/api/v1/namespaces", "v1", "Namespace"),
    "node": Kind("/api/v1/nodes", "v1", "Node"),
    "deployment": Kind("/apis/apps/v1/namespaces/default/deployments", "apps/v1", "Deployment", {"spec": {
        "selector": {"matchLabels": {"app": "a"}},
        "template": {"metadata": {"labels": {"app": "a"}}, "spec": PODSPEC}}}),
    "replicaset": Kind("/apis/apps/v1/namespaces/default/replicasets", "apps/v1", "ReplicaSet", {"spec": {
        "replicas": 0, "selector": {"matchLabels": {"app": "r"}},
        "template": {"metadata": {"labels": {"app": "r"}}, "spec": PODSPEC}}}),
    "lease": Kind("/apis/coordination.k8s.io/v1/namespaces/default/leases", "coordination.k8s.io/v1", "Lease",
                  {"spec": {"holderIdentity": "me"}}),
    "apiservice": Kind("/apis/apiregistration.k8s.io/v1/apiservices", "apiregistration.k8s.io/v1", "APIService", {
        "spec": {"group": "corpus.example.com", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10}},
        seed="v1.corpus.example.com"),
    "flunder": Kind("/apis/wardle.example.com/v1beta1/namespaces/default/flunders", "wardle.example.com/v1beta1",
                    "Flunder", {"spec": {}}),
}
