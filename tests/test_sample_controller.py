"""kubernetes/sample-controller on kplane, end to end, as a user runs it.

The ``sample_controller`` package is pip-installed (from a copy, so no build files land in the
tree) into a virtual environment of this module's own (``tests/isolated.py``): kplane's shared
``.venv``, and so every other server started meanwhile (a parallel test run's), never sees the Foo
plugin. From that environment, the package's own tests (``sample_controller/tests``: the
controller in-process against the ``kplane`` fixture's server) run and must pass; ``kplane serve``
runs with its in-process controllers and simulated nodes (which make pods Ready); and
``sample-controller --kubeconfig ...`` runs as a process of its own.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.isolated import Venv
from tests.kubectl_cli import Kubectl
from tests.waiting import wait_until
from tests.servers import Served, serving

PACKAGE = Path(__file__).resolve().parents[1] / "sample_controller"
EXAMPLE_FOO = PACKAGE / "artifacts" / "examples" / "example-foo.yaml"
DISTRIBUTION = "kplane-sample-controller"
API_VERSION = "samplecontroller.k8s.io/v1alpha1"
FOOS = f"/apis/{API_VERSION}/namespaces/default/foos"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
EVENTS = "/api/v1/namespaces/default/events"
PACKAGE_TESTS = 3  # in sample_controller/tests

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")


@dataclass(frozen=True)
class Installed:
    source: Path  # the copy of sample_controller/ that was installed
    venv: Venv  # where

    @property
    def script(self) -> Path:
        """The ``sample-controller`` console script pip wrote, running with the environment's python."""
        return self.venv.bin / "sample-controller"


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Installed:
    """The package installed from a copy into an environment of this module's own, discarded with
    the module's temporary folder (nothing to uninstall)."""
    base = tmp_path_factory.mktemp("sample_controller")
    source = base / "sample_controller"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__", ".kplane"))
    venv = Venv.create(base / "venv")
    venv.pip("install", str(source))
    return Installed(source, venv)


@pytest.fixture(scope="module")
def served(installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("server"), python=installed.venv.python) as served:
        yield served


class SampleController:
    """One ``sample-controller`` process at a time, its output in a file."""

    def __init__(self, installed: Installed, kubeconfig: Path, log: Path) -> None:
        self.installed = installed
        self.kubeconfig = kubeconfig
        self.log_path = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as out:
            self.process = subprocess.Popen([str(self.installed.script), "--kubeconfig", str(self.kubeconfig)],
                                            stdout=out, stderr=subprocess.STDOUT, env=self.installed.venv.env())

    def log(self) -> str:
        return self.log_path.read_text()

    def kill(self) -> None:
        assert self.process is not None
        self.process.kill()  # SIGKILL: no clean-up of any kind
        self.process.wait(timeout=10)

    def stop(self, sig: int = signal.SIGTERM) -> int:
        assert self.process is not None
        self.process.send_signal(sig)
        return self.process.wait(timeout=15)


@pytest.fixture(scope="module")
def controller(served: Served, installed: Installed, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SampleController]:
    ctl = SampleController(installed, served.kubeconfig, tmp_path_factory.mktemp("controller") / "sample-controller.log")
    ctl.start()
    try:
        yield ctl
    finally:
        if ctl.process is not None and ctl.process.poll() is None:
            ctl.stop()


@pytest.fixture(scope="module")
def kubectl(served: Served, tmp_path_factory: pytest.TempPathFactory) -> Kubectl:
    workdir = tmp_path_factory.mktemp("kubectl")
    env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir)}
    return Kubectl(env, workdir)


# -- small helpers ----------------------------------------------------------------------------
def call(served: Served, method: str, path: str, body: Any = None, content_type: str = "application/json") -> tuple[int, dict]:
    data = json.dumps(body).encode() if body is not None else None
    request = urllib.request.Request(served.url + path, data=data, method=method, headers={"Content-Type": content_type})
    try:
        with urllib.request.urlopen(request, timeout=10) as reply:
            return reply.status, json.loads(reply.read())
    except urllib.error.HTTPError as err:
        return err.code, json.loads(err.read())


def get(served: Served, path: str) -> dict | None:
    code, body = call(served, "GET", path)
    return body if code == 200 else None


def foo(name: str, deployment_name: str, replicas: int | None = None) -> dict:
    spec: dict[str, Any] = {"deploymentName": deployment_name}
    if replicas is not None:
        spec["replicas"] = replicas
    return {"apiVersion": API_VERSION, "kind": "Foo", "metadata": {"name": name}, "spec": spec}


def create_foo(served: Served, name: str, deployment_name: str, replicas: int | None = None) -> dict:
    code, body = call(served, "POST", FOOS, foo(name, deployment_name, replicas))
    assert code == 201, body
    return body


