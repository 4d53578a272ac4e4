"""kubectl and RBAC's kinds: the generators (``kubectl create role|clusterrole|rolebinding|
clusterrolebinding``, sent as protobuf), ``get`` columns and ``describe``."""

from __future__ import annotations

from tests.kubectl_cli import Kubectl


def test_create_get_describe_roles_and_bindings(kubectl: Kubectl) -> None:
    kubectl.run("create", "role", "pod-reader", "--verb=get,list", "--resource=pods/log", "--resource-name=web")
    role = kubectl.json("get", "role", "pod-reader")
    assert role["rules"] == [{"verbs": ["get", "list"], "apiGroups": [""], "resources": ["pods/log"],
                              "resourceNames": ["web"]}]
    kubectl.run("create", "clusterrole", "deploy-scaler", "--verb=update", "--resource=deployments.apps/scale")
    kubectl.run("create", "clusterrole", "health", "--verb=get", "--non-resource-url=/healthz")
    kubectl.run("create", "rolebinding", "readers", "--role=pod-reader", "--user=alice", "--group=staff",
                "--serviceaccount=default:robot")
    kubectl.run("create", "clusterrolebinding", "scalers", "--clusterrole=deploy-scaler", "--user=bob")
    binding = kubectl.json("get", "rolebinding", "readers")
    assert binding["roleRef"] == {"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "pod-reader"}
    assert binding["subjects"] == [
        {"kind": "User", "apiGroup": "rbac.authorization.k8s.io", "name": "alice"},
        {"kind": "Group", "apiGroup": "rbac.authorization.k8s.io", "name": "staff"},
        {"kind": "ServiceAccount", "name": "robot", "namespace": "default"}]

    roles = kubectl.run("get", "clusterroles", "deploy-scaler", "health").stdout.splitlines()
    assert roles[0].split() == ["NAME", "CREATED", "AT"] and roles[1].split()[0] == "deploy-scaler"
    assert roles[1].split()[1].endswith("Z")  # an RFC 3339 time, as kube prints it
    wide = kubectl.run("get", "rolebinding", "readers", "-o", "wide").stdout.splitlines()
    assert wide[0].split() == ["NAME", "ROLE", "AGE", "USERS", "GROUPS", "SERVICEACCOUNTS"]
    assert wide[1].split()[:2] == ["readers", "Role/pod-reader"] and wide[1].split()[3:] == ["alice", "staff", "default/robot"]
    crb = kubectl.run("get", "clusterrolebinding", "scalers").stdout.splitlines()
    assert crb[0].split() == ["NAME", "ROLE", "AGE"] and crb[1].split()[:2] == ["scalers", "ClusterRole/deploy-scaler"]

    described = kubectl.run("describe", "role", "pod-reader").stdout
    assert "pod-reader" in described and "pods/log" in described and "[web]" in described
    described = kubectl.run("describe", "rolebinding", "readers").stdout
    assert "Role" in described and "pod-reader" in described and "robot" in described

    # The bootstrap policy is there, and the roleRef of a binding cannot change.
    names = kubectl.run("get", "clusterroles", "-o", "name").stdout.split()
    assert {"clusterrole.rbac.authorization.k8s.io/cluster-admin", "clusterrole.rbac.authorization.k8s.io/view"} <= set(names)
    changed = kubectl.run("patch", "rolebinding", "readers", "--type=merge", "-p", '{"roleRef":{"name":"other"}}', check=False)
    assert changed.returncode == 1 and "cannot change roleRef" in changed.stderr
    refused = kubectl.run("create", "role", "bad", "--verb=get", "--resource=nosuchthings", check=False)
    assert refused.returncode == 1
