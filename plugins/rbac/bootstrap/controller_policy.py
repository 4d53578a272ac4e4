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
    "certificate-controller": [  # csrsigning, csrapproving, csrcleaner
        rule(["get", "list", "watch", "delete"], ["certificates.k8s.io"], ["certificatesigningrequests"]),
        rule(["update"], ["certificates.k8s.io"], ["certificatesigningrequests/status", "certificatesigningrequests/approval"]),
        {**rule(["approve"], ["certificates.k8s.io"], ["signers"]), "resourceNames": ["kubernetes.io/kube-apiserver-client-kubelet"]},
        {**rule(["sign"], ["certificates.k8s.io"], ["signers"]), "resourceNames": [
            "kubernetes.io/legacy-unknown", "kubernetes.io/kube-apiserver-client",
            "kubernetes.io/kube-apiserver-client-kubelet", "kubernetes.io/kubelet-serving"]},
        rule(["create"], ["authorization.k8s.io"], ["subjectaccessreviews"]),
        EVENTS,
    ],
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
    "endpoint-controller": [
        rule(["get", "list", "watch"], [LEGACY], ["services", "pods"]),
        rule(["get", "list", "create", "update", "delete"], [LEGACY], ["endpoints"]),
        rule(["create"], [LEGACY], ["endpoints/restricted"]),
        EVENTS,
    ],
    "endpointslice-controller": [
        rule(["get", "list", "watch"], [LEGACY], ["services", "pods", "nodes"]),
        rule(["update"], [LEGACY], ["services/finalizers"]),  # slices block their Service's deletion
        rule(["get", "list", "create", "update", "delete"], ["discovery.k8s.io"], ["endpointslices"]),
        EVENTS,
    ],
    "generic-garbage-collector": [
        rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]),
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
    "persistent-volume-binder": [
        rule(["get", "list", "watch", "create", "update", "delete"], [LEGACY], ["persistentvolumes"]),
        rule(["update"], [LEGACY], ["persistentvolumes/status", "persistentvolumeclaims/status"]),
        rule(["get", "list", "watch", "update"], [LEGACY], ["persistentvolumeclaims"]),
        rule(["get", "list", "watch"], [LEGACY], ["pods"]),
        rule(["get", "list", "watch"], ["storage.k8s.io"], ["storageclasses"]),
        EVENTS,
    ],
    "pv-protection-controller": [
        rule(["get", "list", "watch", "update", "patch"], [LEGACY], ["persistentvolumes"]),
        EVENTS,
    ],
    "pvc-protection-controller": [
        rule(["get", "list", "watch", "update", "patch"], [LEGACY], ["persistentvolumeclaims"]),
        rule(["get", "list", "watch"], [LEGACY], ["pods"]),
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
