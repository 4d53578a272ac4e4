"""The general cluster roles and their bindings (``bootstrappolicy/policy.go``), narrowed to the
resources kplane serves. Rules are in their wire form."""

from __future__ import annotations

from typing import Any

READ = ["get", "list", "watch"]
WRITE = ["create", "update", "patch", "delete", "deletecollection"]
READ_WRITE = READ + WRITE

LEGACY, APPS, COORDINATION, RBAC = "", "apps", "coordination.k8s.io", "rbac.authorization.k8s.io"
CERTIFICATES = "certificates.k8s.io"
AUTHENTICATION, AUTHORIZATION = "authentication.k8s.io", "authorization.k8s.io"

AUTOUPDATE = "rbac.authorization.kubernetes.io/autoupdate"
BOOTSTRAPPING = {"kubernetes.io/bootstrapping": "rbac-defaults"}
AGGREGATE_TO_ADMIN = "rbac.authorization.k8s.io/aggregate-to-admin"
AGGREGATE_TO_EDIT = "rbac.authorization.k8s.io/aggregate-to-edit"
AGGREGATE_TO_VIEW = "rbac.authorization.k8s.io/aggregate-to-view"

Obj = dict[str, Any]


def rule(verbs: list[str], groups: list[str] | None = None, resources: list[str] | None = None, *,
         urls: list[str] | None = None) -> Obj:
    out: Obj = {"verbs": verbs}
    if urls:
        return {**out, "nonResourceURLs": urls}
    return {**out, "apiGroups": groups, "resources": resources}


def cluster_role(name: str, rules: list[Obj], *, labels: dict[str, str] | None = None,
                 aggregate_from: str | None = None) -> Obj:
    """A bootstrap ClusterRole: labelled ``kubernetes.io/bootstrapping: rbac-defaults`` and
    reconciled while ``rbac.authorization.kubernetes.io/autoupdate`` is not ``"false"``."""
    role: Obj = {"metadata": {"name": name, "labels": {**BOOTSTRAPPING, **(labels or {})},
                              "annotations": {AUTOUPDATE: "true"}}, "rules": rules}
    if aggregate_from:
        role["aggregationRule"] = {"clusterRoleSelectors": [{"matchLabels": {aggregate_from: "true"}}]}
    return role


def cluster_role_binding(role: str, subjects: list[Obj], name: str | None = None) -> Obj:
    return {"metadata": {"name": name or role, "labels": dict(BOOTSTRAPPING), "annotations": {AUTOUPDATE: "true"}},
            "roleRef": {"apiGroup": RBAC, "kind": "ClusterRole", "name": role}, "subjects": subjects}


def group(name: str) -> Obj:
    return {"kind": "Group", "apiGroup": RBAC, "name": name}


def user(name: str) -> Obj:
    return {"kind": "User", "apiGroup": RBAC, "name": name}


def role(namespace: str, name: str, rules: list[Obj]) -> Obj:
    """A bootstrap Role (``namespace_policy.go``), reconciled as the ClusterRoles are."""
    return {"metadata": {"name": name, "namespace": namespace, "labels": dict(BOOTSTRAPPING),
                         "annotations": {AUTOUPDATE: "true"}}, "rules": rules}


def role_binding(namespace: str, role_name: str, subjects: list[Obj], name: str | None = None) -> Obj:
    return {"metadata": {"name": name or role_name, "namespace": namespace, "labels": dict(BOOTSTRAPPING),
                         "annotations": {AUTOUPDATE: "true"}},
            "roleRef": {"apiGroup": RBAC, "kind": "Role", "name": role_name}, "subjects": subjects}