def set_replicas(served: Served, name: str, replicas: int) -> None:
    code, body = call(served, "PATCH", f"{FOOS}/{name}", {"spec": {"replicas": replicas}}, "application/merge-patch+json")
    assert code == 200, body


def events_about(served: Served, name: str, reason: str) -> list[dict]:
    items = (get(served, EVENTS) or {}).get("items", [])
    return [e for e in items if e["involvedObject"].get("kind") == "Foo" and e["involvedObject"]["name"] == name and e["reason"] == reason]


def converged(served: Served, name: str, deployment_name: str, replicas: int) -> Callable[[], dict | None]:
    """A probe: the Foo's Deployment asks for ``replicas`` and the Foo reports them all available."""
    def probe() -> dict | None:
        found, deployment = get(served, f"{FOOS}/{name}"), get(served, f"{DEPLOYMENTS}/{deployment_name}")
        if found is None or deployment is None or deployment["spec"]["replicas"] != replicas:
            return None
        return found if (found.get("status") or {}).get("availableReplicas") == replicas else None
    return probe


def owned_deployment(served: Served, foo_name: str, deployment_name: str, foo_uid: str) -> dict:
    """The Deployment the controller made for a Foo, checked: owned by it, built as the original builds it."""
    deployment = wait_until(lambda: get(served, f"{DEPLOYMENTS}/{deployment_name}"), what=f"{foo_name}'s Deployment")
    assert deployment["metadata"]["ownerReferences"] == [{
        "apiVersion": API_VERSION, "kind": "Foo", "name": foo_name, "uid": foo_uid,
        "controller": True, "blockOwnerDeletion": True,
    }]
    labels = {"app": "nginx", "controller": foo_name}
    assert deployment["spec"]["selector"] == {"matchLabels": labels}
    assert deployment["spec"]["template"]["metadata"]["labels"] == labels
    assert [(c["name"], c["image"]) for c in deployment["spec"]["template"]["spec"]["containers"]] == [("nginx", "nginx:latest")]
    assert any(m["manager"] == "sample-controller" and "subresource" not in m for m in deployment["metadata"]["managedFields"])
    return deployment


# -- what holds whatever serves Foo: this module's plugin, or a CRD with the status subresource --
# (tests/test_sample_controller_crd.py calls these on the original's crd-status-subresource.yaml)
def example_foo_converges(served: Served, kubectl: Kubectl, manifest: Path = EXAMPLE_FOO) -> None:
    """What the controller does with the original's example-foo.yaml."""
    assert "created" in kubectl.run("apply", "-f", str(manifest)).stdout
    example = wait_until(converged(served, "example-foo", "example-foo", 1), what="example-foo to converge")
    owned_deployment(served, "example-foo", "example-foo", example["metadata"]["uid"])
    # The status was written through /status, by the controller's field manager.
    assert any(m["manager"] == "sample-controller" and m.get("subresource") == "status" for m in example["metadata"]["managedFields"])
    synced = wait_until(lambda: events_about(served, "example-foo", "Synced"), what="a Synced event")
    assert synced[0]["type"] == "Normal" and synced[0]["message"] == "Foo synced successfully"
    assert synced[0]["source"] == {"component": "sample-controller"}
    assert synced[0]["involvedObject"]["apiVersion"] == API_VERSION and synced[0]["involvedObject"]["uid"] == example["metadata"]["uid"]


def the_deployment_follows_the_spec_and_goes_with_the_foo(served: Served, kubectl: Kubectl) -> None:
    """Replicas up and down, a new deploymentName (a new owned Deployment; the old one stays, as the
    original leaves it), then deleting the Foo takes both Deployments and their pods through the
    garbage collector, by their owner reference."""
    created = create_foo(served, "scaled", "scaled-web", 2)
    wait_until(converged(served, "scaled", "scaled-web", 2), what="scaled to run 2")
    set_replicas(served, "scaled", 4)
    wait_until(converged(served, "scaled", "scaled-web", 4), what="scaled to scale up to 4")
    set_replicas(served, "scaled", 1)
    wait_until(converged(served, "scaled", "scaled-web", 1), what="scaled to scale down to 1")
    code, body = call(served, "PATCH", f"{FOOS}/scaled", {"spec": {"deploymentName": "scaled-site"}}, "application/merge-patch+json")
    assert code == 200 and body["metadata"]["generation"] == 4, body
    wait_until(converged(served, "scaled", "scaled-site", 1), what="scaled's new Deployment to run 1")
    owned_deployment(served, "scaled", "scaled-site", created["metadata"]["uid"])
    assert get(served, f"{DEPLOYMENTS}/scaled-web") is not None
    kubectl.run("delete", "foo", "scaled")
    # A CRD's kind reaches the collector at its next discovery (every 30 s, as kube's), hence 60 s.
    for name in ("scaled-web", "scaled-site"):
        wait_until(lambda name=name: get(served, f"{DEPLOYMENTS}/{name}") is None, timeout=60,
                   what=f"the garbage collector to delete {name}")
    wait_until(lambda: not kubectl.json("get", "pods", "-l", "app=nginx,controller=scaled")["items"], what="scaled's pods to go")


