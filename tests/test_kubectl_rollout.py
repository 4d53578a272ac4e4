"""kubectl's Deployment workflows, end to end against `kplane serve` with its controllers and
simulated nodes: rollout status/history/undo/pause/resume, set image, scale, describe, wait, delete."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import yaml

from tests.kubectl_cli import DEPLOYMENT, Kubectl
from tests.waiting import wait_until

REVISION = "deployment.kubernetes.io/revision"


def manifest(name: str, replicas: int = 3, **spec: Any) -> str:
    body = yaml.safe_load(DEPLOYMENT.replace("web", name))
    body["spec"]["replicas"] = replicas
    body["spec"].update(spec)
    return yaml.safe_dump(body)


def apply(kubectl: Kubectl, name: str, replicas: int = 3, **spec: Any) -> None:
    kubectl.apply_file("apply", manifest(name, replicas, **spec))


def rollout_status(kubectl: Kubectl, name: str, timeout: str = "60s", check: bool = True) -> Any:
    return kubectl.run("rollout", "status", f"deploy/{name}", f"--timeout={timeout}", check=check, timeout=90)


def replica_sets(kubectl: Kubectl, name: str) -> list[dict[str, Any]]:
    """The Deployment's ReplicaSets by revision (those matching its labels; the tests never share labels)."""
    items = kubectl.json("get", "rs", "-l", f"app={name}")["items"]
    return sorted(items, key=lambda rs: int(rs["metadata"]["annotations"][REVISION]))


def ready_pods(pods: list[dict[str, Any]]) -> list[dict[str, Any]]:
    return [p for p in pods if not p["metadata"].get("deletionTimestamp")
            and any(c["type"] == "Ready" and c["status"] == "True" for c in (p.get("status") or {}).get("conditions") or [])]


@contextmanager
def sampling_pods(kubectl: Kubectl, name: str) -> Iterator[list[list[dict[str, Any]]]]:
    """Pods of ``app=name`` sampled straight from the server every few milliseconds, in a thread."""
    server = yaml.safe_load((kubectl.workdir / "data" / "kubeconfig").read_text())["clusters"][0]["cluster"]["server"]
    url = f"{server}/api/v1/namespaces/default/pods?labelSelector=app%3D{name}"
    samples: list[list[dict[str, Any]]] = []
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            with urllib.request.urlopen(url, timeout=5) as reply:
                samples.append(json.loads(reply.read())["items"])
            time.sleep(0.01)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        yield samples
    finally:
        stop.set()
        thread.join(timeout=10)


def test_apply_then_rollout_status_completes(kubectl: Kubectl) -> None:
    apply(kubectl, "first")
    out = rollout_status(kubectl, "first").stdout
    assert 'deployment "first" successfully rolled out' in out
    live = kubectl.json("get", "deploy", "first")
    assert live["status"]["readyReplicas"] == 3 and live["status"]["updatedReplicas"] == 3
    assert len(ready_pods(kubectl.json("get", "pods", "-l", "app=first")["items"])) == 3
    table = kubectl.run("get", "deploy", "first").stdout.splitlines()[1].split()
    assert table[:4] == ["first", "3/3", "3", "3"]


def test_scale_up_and_down(kubectl: Kubectl) -> None:
    apply(kubectl, "scaled")
    rollout_status(kubectl, "scaled")
    for replicas in (10, 3):
        kubectl.run("scale", "deploy/scaled", f"--replicas={replicas}")
        rollout_status(kubectl, "scaled")
        wait_until(lambda n=replicas: len(kubectl.json("get", "pods", "-l", "app=scaled")["items"]) == n)
        [rs] = replica_sets(kubectl, "scaled")
        assert rs["spec"]["replicas"] == replicas and rs["status"]["readyReplicas"] == replicas
    events = kubectl.run("describe", "deploy", "scaled").stdout
    assert f"Scaled up replica set {rs['metadata']['name']} from 3 to 10" in events
    assert f"Scaled down replica set {rs['metadata']['name']} from 10 to 3" in events


