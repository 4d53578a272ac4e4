"""kubernetes/sample-controller on kplane, end to end, as a user runs it.

The ``sample_controller`` package is pip-installed into the environment (and uninstalled after the
module), ``kplane serve`` runs with its in-process controllers and simulated nodes (which make
pods Ready), and ``sample-controller --kubeconfig ...`` runs as a process of its own.
"""

from __future__ import annotations

import importlib
import json
import os
import shutil
import signal
import subprocess
import sys
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, TypeVar

import pytest

from core.client.informer import Informer
from core.client.rest import RESTClient
from tests.kubectl_cli import Kubectl
from tests.servers import Served, serving

PACKAGE = Path(__file__).parents[1] / "sample_controller"
EXAMPLE_FOO = PACKAGE / "artifacts" / "examples" / "example-foo.yaml"
DISTRIBUTION = "kplane-sample-controller"
API_VERSION = "samplecontroller.k8s.io/v1alpha1"
FOOS = f"/apis/{API_VERSION}/namespaces/default/foos"
DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
EVENTS = "/api/v1/namespaces/default/events"
T = TypeVar("T")

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")


def pip(*args: str) -> None:
    subprocess.run([sys.executable, "-m", "pip", "--disable-pip-version-check", "-q", *args], check=True)


@pytest.fixture(scope="module")
def script(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """The installed ``sample-controller`` console script. Built from a copy, so no build files land in the tree."""
    source = tmp_path_factory.mktemp("package") / "sample_controller"
    shutil.copytree(PACKAGE, source, ignore=shutil.ignore_patterns("build", "*.egg-info", "__pycache__"))
    pip("install", "--no-build-isolation", "--no-deps", str(source))
    try:
        yield Path(sys.executable).parent / "sample-controller"
    finally:
        pip("uninstall", "-y", DISTRIBUTION)


@pytest.fixture(scope="module")
def served(script: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("server")) as served:
        yield served


class SampleController:
    """One ``sample-controller`` process at a time, its output in a file."""

    def __init__(self, script: Path, kubeconfig: Path, log: Path) -> None:
        self.script = script
        self.kubeconfig = kubeconfig
        self.log_path = log
        self.process: subprocess.Popen[bytes] | None = None

    def start(self) -> None:
        with self.log_path.open("ab") as out:
            self.process = subprocess.Popen([str(self.script), "--kubeconfig", str(self.kubeconfig)], stdout=out, stderr=subprocess.STDOUT)

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
def controller(served: Served, script: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[SampleController]:
    ctl = SampleController(script, served.kubeconfig, tmp_path_factory.mktemp("controller") / "sample-controller.log")
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


def eventually(probe: Callable[[], T | None], what: str, timeout: float = 30.0) -> T:
    """The first truthy result of ``probe``, polled until ``timeout``."""
    deadline = time.monotonic() + timeout
    while True:
        found = probe()
        if found:
            return found
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout}s waiting for {what}")
        time.sleep(0.1)


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


# -- the tests --------------------------------------------------------------------------------
async def test_handlers_queue_the_foo_that_controls_a_changed_deployment(script: Path) -> None:
    """The controller's wiring, in this process and without a server: which changes queue which Foo."""
    importlib.invalidate_caches()  # the package was installed after this process started
    from samplecontroller.controller import Controller, new_deployment, rate_limiter

    client = RESTClient("http://127.0.0.1:9")  # never contacted
    try:
        deployments = Informer(client.resource("apps", "v1", "deployments"))
        foos = Informer(client.resource("samplecontroller.k8s.io", "v1alpha1", "foos"))
        example = foo("example", "example-web", 2)
        example["metadata"].update(namespace="default", uid="u-1", resourceVersion="1")
        foos.indexer.put(example)
        controller = Controller(client, client, deployments, foos)
        queue = controller.workqueue
        assert len(queue) == 1  # known Foos are handed to the new handler as additions

        async def drained() -> list[str]:
            keys = []
            while len(queue):
                keys.append(await queue.get())
                queue.done(keys[-1])
            return keys

        assert await drained() == ["default/example"]
        owned = new_deployment(example)
        owned["metadata"]["resourceVersion"] = "5"
        assert owned["metadata"]["ownerReferences"][0]["uid"] == "u-1" and owned["spec"]["replicas"] == 2
        controller.handle_object(owned)
        assert await drained() == ["default/example"]
        controller._deployment_updated(owned, owned)  # a resync: same resourceVersion, ignored
        assert await drained() == []
        controller._deployment_updated(owned, {**owned, "metadata": {**owned["metadata"], "resourceVersion": "6"}})
        assert await drained() == ["default/example"]
        foreign = {**owned, "metadata": {**owned["metadata"], "ownerReferences": [{**owned["metadata"]["ownerReferences"][0], "kind": "Bar"}]}}
        orphan = {**owned, "metadata": {**owned["metadata"], "ownerReferences": [{**owned["metadata"]["ownerReferences"][0], "name": "gone"}]}}
        for ignored in (foreign, orphan, {**owned, "metadata": {"name": "plain", "namespace": "default"}}):
            controller.handle_object(ignored)
        assert await drained() == []
        unsized = foo("unsized", "web")
        unsized["metadata"].update(namespace="default", uid="u-2")
        assert "replicas" not in new_deployment(unsized)["spec"]  # the server's default (1) applies

        limiter = rate_limiter()  # per key 5 ms doubling to 1000 s, under 50 qps with bursts of 300
        assert [limiter.when("one") for _ in range(3)] == [0.005, 0.01, 0.02]
        burst = [limiter.when(f"key-{i}") for i in range(297)]
        assert set(burst) == {0.005} and limiter.when("over") == pytest.approx(0.02, abs=0.005)
    finally:
        await client.close()


def test_example_foo_gets_an_owned_deployment_whose_available_replicas_it_reports(
        served: Served, controller: SampleController, kubectl: Kubectl) -> None:
    assert "created" in kubectl.run("apply", "-f", str(EXAMPLE_FOO)).stdout
    example = eventually(converged(served, "example-foo", "example-foo", 1), "example-foo to converge")
    deployment = get(served, f"{DEPLOYMENTS}/example-foo")
    assert deployment is not None
    assert deployment["metadata"]["ownerReferences"] == [{
        "apiVersion": API_VERSION, "kind": "Foo", "name": "example-foo", "uid": example["metadata"]["uid"],
        "controller": True, "blockOwnerDeletion": True,
    }]
    labels = {"app": "nginx", "controller": "example-foo"}
    assert deployment["spec"]["selector"] == {"matchLabels": labels}
    assert deployment["spec"]["template"]["metadata"]["labels"] == labels
    assert [(c["name"], c["image"]) for c in deployment["spec"]["template"]["spec"]["containers"]] == [("nginx", "nginx:latest")]
    assert any(m["manager"] == "sample-controller" and "subresource" not in m for m in deployment["metadata"]["managedFields"])
    # The status was written through /status, by the controller's field manager.
    assert any(m["manager"] == "sample-controller" and m.get("subresource") == "status" for m in example["metadata"]["managedFields"])
    synced = eventually(lambda: events_about(served, "example-foo", "Synced"), "a Synced event")
    assert synced[0]["type"] == "Normal" and synced[0]["message"] == "Foo synced successfully"
    assert synced[0]["source"] == {"component": "sample-controller"}
    assert synced[0]["involvedObject"]["apiVersion"] == API_VERSION and synced[0]["involvedObject"]["uid"] == example["metadata"]["uid"]


def test_the_deployment_and_the_status_follow_spec_replicas(served: Served, controller: SampleController) -> None:
    create_foo(served, "scaled", "scaled-web", 2)
    eventually(converged(served, "scaled", "scaled-web", 2), "scaled to run 2")
    set_replicas(served, "scaled", 4)
    eventually(converged(served, "scaled", "scaled-web", 4), "scaled to scale up to 4")
    set_replicas(served, "scaled", 1)
    eventually(converged(served, "scaled", "scaled-web", 1), "scaled to scale down to 1")


def test_a_deployment_of_that_name_not_controlled_by_the_foo_is_a_warning(
        served: Served, controller: SampleController, kubectl: Kubectl) -> None:
    kubectl.run("create", "deployment", "taken", "--image=nginx:1.25")
    create_foo(served, "thief", "taken", 3)
    warnings = eventually(lambda: events_about(served, "thief", "ErrResourceExists"), "an ErrResourceExists event")
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
    eventually(converged(served, "survivor", "survivor-web", 2), "survivor to run 2")
    create_foo(served, "midway", "midway-web", 3)
    time.sleep(0.05)  # most likely while the controller is syncing it
    controller.kill()
    set_replicas(served, "survivor", 5)  # changes it does not see while down
    create_foo(served, "latecomer", "latecomer-web", 2)
    controller.start()
    eventually(converged(served, "survivor", "survivor-web", 5), "survivor to scale to 5 after the restart")
    eventually(converged(served, "midway", "midway-web", 3), "midway to converge after the restart")
    eventually(converged(served, "latecomer", "latecomer-web", 2), "latecomer to converge after the restart")


def test_deleting_a_foo_deletes_its_deployment_through_the_garbage_collector(
        served: Served, controller: SampleController, kubectl: Kubectl) -> None:
    create_foo(served, "doomed", "doomed-web", 2)
    eventually(converged(served, "doomed", "doomed-web", 2), "doomed to run 2")
    kubectl.run("delete", "foo", "doomed")
    eventually(lambda: get(served, f"{DEPLOYMENTS}/doomed-web") is None, "the garbage collector to delete doomed-web")
    selector = "app=nginx,controller=doomed"
    eventually(lambda: not kubectl.json("get", "pods", "-l", selector)["items"], "doomed's pods to go")


def test_kubectl_get_foos(served: Served, kubectl: Kubectl) -> None:
    create_foo(served, "listed", "", None)  # no deploymentName: the controller leaves it alone
    lines = kubectl.run("get", "foos").stdout.splitlines()
    assert lines[0].split() == ["NAME", "AGE"]
    assert "listed" in [line.split()[0] for line in lines[1:]]
    assert kubectl.json("get", "foo", "listed")["spec"] == {"deploymentName": ""}
    resources = kubectl.run("api-resources", "--api-group=samplecontroller.k8s.io").stdout
    assert "foos" in resources and "samplecontroller.k8s.io/v1alpha1" in resources and "Foo" in resources


@pytest.mark.parametrize("replicas, detail", [
    (11, "spec.replicas in body should be less than or equal to 10"),
    (0, "spec.replicas in body should be greater than or equal to 1"),
])
def test_replicas_are_validated_like_the_crd_schema(served: Served, replicas: int, detail: str) -> None:
    code, body = call(served, "POST", FOOS, foo(f"invalid-{replicas}", "x", replicas))
    assert code == 422, body
    assert body["message"] == f'Foo.samplecontroller.k8s.io "invalid-{replicas}" is invalid: spec.replicas: Invalid value: {replicas}: {detail}'
    assert body["details"]["causes"] == [{"reason": "FieldValueInvalid", "message": f"Invalid value: {replicas}: {detail}", "field": "spec.replicas"}]


def test_status_is_a_subresource(served: Served) -> None:
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


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_a_signal_stops_it_cleanly(served: Served, script: Path, tmp_path: Path, sig: signal.Signals) -> None:
    ctl = SampleController(script, served.kubeconfig, tmp_path / "log")
    ctl.start()
    eventually(lambda: "Started workers" in ctl.log(), "the workers to start", timeout=15)
    assert ctl.stop(sig) == 0, ctl.log()
    assert "Shutting down workers" in ctl.log() and "Traceback" not in ctl.log()


def test_a_bad_kubeconfig_is_a_clear_error(script: Path, tmp_path: Path) -> None:
    done = subprocess.run([str(script), "--kubeconfig", str(tmp_path / "missing")], check=False, capture_output=True, text=True, timeout=20)
    assert done.returncode == 1 and "Error building kubeconfig" in done.stderr and "Traceback" not in done.stderr


def test_the_controller_never_failed_unexpectedly(controller: SampleController) -> None:
    """Last: whatever the tests above put it through, no traceback (a bug) was logged."""
    assert "Traceback" not in controller.log()
    assert controller.stop() == 0
