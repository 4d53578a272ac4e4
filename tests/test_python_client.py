"""The official `kubernetes` Python client, unmodified, against a real `kplane serve`."""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import pytest

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config, dynamic, watch  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

from tests.builders import UNSCHEDULED  # noqa: E402
from tests.servers import serving  # noqa: E402


def _deployment(name: str, replicas: int = 2) -> dict:
    return {
        "apiVersion": "apps/v1",
        "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {
            "replicas": replicas,
            "selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}},
        },
    }


@pytest.fixture(scope="module")
def api_client(tmp_path_factory: pytest.TempPathFactory) -> Iterator[client.ApiClient]:
    with serving(tmp_path_factory.mktemp("pyclient")) as served:
        yield config.new_client_from_config(config_file=str(served.kubeconfig))


@pytest.fixture
def apps(api_client: client.ApiClient) -> client.AppsV1Api:
    return client.AppsV1Api(api_client)


@pytest.fixture
def core(api_client: client.ApiClient) -> client.CoreV1Api:
    return client.CoreV1Api(api_client)


def test_typed_deployment_calls(apps: client.AppsV1Api) -> None:
    created = apps.create_namespaced_deployment("default", _deployment("typed"))
    assert isinstance(created, client.V1Deployment)
    assert created.metadata.uid and created.spec.replicas == 2
    assert created.spec.template.spec.containers[0].image == "nginx:1.25"
    listed = apps.list_namespaced_deployment("default", label_selector="app=typed")
    assert [d.metadata.name for d in listed.items] == ["typed"]
    assert apps.read_namespaced_deployment("typed", "default").metadata.generation == 1
    patched = apps.patch_namespaced_deployment("typed", "default", [{"op": "replace", "path": "/spec/replicas", "value": 4}])
    assert patched.spec.replicas == 4
    merged = apps.patch_namespaced_deployment("typed", "default", {"metadata": {"labels": {"tier": "web"}}},
                                              _content_type="application/merge-patch+json")
    assert merged.metadata.labels == {"app": "typed", "tier": "web"}
    scale = apps.read_namespaced_deployment_scale("typed", "default")
    assert scale.spec.replicas == 4 and scale.status.selector == "app=typed"
    with pytest.raises(ApiException) as missing:
        apps.read_namespaced_deployment("nope", "default")
    assert missing.value.status == 404
    with pytest.raises(ApiException) as conflict:
        apps.create_namespaced_deployment("default", _deployment("typed"))
    assert conflict.value.status == 409
    apps.delete_namespaced_deployment("typed", "default", propagation_policy="Background")
    assert apps.list_namespaced_deployment("default", label_selector="app=typed").items == []


def test_strategic_merge_patches_from_the_client(apps: client.AppsV1Api) -> None:
    apps.create_namespaced_deployment("default", _deployment("smp"))
    patched = apps.patch_namespaced_deployment("smp", "default", {"spec": {"template": {"spec": {"containers": [
        {"name": "web", "image": "nginx:1.27"}, {"name": "sidecar", "image": "busybox"}]}}}})
    assert [(c.name, c.image) for c in patched.spec.template.spec.containers] == [("web", "nginx:1.27"), ("sidecar", "busybox")]
    scaled = apps.patch_namespaced_deployment_scale("smp", "default", {"spec": {"replicas": 3}})
    assert isinstance(scaled, client.V1Scale) and scaled.spec.replicas == 3
    apps.delete_namespaced_deployment("smp", "default")


def test_core_namespaces_and_pods(core: client.CoreV1Api) -> None:
    core.create_namespace({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "py"}})
    assert core.read_namespace("py").status.phase == "Active"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p", "labels": {"a": "b"}},
           "spec": {"schedulerName": UNSCHEDULED,  # stays Pending: the simulated nodes would run it
                    "containers": [{"name": "c", "image": "busybox", "command": ["sleep", "60"]}]}}
    created = core.create_namespaced_pod("py", pod)
    assert created.status.phase == "Pending"
    assert [p.metadata.name for p in core.list_namespaced_pod("py", field_selector="status.phase=Pending").items] == ["p"]
    assert "py" in [n.metadata.name for n in core.list_namespace().items]
    core.delete_namespaced_pod("p", "py")
    core.delete_namespace("py")


def test_typed_deletes_get_the_deleted_object(core: client.CoreV1Api) -> None:
    """Kinds whose storage sets ReturnDeletedObject answer with the object, which the typed client
    deserialises as its declared return type (a Status here crashed it)."""
    service = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "gone"}, "spec": {"ports": [{"port": 80}]}}
    created = core.create_namespaced_service("default", service)
    deleted = core.delete_namespaced_service("gone", "default")
    assert isinstance(deleted, client.V1Service) and deleted.metadata.uid == created.metadata.uid
    core.create_namespaced_service_account("default", {"metadata": {"name": "robot"}})
    assert isinstance(core.delete_namespaced_service_account("robot", "default"), client.V1ServiceAccount)
    core.create_namespaced_config_map("default", {"metadata": {"name": "kept"}, "data": {"k": "v"}})
    status = core.delete_namespaced_config_map("kept", "default", body=client.V1DeleteOptions(dry_run=["All"]))
    assert status["status"] == "Success" and core.read_namespaced_config_map("kept", "default").data == {"k": "v"}
    with pytest.raises(ApiException) as refused:
        core.delete_namespaced_config_map("kept", "default", body=client.V1DeleteOptions(propagation_policy="Sometimes"))
    assert refused.value.status == 422 and core.read_namespaced_config_map("kept", "default")


def test_watch_stream(core: client.CoreV1Api) -> None:
    """Config maps: no controller writes them, so the stream holds exactly what the test did."""
    events: list[tuple[str, str]] = []

    def consume() -> None:
        for event in watch.Watch().stream(core.list_namespaced_config_map, "default", label_selector="app=watched", timeout_seconds=5):
            events.append((event["type"], event["object"].metadata.name))
            if event["type"] == "DELETED":
                return

    core.create_namespaced_config_map("default", {"metadata": {"name": "watched", "labels": {"app": "watched"}}, "data": {"a": "1"}})
    reader = threading.Thread(target=consume)
    reader.start()
    time.sleep(0.3)
    core.patch_namespaced_config_map("watched", "default", {"data": {"a": "2"}})
    core.delete_namespaced_config_map("watched", "default")
    reader.join(timeout=10)
    assert events == [("ADDED", "watched"), ("MODIFIED", "watched"), ("DELETED", "watched")]


def test_dynamic_client(api_client: client.ApiClient) -> None:
    dyn = dynamic.DynamicClient(api_client)
    deployments = dyn.resources.get(api_version="apps/v1", kind="Deployment")
    deployments.create(body=_deployment("dynamic"), namespace="default")
    got = deployments.get(name="dynamic", namespace="default")
    assert got.spec.replicas == 2 and got.metadata.name == "dynamic"
    configmaps = dyn.resources.get(api_version="v1", kind="ConfigMap")
    configmaps.create(body={"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "dyn"}, "data": {"k": "v"}}, namespace="default")
    assert configmaps.get(name="dyn", namespace="default").data.k == "v"
    deployments.delete(name="dynamic", namespace="default")
    configmaps.delete(name="dyn", namespace="default")
