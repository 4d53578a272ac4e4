"""kubernetes/sample-controller against the Foo its own CRDs define, not kplane's plugin.

The same installed package as tests/test_sample_controller.py, but each server here runs with
``--disable-plugin samplecontroller`` (the plugin serves samplecontroller.k8s.io/v1alpha1 Foo, which
a CRD of that group and kind would conflict with), and Foo comes from the original's unmodified
``artifacts/examples`` CRDs (copies in tests/fixtures/crds/). With ``crd-status-subresource.yaml``
the controller and the server give what they give with the plugin, checked by the helpers both
modules use (the convergence, the schema's bounds and their 422, status as a subresource, a
changed deploymentName, the garbage collector following the owner reference, ``kubectl get``);
with ``crd.yaml`` (no status subresource) the controller's UpdateStatus finds no ``/status``, as on
Kubernetes: it makes the Deployment but never writes a status, and retries.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from tests.kubectl_cli import Kubectl
from tests.servers import Served, serving
from tests.test_sample_controller import (FOOS, Installed, SampleController, call, events_about, example_foo_converges,
                                          get, installed, kubectl_gets_foos, owned_deployment,
                                          spec_replicas_is_validated_as_the_crd_schema_says, status_is_a_subresource,
                                          the_deployment_follows_the_spec_and_goes_with_the_foo)
from tests.waiting import wait_until

CRDS = Path(__file__).resolve().parent / "fixtures" / "crds"
EXAMPLE_FOO = CRDS / "example-foo.yaml"
CRD_NAME = "foos.samplecontroller.k8s.io"

__all__ = ["installed"]  # the package's environment: a fixture, shared by import

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")

Started = Callable[[str], tuple[Served, Kubectl, SampleController]]


@pytest.fixture
def on_crd(installed: Installed, tmp_path: Path) -> Iterator[Started]:
    """``start(crd_file)``: a server without the Foo plugin, the CRD applied and Established, and
    the controller running against it."""
    with serving(tmp_path / "data", "--disable-plugin", "samplecontroller", python=installed.venv.python) as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
        kubectl = Kubectl(env, tmp_path)
        controller = SampleController(installed, served.kubeconfig, tmp_path / "sample-controller.log")

        def start(crd_file: str) -> tuple[Served, Kubectl, SampleController]:
            assert "foo" not in kubectl.run("api-resources", "--api-group=samplecontroller.k8s.io").stdout  # no plugin
            assert kubectl.run("apply", "-f", str(CRDS / crd_file)).stdout == f"customresourcedefinition.apiextensions.k8s.io/{CRD_NAME} created\n"
            kubectl.run("wait", "--for=condition=Established", f"crd/{CRD_NAME}", "--timeout=10s")
            wait_until(lambda: get(served, FOOS) is not None, what="Foos to be served")
            controller.start()
            return served, kubectl, controller

        try:
            yield start
        finally:
            if controller.process is not None:
                assert controller.stop() == 0 and "Traceback" not in controller.log(), controller.log()


def test_on_crd_status_subresource_yaml_as_on_the_plugin(on_crd: Started) -> None:
    served, kubectl, _ = on_crd("crd-status-subresource.yaml")
    example_foo_converges(served, kubectl, EXAMPLE_FOO)
    the_deployment_follows_the_spec_and_goes_with_the_foo(served, kubectl)
    spec_replicas_is_validated_as_the_crd_schema_says(served)
    status_is_a_subresource(served)
    kubectl_gets_foos(served, kubectl)


def test_on_crd_yaml_without_status_the_status_update_fails_as_on_kubernetes(on_crd: Started) -> None:
    served, kubectl, controller = on_crd("crd.yaml")
    assert "created" in kubectl.run("apply", "-f", str(EXAMPLE_FOO)).stdout
    example = get(served, f"{FOOS}/example-foo")
    assert example is not None
    owned_deployment(served, "example-foo", "example-foo", example["metadata"]["uid"])
    wait_until(lambda: "Error syncing; requeuing for later retry objectReference=default/example-foo" in controller.log(),
               what="the failed status update to be logged")
    assert call(served, "PUT", f"{FOOS}/example-foo/status", example)[0] == 404
    foo = get(served, f"{FOOS}/example-foo")
    assert foo is not None and "status" not in foo
    assert not events_about(served, "example-foo", "Synced")