def spec_replicas_is_validated_as_the_crd_schema_says(served: Served) -> None:
    """``minimum: 1``, ``maximum: 10``: a 422 with kube's message and cause, on create and on update,
    nothing stored; a field the schema does not declare is a strict decoding error."""
    for replicas, detail in ((11, "spec.replicas in body should be less than or equal to 10"),
                             (0, "spec.replicas in body should be greater than or equal to 1")):
        code, body = call(served, "POST", FOOS, foo(f"invalid-{replicas}", "x", replicas))
        assert code == 422 and body["reason"] == "Invalid", body
        assert body["message"] == f'Foo.samplecontroller.k8s.io "invalid-{replicas}" is invalid: spec.replicas: Invalid value: {replicas}: {detail}'
        assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "message": f"Invalid value: {replicas}: {detail}", "field": "spec.replicas"}]
        assert call(served, "GET", f"{FOOS}/invalid-{replicas}")[0] == 404
    stored = create_foo(served, "bounded", "", 10)
    code, body = call(served, "PATCH", f"{FOOS}/bounded", {"spec": {"replicas": 11}}, "application/merge-patch+json")
    assert code == 422 and body["details"]["causes"][0]["field"] == "spec.replicas", body
    assert get(served, f"{FOOS}/bounded") == stored
    code, body = call(served, "POST", f"{FOOS}?fieldValidation=Strict", {**foo("strict", "x"), "spec": {"deploymentName": "x", "size": 1}})
    assert code == 400 and body["message"] == 'Foo in version "v1alpha1" cannot be handled as a Foo: strict decoding error: unknown field "spec.size"', body


def kubectl_gets_foos(served: Served, kubectl: Kubectl) -> None:
    """NAME and AGE, the columns of a CRD without additionalPrinterColumns; Foo in api-resources."""
    create_foo(served, "listed", "", None)  # no deploymentName: the controller leaves it alone
    lines = kubectl.run("get", "foos").stdout.splitlines()
    assert lines[0].split() == ["NAME", "AGE"]
    assert "listed" in [line.split()[0] for line in lines[1:]]
    assert kubectl.json("get", "foo", "listed")["spec"] == {"deploymentName": ""}
    resources = kubectl.run("api-resources", "--api-group=samplecontroller.k8s.io").stdout
    assert "foos" in resources and "samplecontroller.k8s.io/v1alpha1" in resources and "Foo" in resources


def status_is_a_subresource(served: Served) -> None:
    """As for a CRD with ``subresources: {status: {}}``: the resource ignores status, /status
    ignores everything but status, and updates must carry a resourceVersion."""
    created = create_foo(served, "split", "", 2)
    code, body = call(served, "POST", FOOS, {**foo("split-2", "", 2), "status": {"availableReplicas": 9}})
    assert code == 201 and "status" not in body and body["metadata"]["generation"] == 1

    through_status = {**created, "spec": {"deploymentName": "", "replicas": 7}, "status": {"availableReplicas": 3},
                      "metadata": {**created["metadata"], "labels": {"ignored": "yes"}}}
    code, body = call(served, "PUT", f"{FOOS}/split/status", through_status)
    assert code == 200, body
    assert body["spec"] == {"deploymentName": "", "replicas": 2} and body["status"] == {"availableReplicas": 3}
    assert "labels" not in body["metadata"] and body["metadata"]["generation"] == 1

    through_main = {**body, "spec": {"deploymentName": "", "replicas": 5}, "status": {"availableReplicas": 0}}
    code, body = call(served, "PUT", f"{FOOS}/split", through_main)
    assert code == 200, body
    assert body["spec"]["replicas"] == 5 and body["status"] == {"availableReplicas": 3} and body["metadata"]["generation"] == 2

    unconditional = {**foo("split", "", 6)}
    code, body = call(served, "PUT", f"{FOOS}/split", unconditional)
    assert code == 422 and body["details"]["causes"][0]["field"] == "metadata.resourceVersion"


