"""kopf's canonical example: the CRD ``kopfexamples.kopf.dev`` (kopf's examples/crd.yaml) and an
operator for it (tests/fixtures/crds/kopfexample_operator.py) against the ``kplane`` fixture.
What kopf's handlers did is read back from the server: the status they wrote, the annotations kopf
keeps its state in, and its finalizer, added while the object lives and removed on delete."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from kplane.core.pytest_plugin import Cluster, has_condition
from tests.waiting import wait_until

kopf_testing = pytest.importorskip("kopf.testing")

CRDS = Path(__file__).resolve().parent / "fixtures" / "crds"
OPERATOR = CRDS / "kopfexample_operator.py"
API_VERSION = "kopf.dev/v1"
KIND = "KopfExample"
FINALIZER = "kopf.zalando.org/KopfFinalizerMarker"
LAST_HANDLED = "kopf.zalando.org/last-handled-configuration"


def served(kplane: Cluster) -> bool:
    try:
        kplane.list(API_VERSION, KIND)
    except LookupError:
        return False
    return True


@pytest.mark.kplane(secure=True)  # as a user runs it: HTTPS, the kubeconfig's CA and client certificate
def test_kopfs_example_operator_on_its_crd(kplane: Cluster, monkeypatch: pytest.MonkeyPatch) -> None:
    [crd] = kplane.apply(CRDS / "kopf-crd.yaml")
    assert crd["metadata"]["name"] == "kopfexamples.kopf.dev"
    kplane.wait_for("apiextensions.k8s.io/v1", "CustomResourceDefinition", "kopfexamples.kopf.dev",
                    condition="Established", timeout=10)
    wait_until(lambda: served(kplane), timeout=10, what="kopfexamples to be served")

    monkeypatch.setenv("KUBECONFIG", str(kplane.kubeconfig))
    args = ["run", "--standalone", "--namespace=default", str(OPERATOR)]
    with kopf_testing.KopfRunner(args, timeout=60) as runner:
        [obj] = kplane.apply(CRDS / "kopf-obj.yaml")
        name = obj["metadata"]["name"]
        # kopf patches in steps (handlers' results, then the state it keeps): wait for the last.
        created = kplane.wait_for(API_VERSION, KIND, name, timeout=20,
                                  until=lambda o: (o.get("status") or {}).get("create_fn") == {"message": "hello world"}
                                  and o["status"].get("field") == {"new": "value"}  # old=None: null removes a key
                                  and LAST_HANDLED in o["metadata"].get("annotations", {}))
        assert created is not None
        assert FINALIZER in created["metadata"]["finalizers"]
        last = json.loads(created["metadata"]["annotations"][LAST_HANDLED])
        assert last["spec"] == {"duration": "1m", "field": "value", "items": ["item1", "item2"]}
        assert created["metadata"]["annotations"]["someannotation"] == "somevalue"  # the user's, kept
        # The status went through /status (the CRD's subresource): the spec is the user's alone.
        assert created["spec"] == obj["spec"]

        kplane.request("PATCH", kplane.path(API_VERSION, KIND, name), {"spec": {"field": "changed"}},
                       content_type="application/merge-patch+json")
        updated = kplane.wait_for(API_VERSION, KIND, name, timeout=20,
                                  until=lambda o: (o.get("status") or {}).get("field") == {"old": "value", "new": "changed"}
                                  and o["status"].get("updated") == ["spec.field"]
                                  and json.loads(o["metadata"]["annotations"][LAST_HANDLED])["spec"]["field"] == "changed")
        assert updated is not None
        assert updated["metadata"]["generation"] == 2  # one spec change; kopf's status writes bump nothing

        kplane.delete(API_VERSION, KIND, name)
        kplane.wait_for(API_VERSION, KIND, name, deleted=True, timeout=20)  # gone once kopf removed its finalizer
    assert runner.exception is None and runner.exit_code == 0, runner.output
    # The field handler runs on creation too (from no value to "value"), then on the update.
    for done in ("Creation is processed: 2 succeeded; 0 failed.", "Updating is processed: 2 succeeded; 0 failed.",
                 "Deletion is processed: 1 succeeded; 0 failed.", "Handler 'field_fn/spec.field' succeeded."):
        assert done in runner.output, runner.output
    assert "deleting kopf-example-1" in runner.output
    assert has_condition(kplane.get("apiextensions.k8s.io/v1", "CustomResourceDefinition", "kopfexamples.kopf.dev", namespace="")
                         or {}, "Established")
