"""StatefulSets end to end against `kplane serve` with its controllers and simulated nodes, driven
by the real kubectl (apply, rollout status/history/undo, set image, scale, describe, delete) and
the official Python client: ordered pods with stable identities, claims per replica, partitions,
OnDelete, Parallel pods and the claims' retention policy."""

from __future__ import annotations

import json
import threading
import time
import urllib.request
from typing import Any

import pytest
import yaml

from tests.kubectl_cli import Kubectl
from tests.waiting import wait_until

kubernetes = pytest.importorskip("kubernetes")


def manifest(name: str, replicas: int = 3, **spec: Any) -> str:
    body = {"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": name},
            "spec": {"serviceName": name, "replicas": replicas, "selector": {"matchLabels": {"app": name}},
                     "template": {"metadata": {"labels": {"app": name}},
                                  "spec": {"containers": [{"name": "app", "image": "nginx:1.25",
                                                           "volumeMounts": [{"name": "data", "mountPath": "/data"}]}]}},
                     "volumeClaimTemplates": [{"metadata": {"name": "data"},
                                               "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}],
                     **spec}}
    return yaml.safe_dump(body)


def pods(kubectl: Kubectl, name: str) -> dict[str, dict[str, Any]]:
    return {p["metadata"]["name"]: p for p in kubectl.json("get", "pods", "-l", f"app={name}")["items"]}


def claims(kubectl: Kubectl, name: str) -> list[str]:
    return sorted(c["metadata"]["name"] for c in kubectl.json("get", "pvc", "-l", f"app={name}")["items"])


def revision(pod: dict[str, Any]) -> str:
    return pod["metadata"]["labels"]["controller-revision-hash"]


def ready(pod: dict[str, Any]) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and any(
        c["type"] == "Ready" and c["status"] == "True" for c in pod["status"].get("conditions") or [])


def rollout_status(kubectl: Kubectl, name: str) -> str:
    return kubectl.run("rollout", "status", f"sts/{name}", "--timeout=60s", timeout=90).stdout


def history(kubectl: Kubectl, name: str) -> list[str]:
    out = kubectl.run("rollout", "history", f"sts/{name}").stdout
    return [line.split()[0] for line in out.splitlines()[2:] if line.strip()]


def test_ordered_pods_have_stable_identities_and_claims(kubectl: Kubectl) -> None:
    server = yaml.safe_load((kubectl.workdir / "data" / "kubeconfig").read_text())["clusters"][0]["cluster"]["server"]
    samples: list[list[dict[str, Any]]] = []
    stop = threading.Event()

    def sample() -> None:  # straight from the server, every few milliseconds, while the set comes up
        while not stop.is_set():
            with urllib.request.urlopen(f"{server}/api/v1/namespaces/default/pods?labelSelector=app%3Dweb", timeout=5) as reply:
                samples.append(json.loads(reply.read())["items"])
            time.sleep(0.01)

    thread = threading.Thread(target=sample, daemon=True)
    thread.start()
    try:
        kubectl.apply_file("apply", manifest("web"))
        assert "partitioned roll out complete: 3 new pods have been updated..." in rollout_status(kubectl, "web")
    finally:
        stop.set()
        thread.join(timeout=10)
    for items in samples:  # OrderedReady: web-i exists only once web-(i-1) is Running and Ready
        by_name = {p["metadata"]["name"]: p for p in items}
        for i in (1, 2):
            if f"web-{i}" in by_name:
                assert ready(by_name[f"web-{i - 1}"]), sorted(by_name)
    live = kubectl.json("get", "sts", "web")
    status = live["status"]
    assert status["replicas"] == status["readyReplicas"] == status["availableReplicas"] == status["updatedReplicas"] == 3
    assert status["currentRevision"] == status["updateRevision"] and status["observedGeneration"] == 1
    found = pods(kubectl, "web")
    assert sorted(found) == ["web-0", "web-1", "web-2"]
    for i in range(3):
        pod = found[f"web-{i}"]
        assert pod["spec"]["hostname"] == f"web-{i}" and pod["spec"]["subdomain"] == "web"
        assert pod["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"] == f"web-{i}"
        assert pod["metadata"]["labels"]["apps.kubernetes.io/pod-index"] == str(i)
        assert revision(pod) == status["updateRevision"]
        assert pod["spec"]["volumes"][0] == {"name": "data", "persistentVolumeClaim": {"claimName": f"data-web-{i}"}}
        assert pod["metadata"]["ownerReferences"][0]["kind"] == "StatefulSet"
    assert claims(kubectl, "web") == ["data-web-0", "data-web-1", "data-web-2"]
    assert kubectl.run("get", "sts", "web").stdout.splitlines()[1].split()[:2] == ["web", "3/3"]
    revisions = kubectl.run("get", "controllerrevisions").stdout
    assert status["updateRevision"] in revisions and "statefulset.apps/web" in revisions

    described = kubectl.run("describe", "sts", "web").stdout
    assert "Pods Status:        3 Running / 0 Waiting / 0 Succeeded / 0 Failed" in described
    assert "create Pod web-2 in StatefulSet web successful" in described and "create Claim data-web-0 Pod web-0" in described


def test_rollout_history_undo_and_delete_keeps_claims(kubectl: Kubectl) -> None:
    kubectl.apply_file("apply", manifest("roll", replicas=2))
    rollout_status(kubectl, "roll")
    first = kubectl.json("get", "sts", "roll")["status"]["updateRevision"]
    kubectl.run("set", "image", "sts/roll", "app=nginx:1.26")
    out = rollout_status(kubectl, "roll")
    assert "partitioned roll out complete: 2 new pods have been updated..." in out
    second = kubectl.json("get", "sts", "roll")["status"]
    assert second["updateRevision"] != first and second["currentRevision"] == second["updateRevision"]
    assert {p["spec"]["containers"][0]["image"] for p in pods(kubectl, "roll").values()} == {"nginx:1.26"}
    assert history(kubectl, "roll") == ["1", "2"]
    assert "nginx:1.25" in kubectl.run("rollout", "history", "sts/roll", "--revision=1").stdout

    assert kubectl.run("rollout", "undo", "sts/roll").stdout.strip() == "statefulset.apps/roll rolled back"
    rollout_status(kubectl, "roll")
    assert history(kubectl, "roll") == ["2", "3"]  # revision 1 renumbered, not copied
    undone = kubectl.json("get", "sts", "roll")["status"]
    assert undone["updateRevision"] == first and {revision(p) for p in pods(kubectl, "roll").values()} == {first}

    kubectl.run("delete", "sts", "roll")
    wait_until(lambda: not pods(kubectl, "roll"), what="the pods collected")
    wait_until(lambda: "roll-" not in kubectl.run("get", "controllerrevisions").stdout, what="the revisions collected")
    assert claims(kubectl, "roll") == ["data-roll-0", "data-roll-1"]  # Retain: claims outlive the set


def test_partition_then_on_delete(kubectl: Kubectl) -> None:
    kubectl.apply_file("apply", manifest("part"))
    rollout_status(kubectl, "part")
    old = kubectl.json("get", "sts", "part")["status"]["updateRevision"]
    patch = {"spec": {"updateStrategy": {"rollingUpdate": {"partition": 2}},
                      "template": {"spec": {"containers": [{"name": "app", "image": "nginx:1.26"}]}}}}
    kubectl.run("patch", "sts", "part", "-p", json.dumps(patch))
    assert "partitioned roll out complete: 1 new pods have been updated..." in rollout_status(kubectl, "part")
    new = kubectl.json("get", "sts", "part")["status"]
    assert {name: revision(p) for name, p in pods(kubectl, "part").items()} == {
        "part-0": old, "part-1": old, "part-2": new["updateRevision"]}
    assert new["currentRevision"] == old and new["currentReplicas"] == 2 and new["updatedReplicas"] == 1

    kubectl.run("patch", "sts", "part", "--type=merge", "-p", json.dumps({"spec": {"updateStrategy": {"type": "OnDelete", "rollingUpdate": None}}}))
    on_delete = kubectl.run("rollout", "status", "sts/part", check=False)
    assert on_delete.returncode != 0 and "rollout status is only available for RollingUpdate strategy type" in on_delete.stderr
    before = {name: p["metadata"]["uid"] for name, p in pods(kubectl, "part").items()}
    kubectl.run("delete", "pod", "part-0")
    replaced = wait_until(lambda: (p := pods(kubectl, "part").get("part-0")) and p["metadata"]["uid"] != before["part-0"] and ready(p) and p,
                          what="part-0 made again")
    assert revision(replaced) == new["updateRevision"] and replaced["spec"]["containers"][0]["image"] == "nginx:1.26"
    assert pods(kubectl, "part")["part-1"]["metadata"]["uid"] == before["part-1"]  # OnDelete: the others are left alone


def test_parallel_scale_with_claims_deleted_by_policy(kubectl: Kubectl) -> None:
    policy = {"whenDeleted": "Delete", "whenScaled": "Delete"}
    kubectl.apply_file("apply", manifest("par", replicas=3, podManagementPolicy="Parallel", persistentVolumeClaimRetentionPolicy=policy))
    wait_until(lambda: kubectl.json("get", "sts", "par").get("status", {}).get("readyReplicas") == 3, what="3 ready pods")
    assert claims(kubectl, "par") == ["data-par-0", "data-par-1", "data-par-2"]
    kubectl.run("scale", "sts", "par", "--replicas=1")
    wait_until(lambda: sorted(pods(kubectl, "par")) == ["par-0"], what="the scale-down")
    wait_until(lambda: claims(kubectl, "par") == ["data-par-0"], what="the claims of the removed pods collected")

    apps = kubernetes.client.AppsV1Api(kubernetes.config.new_client_from_config(config_file=str(kubectl.workdir / "data" / "kubeconfig")))
    apps.patch_namespaced_stateful_set_scale("par", "default", {"spec": {"replicas": 2}})
    typed = wait_until(lambda: (s := apps.read_namespaced_stateful_set("par", "default")).status.ready_replicas == 2 and s,
                       what="the typed client to see 2 ready")
    assert typed.spec.pod_management_policy == "Parallel" and typed.spec.volume_claim_templates[0].metadata.name == "data"
    assert typed.spec.persistent_volume_claim_retention_policy.when_scaled == "Delete"
    assert [s.metadata.name for s in apps.list_namespaced_stateful_set("default", label_selector="").items if s.metadata.name == "par"] == ["par"]
    kubectl.run("delete", "sts", "par")
    wait_until(lambda: not pods(kubectl, "par") and not claims(kubectl, "par"), what="pods and claims collected with the set")


def healthz_seconds(kubectl: Kubectl) -> float:
    """How long the server takes to answer /healthz (its controllers share its event loop)."""
    server = yaml.safe_load((kubectl.workdir / "data" / "kubeconfig").read_text())["clusters"][0]["cluster"]["server"]
    began = time.monotonic()
    with urllib.request.urlopen(f"{server}/healthz", timeout=30) as reply:
        reply.read()
    return time.monotonic() - began


def test_a_huge_replicas_is_worked_through_sync_by_sync(kubectl: Kubectl) -> None:
    def huge(name: str, policy: str) -> str:
        body = yaml.safe_load(manifest(name, replicas=2**31 - 1, podManagementPolicy=policy))
        del body["spec"]["volumeClaimTemplates"]
        template = body["spec"]["template"]["spec"]
        template["containers"][0].pop("volumeMounts")
        template["nodeSelector"] = {"kplane.io/nowhere": "true"}  # pods stay Pending: cheap
        return yaml.safe_dump(body)

    kubectl.apply_file("apply", huge("ordered", "OrderedReady"))
    wait_until(lambda: kubectl.json("get", "sts", "ordered").get("status", {}).get("replicas") == 1, what="the first pod counted")
    assert sorted(pods(kubectl, "ordered")) == ["ordered-0"]  # the next waits for it to be ready

    kubectl.apply_file("apply", huge("wide", "Parallel"))
    worst = 0.0
    while len(names := kubectl.run("get", "pods", "-l", "app=wide", "-o", "name").stdout.split()) < 100:
        worst = max(worst, healthz_seconds(kubectl))
    kubectl.run("scale", "sts", "wide", "--replicas=0")  # soon: each pod costs events, which have a bounded queue
    assert worst < 1.0, f"/healthz took {worst:.2f}s while the set grew"
    ordinals = sorted(int(name.rsplit("-", 1)[1]) for name in names)
    assert ordinals[-1] < len(ordinals) + 500  # the lowest ordinals first, a burst at a time
    kubectl.run("delete", "sts", "ordered")
    wait_until(lambda: not kubectl.run("get", "pods", "-l", "app in (wide,ordered)", "-o", "name").stdout.strip(),
               timeout=60, what="the pods deleted on the scale-down")
    assert healthz_seconds(kubectl) < 1.0
    kubectl.run("delete", "sts", "wide")
