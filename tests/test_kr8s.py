"""kr8s, a third-party client (sync and asyncio APIs), against a `kplane serve` process.

kr8s calls ``GET /version/`` first, reads discovery to resolve kinds, and its sync API runs the
asyncio one on a thread of its own, so the server is a separate process with its controllers
(Deployments get ReplicaSets and Pods become Ready on the simulated nodes).
"""

from __future__ import annotations

import threading
import uuid
from collections.abc import Callable, Iterator
from typing import Any

import pytest

from tests.servers import Served, serving
from tests.waiting import wait_until

kr8s = pytest.importorskip("kr8s")
import kr8s.asyncio  # noqa: E402
from kr8s._api import Api  # noqa: E402
from kr8s.asyncio.objects import ConfigMap as AsyncConfigMap  # noqa: E402
from kr8s.asyncio.objects import Pod as AsyncPod  # noqa: E402
from kr8s.objects import ConfigMap, Deployment, Namespace, Pod, Service  # noqa: E402

PAUSE = "registry.k8s.io/pause:3.9"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("kr8s") / "data") as process:
        yield process


@pytest.fixture
def kubeconfig(served: Served) -> Iterator[str]:
    yield str(served.kubeconfig)
    Api._instances.clear()  # kr8s caches clients per thread and arguments


@pytest.fixture
def namespace(kubeconfig: str) -> Iterator[str]:
    name = f"kr8s-{uuid.uuid4().hex[:8]}"
    ns = Namespace({"metadata": {"name": name}}, api=kr8s.api(kubeconfig=kubeconfig))
    ns.create()
    yield name
    ns.delete()


def refreshed(obj: Any, check: Callable[[], bool]) -> Callable[[], bool]:
    """``check`` on ``obj`` read again (kr8s's jsonpath wait fails on absent fields)."""
    def probe() -> bool:
        obj.refresh()
        return check()
    return probe


def pod_spec(name: str, namespace: str, **labels: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": namespace, "labels": labels},
            "spec": {"containers": [{"name": "pause", "image": PAUSE}]}}


def test_version_and_namespaces(kubeconfig: str) -> None:
    api = kr8s.api(kubeconfig=kubeconfig)
    version = api.version()
    assert version["major"] == "1" and version["gitVersion"].startswith("v1.")
    names = {ns.name for ns in api.get("namespaces")}
    assert {"default", "kube-system", "kube-public", "kube-node-lease"} <= names
    assert Namespace.get("default", api=api).raw["status"]["phase"] == "Active"


def test_the_kubernetes_service_is_there(kubeconfig: str, served: Served) -> None:
    service = Service.get("kubernetes", namespace="default", api=kr8s.api(kubeconfig=kubeconfig))
    assert service.spec.clusterIP == "10.96.0.1"
    assert service.spec.ports[0].targetPort == served.port


def test_pods_created_listed_by_label_patched_and_deleted(kubeconfig: str, namespace: str) -> None:
    api = kr8s.api(kubeconfig=kubeconfig)
    web = Pod(pod_spec("web", namespace, app="web"), api=api)
    web.create()
    Pod(pod_spec("db", namespace, app="db"), api=api).create()
    assert [p.name for p in api.get("pods", namespace=namespace, label_selector={"app": "web"})] == ["web"]
    assert [p.name for p in api.get("pods", namespace=namespace, label_selector="app in (web,db)")] == ["db", "web"]
    assert [p.name for p in api.get("pods", namespace=namespace, field_selector="metadata.name=db")] == ["db"]
    web.label({"tier": "front"})
    web.patch({"metadata": {"annotations": {"note": "patched"}}})
    web.refresh()
    assert web.labels == {"app": "web", "tier": "front"} and web.annotations["note"] == "patched"
    assert web.spec.serviceAccountName == "default"  # the admission defaults kr8s users see
    web.wait("condition=Ready", timeout=30)
    web.delete(force=True)
    assert not web.exists()
    assert [p.name for p in api.get("pods", namespace=namespace)] == ["db"]