PUBLIC_INFO_URLS = ["/healthz", "/livez", "/readyz", "/version", "/version/"]
# What monitoring scrapes and probes: the metrics and every health check.
MONITORING_URLS = ["/metrics", "/metrics/slis", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*"]
DISCOVERY_URLS = ["/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/openapi", "/openapi/*", "/readyz",
                  "/version", "/version/"]

VIEW_RULES = [
    rule(READ, [LEGACY], ["pods", "serviceaccounts", "services", "services/status", "configmaps"]),
    rule(READ, [LEGACY], ["events", "pods/status", "namespaces/status", "pods/log"]),
    rule(READ, [LEGACY], ["namespaces"]),
    rule(READ, [APPS], ["deployments", "deployments/scale", "deployments/status", "replicasets", "replicasets/scale",
                        "replicasets/status"]),
    rule(READ, ["batch"], ["cronjobs", "cronjobs/status", "jobs", "jobs/status"]),
]

EDIT_RULES = [
    rule(READ, [LEGACY], ["pods/attach", "pods/proxy", "pods/exec", "pods/portforward", "secrets", "services/proxy"]),
    rule(["impersonate"], [LEGACY], ["serviceaccounts"]),
    rule(WRITE, [LEGACY], ["pods", "pods/attach", "pods/proxy", "pods/exec", "pods/portforward"]),
    rule(["create"], [LEGACY], ["pods/eviction"]),
    rule(WRITE, [LEGACY], ["serviceaccounts", "services", "services/proxy", "configmaps", "secrets", "events"]),
    rule(["create"], [LEGACY], ["serviceaccounts/token"]),
    rule(WRITE, [APPS], ["deployments", "deployments/scale", "deployments/rollback", "replicasets",
                         "replicasets/scale"]),
    rule(WRITE, ["batch"], ["cronjobs", "jobs"]),
    rule(READ_WRITE, [COORDINATION], ["leases"]),
]

ADMIN_RULES = [
    rule(["create"], [AUTHORIZATION], ["localsubjectaccessreviews"]),
    rule(READ_WRITE, [RBAC], ["roles", "rolebindings"]),
]

CLUSTER_ROLES = [
    cluster_role("cluster-admin", [rule(["*"], ["*"], ["*"]), rule(["*"], urls=["*"])]),
    cluster_role("system:discovery", [rule(["get"], urls=DISCOVERY_URLS)]),
    cluster_role("system:public-info-viewer", [rule(["get"], urls=PUBLIC_INFO_URLS)]),
    cluster_role("system:monitoring", [rule(["get"], urls=MONITORING_URLS)]),
    cluster_role("system:basic-user", [
        rule(["create"], [AUTHORIZATION], ["selfsubjectaccessreviews", "selfsubjectrulesreviews"]),
        rule(["create"], [AUTHENTICATION], ["selfsubjectreviews"]),
    ]),
    cluster_role("system:auth-delegator", [
        rule(["create"], [AUTHENTICATION], ["tokenreviews"]),
        rule(["create"], [AUTHORIZATION], ["subjectaccessreviews"]),
    ]),
    # A node's bootstrap credentials: check the node, ask for its client certificate.
    cluster_role("system:node-bootstrapper", [
        rule(["get"], [LEGACY], ["nodes"]),
        rule(["create", "get", "list", "watch"], [CERTIFICATES], ["certificatesigningrequests"]),
    ]),
    # What csrapproving asks before approving a kubelet's client certificate by itself.
    cluster_role("system:certificates.k8s.io:certificatesigningrequests:nodeclient",
                 [rule(["create"], [CERTIFICATES], ["certificatesigningrequests/nodeclient"])]),
    cluster_role("system:certificates.k8s.io:certificatesigningrequests:selfnodeclient",
                 [rule(["create"], [CERTIFICATES], ["certificatesigningrequests/selfnodeclient"])]),
    *(cluster_role(f"system:certificates.k8s.io:{signer}-approver",
                   [{**rule(["approve"], [CERTIFICATES], ["signers"]), "resourceNames": [f"kubernetes.io/{signer}"]}])
      for signer in ("legacy-unknown", "kubelet-serving", "kube-apiserver-client", "kube-apiserver-client-kubelet")),
    # The user-facing roles: each is the union of the roles labelled to aggregate into it, and
    # each aggregates into the next (view into edit, edit into admin).
    cluster_role("admin", [], aggregate_from=AGGREGATE_TO_ADMIN),
    cluster_role("edit", [], labels={AGGREGATE_TO_ADMIN: "true"}, aggregate_from=AGGREGATE_TO_EDIT),
    cluster_role("view", [], labels={AGGREGATE_TO_EDIT: "true"}, aggregate_from=AGGREGATE_TO_VIEW),
    cluster_role("system:aggregate-to-admin", ADMIN_RULES, labels={AGGREGATE_TO_ADMIN: "true"}),
    cluster_role("system:aggregate-to-edit", EDIT_RULES, labels={AGGREGATE_TO_EDIT: "true"}),
    cluster_role("system:aggregate-to-view", VIEW_RULES, labels={AGGREGATE_TO_VIEW: "true"}),
]

CLUSTER_ROLE_BINDINGS = [
    cluster_role_binding("cluster-admin", [group("system:masters")]),
    cluster_role_binding("system:discovery", [group("system:authenticated")]),
    cluster_role_binding("system:basic-user", [group("system:authenticated")]),
    cluster_role_binding("system:monitoring", [group("system:monitoring")]),
    cluster_role_binding("system:public-info-viewer", [group("system:authenticated"), group("system:unauthenticated")]),
]

SYSTEM = "kube-system"
AUTHENTICATION_READER = "extension-apiserver-authentication-reader"

# The namespaced ones. Extension API servers are bound to the reader (as sample-apiserver's
# artifacts do) to learn from kube-system/extension-apiserver-authentication whom to trust.
ROLES = [
    role(SYSTEM, AUTHENTICATION_READER, [
        {**rule(READ, [LEGACY], ["configmaps"]), "resourceNames": ["extension-apiserver-authentication"]},
    ]),
]

ROLE_BINDINGS = [
    role_binding(SYSTEM, AUTHENTICATION_READER, [user("system:kube-controller-manager"), user("system:kube-scheduler")],
                 name="system::" + AUTHENTICATION_READER),
]