# -- the tests --------------------------------------------------------------------------------
def test_the_package_passes_its_own_tests(installed: Installed) -> None:
    """``pytest`` of the environment on the package's tests (in the installed copy), as its author
    runs them: the controller's wiring, and its sync loop against the ``kplane`` fixture's server."""
    began = time.monotonic()
    # hypothesis's pytest plugin (in kplane's .venv, unused here) takes seconds to import.
    done = subprocess.run([str(installed.venv.bin / "pytest"), "-q", "-p", "no:cacheprovider", "-p", "no:hypothesispytest",
                           "-o", "asyncio_default_fixture_loop_scope=function", "tests"],
                          cwd=installed.source, env=installed.venv.env(), capture_output=True, text=True, check=False, timeout=300)
    assert done.returncode == 0 and f"{PACKAGE_TESTS} passed" in done.stdout, done.stdout + done.stderr
    print(f"sample_controller/tests: {done.stdout.splitlines()[-1]} ({time.monotonic() - began:.1f}s with start-up)")


def test_example_foo_gets_an_owned_deployment_whose_available_replicas_it_reports(
        served: Served, controller: SampleController, kubectl: Kubectl) -> None:
    example_foo_converges(served, kubectl)


def test_the_deployment_follows_the_spec_and_goes_with_the_foo(served: Served, controller: SampleController, kubectl: Kubectl) -> None:
    the_deployment_follows_the_spec_and_goes_with_the_foo(served, kubectl)


def test_spec_replicas_is_validated_as_the_crd_schema_says(served: Served) -> None:
    spec_replicas_is_validated_as_the_crd_schema_says(served)


def test_status_is_a_subresource(served: Served) -> None:
    status_is_a_subresource(served)


def test_kubectl_get_foos(served: Served, kubectl: Kubectl) -> None:
    kubectl_gets_foos(served, kubectl)


def test_a_deployment_of_that_name_not_controlled_by_the_foo_is_a_warning(
        served: Served, controller: SampleController, kubectl: Kubectl) -> None:
    kubectl.run("create", "deployment", "taken", "--image=nginx:1.25")
    create_foo(served, "thief", "taken", 3)
    warnings = wait_until(lambda: events_about(served, "thief", "ErrResourceExists"), what="an ErrResourceExists event")
    assert warnings[0]["type"] == "Warning"
    assert warnings[0]["message"] == 'Resource "taken" already exists and is not managed by Foo'
    time.sleep(0.5)  # retries keep failing, and never touch the Deployment
    deployment = get(served, f"{DEPLOYMENTS}/taken")
    assert deployment is not None and not deployment["metadata"].get("ownerReferences") and deployment["spec"]["replicas"] == 1
    assert not ((get(served, f"{FOOS}/thief") or {}).get("status"))
    assert "Error syncing; requeuing for later retry objectReference=default/thief" in controller.log()
    described = kubectl.run("describe", "foo", "thief").stdout
    assert "ErrResourceExists" in described and "sample-controller" in described


def test_the_controller_converges_after_kill_9(served: Served, controller: SampleController) -> None:
    create_foo(served, "survivor", "survivor-web", 2)
    wait_until(converged(served, "survivor", "survivor-web", 2), what="survivor to run 2")
    create_foo(served, "midway", "midway-web", 3)
    time.sleep(0.05)  # most likely while the controller is syncing it
    controller.kill()
    set_replicas(served, "survivor", 5)  # changes it does not see while down
    create_foo(served, "latecomer", "latecomer-web", 2)
    controller.start()
    wait_until(converged(served, "survivor", "survivor-web", 5), what="survivor to scale to 5 after the restart")
    wait_until(converged(served, "midway", "midway-web", 3), what="midway to converge after the restart")
    wait_until(converged(served, "latecomer", "latecomer-web", 2), what="latecomer to converge after the restart")


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_it_cleanly(served: Served, installed: Installed, tmp_path: Path, sig: signal.Signals) -> None:
    ctl = SampleController(installed, served.kubeconfig, tmp_path / "log")
    ctl.start()
    wait_until(lambda: "Started workers" in ctl.log(), what="the workers to start", timeout=15)
    assert ctl.stop(sig) == 0, ctl.log()
    assert "Shutting down workers" in ctl.log() and "Traceback" not in ctl.log()


def test_a_bad_kubeconfig_is_a_clear_error(installed: Installed, tmp_path: Path) -> None:
    done = subprocess.run([str(installed.script), "--kubeconfig", str(tmp_path / "missing")], env=installed.venv.env(),
                          check=False, capture_output=True, text=True, timeout=20)
    assert done.returncode == 1 and "Error building kubeconfig" in done.stderr and "Traceback" not in done.stderr


def test_the_controller_never_failed_unexpectedly(controller: SampleController) -> None:
    """Last: whatever the tests above put it through, no traceback (a bug) was logged."""
    assert "Traceback" not in controller.log()
    assert controller.stop() == 0
