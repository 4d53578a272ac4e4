"""A cluster role per built-in controller, bound to its ServiceAccount in kube-system
(``bootstrappolicy/controller_policy.go``): ``system:controller:<account>``. The rules are
Kubernetes' for those controllers, narrowed to the groups kplane serves; the simulated nodes,
which stand for kubelets and the scheduler, get what they do."""

from __future__ import annotations

from typing import Any

from kplane.plugins.rbac.bootstrap.policy import APPS, LEGACY, RBAC, READ, cluster_role, cluster_role_binding, rule

PREFIX = "system:controller:"
NAMESPACE = "kube-system"

EVENTS = rule(["create", "update", "patch"], [LEGACY], ["events"])

#: The ServiceAccount of each controller, and the rules its role holds.
CONTROLLERS: dict[str, list[dict[str, Any]]] = {
    "clusterrole-aggregation-controller": [
        rule(["escalate", "get", "list", "watch", "update", "patch"], [RBAC], ["clusterroles"]),
    ],
    "deployment-controller": [
        rule(["get", "list", "watch", "update"], [APPS], ["deployments"]),
        rule(["update"], [APPS], ["deployments/finalizers", "deployments/status"]),
        rule(["get", "list", "watch", "create", "update", "patch", "delete"], [APPS], ["replicasets"]),
        rule(["get", "list", "watch", "update"], [LEGACY], ["pods"]),
        EVENTS,
    ],
    "generic-garbage-collector": [
        rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]),
        EVENTS,
    ],
    "horizontal-pod-autoscaler": [
        rule(["get", "list", "watch"], ["autoscaling"], ["horizontalpodautoscalers"]),
        rule(["update"], ["autoscaling"], ["horizontalpodautoscalers/status"]),
        rule(["get", "update", "patch"], ["*"], ["*/scale"]),
        rule(["list", "watch"], [LEGACY], ["pods"]),
        rule(["list"], ["metrics.k8s.io"], ["pods"]),
        EVENTS,
    ],
    "namespace-controller": [
        rule(["get", "list", "watch", "delete"], [LEGACY], ["namespaces"]),
        rule(["update"], [LEGACY], ["namespaces/finalize", "namespaces/status"]),
        rule(["get", "list", "delete", "deletecollection"], ["*"], ["*"]),
    ],
    "replicaset-controller": [
        rule(["get", "list", "watch", "update"], [APPS], ["replicasets"]),
        rule(["update"], [APPS], ["replicasets/status", "replicasets/finalizers"]),
        rule(["list", "watch", "patch", "create", "delete"], [LEGACY], ["pods"]),
        EVENTS,
    ],
    "root-ca-cert-publisher": [
        rule(["create", "update"], [LEGACY], ["configmaps"]),
        EVENTS,
    ],
    "service-account-controller": [
        rule(["create"], [LEGACY], ["serviceaccounts"]),
        EVENTS,
    ],
    "simulated-nodes": [
        rule(["get", "list", "watch", "create", "update", "patch", "delete"], [LEGACY], ["nodes"]),
        rule(["update", "patch"], [LEGACY], ["nodes/status", "pods/status"]),
        rule([*READ, "delete"], [LEGACY], ["pods"]),
        rule(["create"], [LEGACY], ["pods/binding"]),
        EVENTS,
    ],
}


def _service_account(name: str) -> dict[str, Any]:
    return {"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}


CLUSTER_ROLES = [cluster_role(PREFIX + account, rules) for account, rules in CONTROLLERS.items()]
CLUSTER_ROLE_BINDINGS = [cluster_role_binding(PREFIX + account, [_service_account(account)]) for account in CONTROLLERS]