def test_set_image_history_and_undo(kubectl: Kubectl) -> None:
    apply(kubectl, "roll")
    rollout_status(kubectl, "roll")
    [first] = replica_sets(kubectl, "roll")
    with sampling_pods(kubectl, "roll") as samples:
        kubectl.run("set", "image", "deploy/roll", "nginx=nginx:1.26")
        rollout_status(kubectl, "roll")
    during = [s for s in samples if {p["spec"]["containers"][0]["image"] for p in s} == {"nginx:1.25", "nginx:1.26"}]
    assert during, "no sample caught the rollout half-way"
    assert min(len(ready_pods(s)) for s in samples) >= 3 - 0  # 3 replicas, maxUnavailable 25% rounds down to 0
    old, new = replica_sets(kubectl, "roll")
    assert old["metadata"]["name"] == first["metadata"]["name"] and old["spec"]["replicas"] == 0
    assert new["spec"]["replicas"] == 3 and new["metadata"]["annotations"][REVISION] == "2"

    history = kubectl.run("rollout", "history", "deploy/roll").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["1", "2"]
    one = kubectl.run("rollout", "history", "deploy/roll", "--revision=1").stdout
    assert "nginx:1.25" in one and "pod-template-hash=" in one

    assert kubectl.run("rollout", "undo", "deploy/roll").stdout.strip() == "deployment.apps/roll rolled back"
    rollout_status(kubectl, "roll")
    rss = replica_sets(kubectl, "roll")
    assert [rs["metadata"]["name"] for rs in rss] == [new["metadata"]["name"], first["metadata"]["name"]]  # no third
    assert rss[-1]["metadata"]["annotations"][REVISION] == "3" and rss[-1]["spec"]["replicas"] == 3
    live = kubectl.json("get", "deploy", "roll")
    assert live["metadata"]["annotations"][REVISION] == "3"
    assert live["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.25"
    history = kubectl.run("rollout", "history", "deploy/roll").stdout
    assert [line.split()[0] for line in history.splitlines()[2:] if line.strip()] == ["2", "3"]


def test_pause_and_resume(kubectl: Kubectl) -> None:
    apply(kubectl, "held")
    rollout_status(kubectl, "held")
    assert kubectl.run("rollout", "pause", "deploy/held").stdout.strip() == "deployment.apps/held paused"
    kubectl.run("set", "image", "deploy/held", "nginx=nginx:1.26")

    def paused() -> bool:
        live = kubectl.json("get", "deploy", "held")
        progressing = next(c for c in live["status"]["conditions"] if c["type"] == "Progressing")
        return progressing["reason"] == "DeploymentPaused" and live["status"]["observedGeneration"] == live["metadata"]["generation"]

    wait_until(paused)
    assert len(replica_sets(kubectl, "held")) == 1  # no rollout while paused
    assert kubectl.run("rollout", "resume", "deploy/held").stdout.strip() == "deployment.apps/held resumed"
    rollout_status(kubectl, "held")
    old, new = replica_sets(kubectl, "held")
    assert new["spec"]["template"]["spec"]["containers"][0]["image"] == "nginx:1.26" and old["spec"]["replicas"] == 0


def test_failing_image_exceeds_the_progress_deadline(kubectl: Kubectl) -> None:
    apply(kubectl, "stuck", replicas=2, progressDeadlineSeconds=3)
    rollout_status(kubectl, "stuck")
    kubectl.run("set", "image", "deploy/stuck", "nginx=nginx:fail")
    started = time.monotonic()
    failed = rollout_status(kubectl, "stuck", timeout="30s", check=False)
    assert failed.returncode == 1 and 'deployment "stuck" exceeded its progress deadline' in failed.stderr
    assert time.monotonic() - started < 15
    assert len(ready_pods(kubectl.json("get", "pods", "-l", "app=stuck")["items"])) == 2  # the old ones stay


def test_describe_shows_scaling_events_and_replica_sets(kubectl: Kubectl) -> None:
    apply(kubectl, "told")
    rollout_status(kubectl, "told")
    [rs] = replica_sets(kubectl, "told")
    out = kubectl.run("describe", "deploy", "told").stdout
    assert "3 desired | 3 updated | 3 total | 3 available | 0 unavailable" in out
    assert f"NewReplicaSet:   {rs['metadata']['name']} (3/3 replicas created)" in out
    assert "ScalingReplicaSet" in out and "deployment-controller" in out
    assert f"Scaled up replica set {rs['metadata']['name']} from 0 to 3" in out


def test_wait_for_available(kubectl: Kubectl) -> None:
    apply(kubectl, "waited", replicas=2)
    out = kubectl.run("wait", "--for=condition=Available", "deploy/waited", "--timeout=30s", timeout=40).stdout
    assert out.strip() == "deployment.apps/waited condition met"
    assert kubectl.json("get", "deploy", "waited")["status"]["availableReplicas"] >= 1


def test_delete_collects_replica_sets_and_pods(kubectl: Kubectl) -> None:
    apply(kubectl, "doomed", replicas=2)
    rollout_status(kubectl, "doomed")
    kubectl.run("delete", "deployment", "doomed")
    wait_until(lambda: not kubectl.json("get", "rs", "-l", "app=doomed")["items"] and not kubectl.json("get", "pods", "-l", "app=doomed")["items"])


def test_delete_with_cascade_orphan_keeps_replica_sets_and_pods(kubectl: Kubectl) -> None:
    apply(kubectl, "kept", replicas=2)
    rollout_status(kubectl, "kept")
    kubectl.run("delete", "deployment", "kept", "--cascade=orphan")
    wait_until(lambda: not kubectl.run("get", "deploy", "kept", "--ignore-not-found").stdout.strip())
    [rs] = wait_until(lambda: [rs for rs in replica_sets(kubectl, "kept") if not rs["metadata"].get("ownerReferences")] or None)
    time.sleep(1)  # give a wrong collection the time to happen
    assert rs["spec"]["replicas"] == 2
    assert len(kubectl.json("get", "pods", "-l", "app=kept")["items"]) == 2
    assert replica_sets(kubectl, "kept")[0]["metadata"]["uid"] == rs["metadata"]["uid"]
