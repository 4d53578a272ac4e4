"""A cluster role per built-in controller, bound to its ServiceAccount in kube-system
(``bootstrappolicy/controller_policy.go``): ``system:controller:<account>``. The rules are
Kubernetes' for those controllers, narrowed to the groups kplane serves; the simulated nodes,
which stand for kubelets and the scheduler, get what they do."""

from __future__ import annotations

from typing import Any

from kplane.plugins.rbac.bootstrap.policy import APPS, LEGACY, RBAC, READ, cluster_role, cluster_role_binding, rule

BATCH = "batch"

PREFIX = "system:controller:"
NAMESPACE = "kube-system"

POLICY, COORDINATION = "policy", "coordination.k8s.io"
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
    "daemon-set-controller": [
        rule(["get", "list", "watch"], [APPS], ["daemonsets"]),
        rule(["update"], [APPS], ["daemonsets/status", "daemonsets/finalizers"]),
        rule(["list", "watch"], [LEGACY], ["nodes"]),
        rule(["list", "watch", "create", "delete", "patch"], [LEGACY], ["pods"]),
        rule(["create"], [LEGACY], ["pods/binding"]),
        rule(["get", "list", "watch", "create", "delete", "update", "patch"], [APPS], ["controllerrevisions"]),
        EVENTS,
    ],
    "cronjob-controller": [
        rule(["get", "list", "watch", "update"], [BATCH], ["cronjobs"]),
        rule(["get", "list", "watch", "create", "update", "delete", "patch"], [BATCH], ["jobs"]),
        rule(["update"], [BATCH], ["cronjobs/status"]),
        rule(["update"], [BATCH], ["cronjobs/finalizers"]),
        rule(["list", "delete"], [LEGACY], ["pods"]),
        EVENTS,
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
    "disruption-controller": [
        rule(["get", "list", "watch"], [APPS], ["deployments", "replicasets", "statefulsets"]),
        rule(["get", "list", "watch"], [LEGACY], ["replicationcontrollers", "pods"]),
        rule(["get", "list", "watch"], [POLICY], ["poddisruptionbudgets"]),
        rule(["update"], [POLICY], ["poddisruptionbudgets/status"]),
        rule(["get"], ["*"], ["*/scale"]),
        EVENTS,
    ],
    "generic-garbage-collector": [
        rule(["get", "list", "watch", "patch", "update", "delete"], ["*"], ["*"]),
        EVENTS,
    ],
    "job-controller": [
        rule(["get", "list", "watch", "update", "patch"], [BATCH], ["jobs"]),
        rule(["update"], [BATCH], ["jobs/status"]),
        rule(["update"], [BATCH], ["jobs/finalizers"]),
        rule(["list", "watch", "create", "delete", "patch"], [LEGACY], ["pods"]),
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
    "node-controller": [
        rule(["get", "list", "update", "delete", "patch"], [LEGACY], ["nodes"]),
        rule(["patch", "update"], [LEGACY], ["nodes/status", "pods/status"]),
        rule(["list", "delete"], [LEGACY], ["pods"]),
        rule(["get", "list", "watch"], [COORDINATION], ["leases"]),
        EVENTS,
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
    "replication-controller": [
        rule(["get", "list", "watch", "update"], [LEGACY], ["replicationcontrollers"]),
        rule(["update"], [LEGACY], ["replicationcontrollers/status", "replicationcontrollers/finalizers"]),
        rule(["list", "watch", "patch", "create", "delete"], [LEGACY], ["pods"]),
        EVENTS,
    ],
    "resourcequota-controller": [
        rule(READ, ["*"], ["*"]),
        rule(["update"], [LEGACY], ["resourcequotas/status"]),
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
    "taint-eviction-controller": [
        rule(["get", "list", "watch", "delete"], [LEGACY], ["pods"]),
        rule(["patch", "update"], [LEGACY], ["pods/status"]),
        rule(["list", "watch"], [LEGACY], ["nodes"]),
        EVENTS,
    ],
    "statefulset-controller": [
        rule(["list", "watch"], [LEGACY], ["pods"]),
        rule(["list", "watch"], [APPS], ["statefulsets"]),
        rule(["update"], [APPS], ["statefulsets/status", "statefulsets/finalizers"]),
        rule(["get", "create", "delete", "update", "patch"], [LEGACY], ["pods"]),
        rule(["get", "create", "delete", "update", "patch", "list", "watch"], [APPS], ["controllerrevisions"]),
        rule(["get", "create", "update", "delete"], [LEGACY], ["persistentvolumeclaims"]),
        EVENTS,
    ],
    "ttl-after-finished-controller": [
        rule(["get", "list", "watch", "delete"], [BATCH], ["jobs"]),
        EVENTS,
    ],
    "validatingadmissionpolicy-status-controller": [
        rule(["get", "list", "watch"], ["admissionregistration.k8s.io"], ["validatingadmissionpolicies"]),
        rule(["update"], ["admissionregistration.k8s.io"], ["validatingadmissionpolicies/status"]),
    ],
    "simulated-nodes": [
        rule(["get", "list", "watch", "create", "update", "patch", "delete"], [LEGACY], ["nodes"]),
        rule(["update", "patch"], [LEGACY], ["nodes/status", "pods/status"]),
        rule([*READ, "delete"], [LEGACY], ["pods"]),
        rule(["create"], [LEGACY], ["pods/binding"]),
        rule(["get", "create", "update"], [COORDINATION], ["leases"]),
        EVENTS,
    ],
}


def _service_account(name: str) -> dict[str, Any]:
    return {"kind": "ServiceAccount", "name": name, "namespace": NAMESPACE}


CLUSTER_ROLES = [cluster_role(PREFIX + account, rules) for account, rules in CONTROLLERS.items()]
CLUSTER_ROLE_BINDINGS = [cluster_role_binding(PREFIX + account, [_service_account(account)]) for account in CONTROLLERS]
