"""A kopf operator (kopf from PyPI, examples/kopf_operator) against the `kplane` fixture."""

from __future__ import annotations

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