def test_a_service_is_created_patched_and_deleted(kubeconfig: str, namespace: str) -> None:
    api = kr8s.api(kubeconfig=kubeconfig)
    svc = Service({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "front", "namespace": namespace},
                   "spec": {"selector": {"app": "web"}, "ports": [{"port": 80, "targetPort": 8080}]}}, api=api)
    svc.create()
    assert svc.spec.clusterIP.startswith("10.") and svc.spec.type == "ClusterIP"
    svc.patch({"spec": {"ports": [{"port": 80, "targetPort": 9090}]}})
    assert Service.get("front", namespace=namespace, api=api).spec.ports[0].targetPort == 9090
    svc.delete()  # kube-apiserver answers with the deleted Service, not a Status
    assert not svc.exists()


def test_a_deployment_scales_and_its_pods_follow(kubeconfig: str, namespace: str) -> None:
    api = kr8s.api(kubeconfig=kubeconfig)
    labels = {"app": "scaled"}
    deploy = Deployment({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "scaled", "namespace": namespace},
                         "spec": {"replicas": 1, "selector": {"matchLabels": labels},
                                  "template": {"metadata": {"labels": labels},
                                               "spec": {"containers": [{"name": "pause", "image": PAUSE}]}}}}, api=api)
    deploy.create()
    deploy.scale(3)
    assert deploy.replicas == 3
    wait_until(refreshed(deploy, lambda: deploy.raw.get("status", {}).get("readyReplicas") == 3), timeout=60)
    assert len(deploy.pods()) == 3
    deploy.scale(1)
    wait_until(refreshed(deploy, lambda: deploy.raw["status"].get("replicas") == 1), timeout=60)
    deploy.delete()


def test_watch_sees_adds_updates_and_deletes(kubeconfig: str, namespace: str) -> None:
    api = kr8s.api(kubeconfig=kubeconfig)
    seen: list[tuple[str, str, str]] = []

    marker = ConfigMap({"metadata": {"name": "marker", "namespace": namespace}}, api=api)
    marker.create()  # the watch starts from its resourceVersion: nothing after it can be missed

    def watch() -> None:
        for kind, cm in api.watch("configmaps", namespace=namespace, label_selector="watched=yes",
                                  since=marker.metadata.resourceVersion):
            seen.append((kind, cm.name, cm.raw.get("data", {}).get("k", "")))
            if kind == "DELETED":
                return

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    cm = ConfigMap({"metadata": {"name": "w", "namespace": namespace, "labels": {"watched": "yes"}}, "data": {"k": "1"}}, api=api)
    cm.create()
    cm.patch({"data": {"k": "2"}})
    cm.delete()
    watcher.join(timeout=30)
    assert seen == [("ADDED", "w", "1"), ("MODIFIED", "w", "2"), ("DELETED", "w", "2")]


async def test_the_asyncio_api(kubeconfig: str, namespace: str) -> None:
    api = await kr8s.asyncio.api(kubeconfig=kubeconfig)
    assert (await api.version())["major"] == "1"
    pod = await AsyncPod(pod_spec("async", namespace, app="a"), api=api)
    await pod.create()
    assert [p.name async for p in api.get("pods", namespace=namespace, label_selector={"app": "a"})] == ["async"]
    cm = await AsyncConfigMap({"metadata": {"name": "acm", "namespace": namespace}, "data": {"a": "1"}}, api=api)
    await cm.create()
    await cm.patch({"data": {"a": "2"}})
    await cm.refresh()
    assert cm.raw["data"] == {"a": "2"}
    listed = [(r["version"], r["name"]) for r in await api.api_resources() if r["name"] in ("pods", "deployments")]
    assert listed == [("v1", "pods"), ("apps/v1", "deployments"), ("metrics.k8s.io/v1beta1", "pods")]
    await cm.delete()
    await pod.delete(force=True)
    assert not await pod.exists()
