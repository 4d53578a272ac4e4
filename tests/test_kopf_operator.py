"""A kopf operator (kopf from PyPI, examples/kopf_operator) against the `kplane` fixture."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from kplane.core.pytest_plugin import Cluster

kopf_testing = pytest.importorskip("kopf.testing")

OPERATOR = Path(__file__).resolve().parents[1] / "examples" / "kopf_operator" / "operator.py"


@pytest.mark.kplane(secure=True)  # as a user runs it: HTTPS, the kubeconfig's CA and client certificate
def test_the_operator_reacts_to_creates_and_updates(kplane: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("KUBECONFIG", str(kplane.kubeconfig))
    args = ["run", "--standalone", "--namespace=default", str(OPERATOR)]
    with kopf_testing.KopfRunner(args, timeout=60) as runner:
        kplane.apply({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "hi", "labels": {"greet": "yes"}}, "data": {}})
        kplane.apply({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "quiet"}, "data": {}})
        kplane.wait_for("v1", "ConfigMap", "hi", until=lambda o: o.get("data", {}).get("greeting") == "hello hi")
        kplane.request("PATCH", kplane.path("v1", "ConfigMap", "hi"), {"data": {"name": "kplane"}},
                       content_type="application/merge-patch+json")
        kplane.wait_for("v1", "ConfigMap", "hi", until=lambda o: o["data"].get("greeting") == "hello kplane")
    assert runner.exception is None and runner.exit_code == 0, runner.output
    assert "greeting" not in (kplane.get("v1", "ConfigMap", "quiet") or {}).get("data", {})
    assert "Handler 'greet' succeeded." in runner.output


GREETER_ROLE = """
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: greeter}
rules:
- {apiGroups: [""], resources: [configmaps], verbs: [get, list, watch, patch]}
- {apiGroups: ["", events.k8s.io], resources: [events], verbs: [create]}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: greeter}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: greeter}
subjects:
- {kind: ServiceAccount, name: greeter, namespace: default}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRole
metadata: {name: greeter-namespaces}
rules:
- {apiGroups: [""], resources: [namespaces], verbs: [list, watch]}  # kopf looks for its namespaces
---
apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata: {name: greeter-namespaces}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: greeter-namespaces}
subjects:
- {kind: ServiceAccount, name: greeter, namespace: default}
"""


@pytest.mark.kplane(secure=True)
def test_the_operator_under_a_restricted_role(kplane: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    """As its ServiceAccount: first with no role (RBAC refuses its lists), then with the Role it needs."""
    monkeypatch.setenv("KUBECONFIG", str(kplane.service_account_kubeconfig("greeter")))
    args = ["run", "--standalone", "--namespace=default", str(OPERATOR)]
    with kopf_testing.KopfRunner(args, timeout=30) as runner:
        kplane.apply({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "early", "labels": {"greet": "yes"}}, "data": {}})
        time.sleep(2)  # kopf's first lists and its first retry (kopf tells its output only once stopped)
    assert 'is forbidden: User "system:serviceaccount:default:greeter" cannot list resource' in runner.output, \
        runner.output
    assert "greeting" not in (kplane.get("v1", "ConfigMap", "early") or {}).get("data", {})

    kplane.apply(GREETER_ROLE)
    with kopf_testing.KopfRunner(args, timeout=60) as runner:
        kplane.apply({"apiVersion": "v1", "kind": "ConfigMap",
                      "metadata": {"name": "hi", "labels": {"greet": "yes"}}, "data": {}})
        kplane.wait_for("v1", "ConfigMap", "hi", until=lambda o: o.get("data", {}).get("greeting") == "hello hi")
    assert runner.exception is None and runner.exit_code == 0, runner.output
