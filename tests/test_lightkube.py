"""lightkube, unmodified, sync and async, against a real kplane server: the calls its users make.

lightkube decodes every answer into its generated models and raises ``ApiError`` carrying the
decoded metav1.Status, so a field kplane names or orders differently from kube-apiserver shows up
here as an exception or a wrong value, not only as a different byte.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Iterator

import pytest

lightkube = pytest.importorskip("lightkube")
from lightkube import ApiError, AsyncClient, Client, codecs  # noqa: E402
from lightkube import operators as op  # noqa: E402
from lightkube.config.kubeconfig import KubeConfig  # noqa: E402
from lightkube.models.apps_v1 import DeploymentSpec  # noqa: E402
from lightkube.models.core_v1 import ServicePort, ServiceSpec  # noqa: E402
from lightkube.models.meta_v1 import ObjectMeta  # noqa: E402
from lightkube.resources.apps_v1 import Deployment  # noqa: E402
from lightkube.resources.core_v1 import ConfigMap, Namespace, Pod, Service  # noqa: E402
from lightkube.types import CascadeType, PatchType  # noqa: E402

from kplane.core.pytest_plugin import Cluster  # noqa: E402

MANAGER = "lightkube-test"


@pytest.fixture
def lk(kplane: Cluster) -> Iterator[Client]:
    client = Client(config=KubeConfig.from_file(kplane.kubeconfig), field_manager=MANAGER)
    yield client
    client.close()


@pytest.fixture
async def alk(kplane: Cluster) -> AsyncIterator[AsyncClient]:
    client = AsyncClient(config=KubeConfig.from_file(kplane.kubeconfig), field_manager=MANAGER)
    yield client
    await client.close()


def _configmap(name: str, data: dict[str, str] | None = None, **labels: str) -> ConfigMap:
    return ConfigMap(apiVersion="v1", kind="ConfigMap", metadata=ObjectMeta(name=name, labels=labels or None),
                     data=data)


def _deployment(name: str, replicas: int = 1) -> Deployment:
    return Deployment.from_dict({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": name, "labels": {"app": name}},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}},
                 "template": {"metadata": {"labels": {"app": name}},
                              "spec": {"containers": [{"name": "web", "image": "nginx:1.25"}]}}},
    })


def _names(objs) -> list[str]:
    return sorted(o.metadata.name for o in objs)


def _status(excinfo: pytest.ExceptionInfo[ApiError]) -> dict:
    """The Status lightkube decoded, as the plain fields a caller reads."""
    status = excinfo.value.status
    details = status.details
    return {"status": status.status, "code": status.code, "reason": status.reason, "message": status.message,
            "name": details.name if details else None, "kind": details.kind if details else None,
            "group": details.group if details else None}


# -- sync client ------------------------------------------------------------------------------


def test_configmap_create_get_replace_delete(lk: Client) -> None:
    created = lk.create(_configmap("settings", {"mode": "fast", "level": "1"}))
    assert created.metadata.uid and created.metadata.namespace == "default"
    assert [m.manager for m in created.metadata.managedFields] == [MANAGER]
    got = lk.get(ConfigMap, "settings")
    assert got.data == {"mode": "fast", "level": "1"}
    assert got.metadata.creationTimestamp == created.metadata.creationTimestamp
    got.data["mode"] = "slow"
    replaced = lk.replace(got)
    assert replaced.data["mode"] == "slow"
    assert int(replaced.metadata.resourceVersion) > int(created.metadata.resourceVersion)
    with pytest.raises(ApiError) as stale:
        lk.replace(got)  # still carries the old resourceVersion
    assert _status(stale) == {"status": "Failure", "code": 409, "reason": "Conflict", "name": "settings",
                              "kind": "configmaps", "group": None,
                              "message": 'Operation cannot be fulfilled on configmaps "settings": the object has been '
                                         "modified; please apply your changes to the latest version and try again"}
    assert lk.delete(ConfigMap, "settings") is None
    with pytest.raises(ApiError) as gone:
        lk.get(ConfigMap, "settings")
    assert _status(gone) == {"status": "Failure", "code": 404, "reason": "NotFound", "name": "settings",
                             "kind": "configmaps", "group": None, "message": 'configmaps "settings" not found'}


def test_configmap_every_patch_type(lk: Client) -> None:
    lk.create(_configmap("p", {"a": "1"}, app="x"))
    strategic = lk.patch(ConfigMap, "p", {"metadata": {"labels": {"tier": "web"}}, "data": {"b": "2"}})
    assert strategic.metadata.labels == {"app": "x", "tier": "web"} and strategic.data == {"a": "1", "b": "2"}
    merged = lk.patch(ConfigMap, "p", {"data": {"a": None}}, patch_type=PatchType.MERGE)
    assert merged.data == {"b": "2"}
    json_patched = lk.patch(ConfigMap, "p", [{"op": "add", "path": "/data/c", "value": "3"}], patch_type=PatchType.JSON)
    assert json_patched.data == {"b": "2", "c": "3"}
    labelled = lk.set(ConfigMap, "p", labels={"tier": None, "role": "cache"})
    assert labelled.metadata.labels == {"app": "x", "role": "cache"}
    applied = lk.patch(ConfigMap, "p", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "p"},
                                        "data": {"d": "4"}}, patch_type=PatchType.APPLY)
    assert applied.data == {"b": "2", "c": "3", "d": "4"}
    assert {(m.manager, m.operation) for m in applied.metadata.managedFields} == {(MANAGER, "Update"), (MANAGER, "Apply")}
    with pytest.raises(ApiError) as failed_test:
        lk.patch(ConfigMap, "p", [{"op": "test", "path": "/data/b", "value": "9"}], patch_type=PatchType.JSON)
    assert _status(failed_test)["code"] == 422 and failed_test.value.status.reason == "Invalid"
    assert failed_test.value.status.details.causes[0].message == "testing value /data/b failed: test failed"
    with pytest.raises(ApiError) as missing:
        lk.patch(ConfigMap, "absent", {"data": {}})
    assert _status(missing)["code"] == 404 and missing.value.status.details.name == "absent"
    assert lk.get(ConfigMap, "p").data == {"b": "2", "c": "3", "d": "4"}


def test_apply_creates_prunes_and_conflicts(kplane: Cluster, lk: Client) -> None:
    first = lk.apply(_configmap("ssa", {"k1": "v1", "k2": "v2"}))
    assert first.data == {"k1": "v1", "k2": "v2"}
    second = lk.apply(_configmap("ssa", {"k2": "new", "k3": "v3"}))
    assert second.data == {"k2": "new", "k3": "v3"}  # k1 no longer applied: removed
    other = Client(config=KubeConfig.from_file(kplane.kubeconfig), field_manager="other")
    with pytest.raises(ApiError) as conflict:
        other.apply(_configmap("ssa", {"k2": "theirs"}))
    status = conflict.value.status
    assert (status.code, status.reason) == (409, "Conflict")
    assert status.message == f'Apply failed with 1 conflict: conflict with "{MANAGER}": .data.k2'
    assert [(c.reason, c.field) for c in status.details.causes] == [("FieldManagerConflict", ".data.k2")]
    forced = other.apply(_configmap("ssa", {"k2": "theirs"}), force=True)
    assert forced.data == {"k2": "theirs", "k3": "v3"}
    other.close()


def test_errors_raise_api_error_with_status(lk: Client) -> None:
    lk.create(_configmap("taken"))
    with pytest.raises(ApiError) as exists:
        lk.create(_configmap("taken"))
    assert _status(exists) == {"status": "Failure", "code": 409, "reason": "AlreadyExists", "name": "taken",
                               "kind": "configmaps", "group": None, "message": 'configmaps "taken" already exists'}
    with pytest.raises(ApiError) as invalid:
        lk.create(_configmap("Not_Valid"))
    assert _status(invalid)["code"] == 422 and invalid.value.status.reason == "Invalid"
    assert invalid.value.status.details.kind == "ConfigMap"
    assert [(c.reason, c.field) for c in invalid.value.status.details.causes] == [("FieldValueInvalid", "metadata.name")]
    with pytest.raises(ApiError) as no_namespace:
        lk.create(_configmap("x"), namespace="nowhere")
    assert _status(no_namespace) == {"status": "Failure", "code": 404, "reason": "NotFound", "name": "nowhere",
                                     "kind": "namespaces", "group": None, "message": 'namespaces "nowhere" not found'}
    with pytest.raises(ApiError) as bad_selector:
        list(lk.list(ConfigMap, fields={"data.k": "v"}))
    assert _status(bad_selector)["code"] == 400 and bad_selector.value.status.reason == "BadRequest"
    assert bad_selector.value.status.message == (
        '"data.k" is not a known field selector: only "metadata.name", "metadata.namespace"')


def test_list_with_label_and_field_selectors(lk: Client) -> None:
    for i in range(5):
        lk.create(_configmap(f"c{i}", tier="a" if i % 2 else "b", n=str(i)))
    assert _names(lk.list(ConfigMap, labels={"tier": "a"})) == ["c1", "c3"]
    assert _names(lk.list(ConfigMap, labels={"tier": op.not_equal("a")})) == ["c0", "c2", "c4"]
    assert _names(lk.list(ConfigMap, labels={"n": op.in_(["1", "2"])})) == ["c1", "c2"]
    assert _names(lk.list(ConfigMap, labels={"n": op.not_in(["1", "2"])})) == ["c0", "c3", "c4"]
    assert _names(lk.list(ConfigMap, labels={"n": op.exists(), "tier": "b"})) == ["c0", "c2", "c4"]
    assert not [name for name in _names(lk.list(ConfigMap, labels={"n": op.not_exists()})) if name.startswith("c")]
    assert _names(lk.list(ConfigMap, labels={"tier": "a"}, fields={"metadata.name": op.not_equal("c1")})) == ["c3"]
    paged = lk.list(ConfigMap, labels={"n": op.exists()}, chunk_size=2)  # limit=2, then continue
    assert _names(paged) == ["c0", "c1", "c2", "c3", "c4"] and int(paged.resourceVersion) > 0
    lk.create(Namespace(metadata=ObjectMeta(name="other")))
    lk.create(_configmap("c9", tier="a"), namespace="other")
    everywhere = [f"{c.metadata.namespace}/{c.metadata.name}"
                  for c in lk.list(ConfigMap, namespace="*", labels={"tier": "a"})]
    assert sorted(everywhere) == ["default/c1", "default/c3", "other/c9"]


def test_watch_from_a_resource_version(lk: Client) -> None:
    created = lk.create(_configmap("w", {"v": "1"}, watched="yes"))
    lk.create(_configmap("unwatched", {"v": "1"}))
    lk.patch(ConfigMap, "unwatched", {"data": {"v": "2"}})
    lk.patch(ConfigMap, "w", {"data": {"v": "2"}})
    lk.delete(ConfigMap, "w")
    events = []
    for kind, obj in lk.watch(ConfigMap, labels={"watched": "yes"}, resource_version=created.metadata.resourceVersion):
        events.append((kind, obj.metadata.name, obj.data))
        if kind == "DELETED":
            break
    assert events == [("MODIFIED", "w", {"v": "2"}), ("DELETED", "w", {"v": "2"})]


def test_deletecollection_and_dry_run_delete(lk: Client) -> None:
    for name in ("a", "b"):
        lk.create(_configmap(name, app="x"))
    assert lk.delete(ConfigMap, "a", dry_run=True) is None
    lk.deletecollection(ConfigMap, dry_run=True)
    assert _names(lk.list(ConfigMap, labels={"app": "x"})) == ["a", "b"]
    dry = lk.create(_configmap("c"), dry_run=True)
    assert dry.metadata.uid
    with pytest.raises(ApiError):
        lk.get(ConfigMap, "c")
    lk.deletecollection(ConfigMap)
    assert _names(lk.list(ConfigMap, labels={"app": "x"})) == []


def test_service_patches_and_delete_returns_the_service(kplane: Cluster, lk: Client) -> None:
    service = Service(metadata=ObjectMeta(name="web"),
                      spec=ServiceSpec(ports=[ServicePort(name="a", port=80, targetPort=8080)], selector={"app": "web"}))
    created = lk.create(service)
    assert created.spec.clusterIP and created.spec.type == "ClusterIP" and created.spec.sessionAffinity == "None"
    # strategic merge: ports merge on their key, port
    two = lk.patch(Service, "web", {"spec": {"ports": [{"name": "b", "port": 81, "targetPort": 8081}]}})
    assert sorted(p.name for p in two.spec.ports) == ["a", "b"]
    retargeted = lk.patch(Service, "web", Service(spec=ServiceSpec(ports=[ServicePort(name="b", port=81, targetPort=8082)])))
    assert {p.port: p.targetPort for p in retargeted.spec.ports} == {80: 8080, 81: 8082}
    # merge patch: the list is replaced
    one = lk.patch(Service, "web", {"spec": {"ports": [{"name": "b", "port": 81, "targetPort": 8081}]}},
                   patch_type=PatchType.MERGE)
    assert [p.port for p in one.spec.ports] == [81]
    appended = lk.patch(Service, "web", [{"op": "add", "path": "/spec/ports/-", "value": {"name": "a", "port": 80}}],
                        patch_type=PatchType.JSON)
    assert [p.port for p in appended.spec.ports] == [81, 80] and appended.spec.ports[1].targetPort == 80
    # lightkube's delete answers None; the body it reads is the deleted Service, as kube-apiserver's
    deleted = codecs.from_dict(kplane.request("DELETE", "/api/v1/namespaces/default/services/web"))
    assert isinstance(deleted, Service) and deleted.metadata.uid == created.metadata.uid
    lk.create(Service(metadata=ObjectMeta(name="web2"), spec=ServiceSpec(ports=[ServicePort(port=80)])))
    assert lk.delete(Service, "web2") is None
    with pytest.raises(ApiError) as gone:
        lk.get(Service, "web2")
    assert _status(gone)["kind"] == "services"


def test_deployment_scale_subresource(lk: Client) -> None:
    lk.create(_deployment("web"))
    scale = lk.get(Deployment.Scale, "web")
    assert (scale.apiVersion, scale.kind, scale.spec.replicas) == ("autoscaling/v1", "Scale", 1)
    assert scale.status.selector == "app=web"
    scale.spec.replicas = 3
    assert lk.replace(scale, "web").spec.replicas == 3
    assert lk.patch(Deployment.Scale, "web", {"spec": {"replicas": 4}}, patch_type=PatchType.MERGE).spec.replicas == 4
    applied = lk.apply(Deployment.Scale.from_dict({"apiVersion": "autoscaling/v1", "kind": "Scale",
                                                   "metadata": {"name": "web", "namespace": "default"},
                                                   "spec": {"replicas": 5}}), name="web")
    assert applied.spec.replicas == 5
    deployment = lk.get(Deployment, "web")
    assert deployment.spec.replicas == 5 and deployment.metadata.generation == 4
    status = lk.patch(Deployment.Status, "web", {"status": {"observedGeneration": 4}}, patch_type=PatchType.MERGE)
    assert status.status.observedGeneration == 4 and status.spec.replicas == 5
    with pytest.raises(ApiError) as missing:
        lk.get(Deployment.Scale, "absent")
    assert _status(missing) == {"status": "Failure", "code": 404, "reason": "NotFound", "name": "absent",
                                "kind": "deployments", "group": "apps", "message": 'deployments.apps "absent" not found'}


def test_foreground_delete_keeps_the_deployment_until_its_dependents_go(lk: Client) -> None:
    lk.create(_deployment("fg"))
    assert lk.delete(Deployment, "fg", cascade=CascadeType.FOREGROUND) is None
    marked = lk.get(Deployment, "fg")  # no garbage collector runs in this server
    assert marked.metadata.finalizers == ["foregroundDeletion"] and marked.metadata.deletionTimestamp


# -- async client -----------------------------------------------------------------------------


async def test_async_configmap_calls(alk: AsyncClient) -> None:
    created = await alk.create(_configmap("async", {"a": "1"}, app="x"))
    assert (await alk.get(ConfigMap, "async")).metadata.uid == created.metadata.uid
    assert _names([c async for c in alk.list(ConfigMap, labels={"app": "x"}, chunk_size=1)]) == ["async"]
    assert (await alk.patch(ConfigMap, "async", {"data": {"b": "2"}})).data == {"a": "1", "b": "2"}
    assert (await alk.patch(ConfigMap, "async", {"data": {"a": None}}, patch_type=PatchType.MERGE)).data == {"b": "2"}
    patched = await alk.patch(ConfigMap, "async", [{"op": "remove", "path": "/data/b"}], patch_type=PatchType.JSON)
    assert not patched.data
    applied = await alk.apply(_configmap("async", {"c": "3"}))
    assert applied.data == {"c": "3"}
    await alk.delete(ConfigMap, "async")
    with pytest.raises(ApiError) as gone:
        await alk.get(ConfigMap, "async")
    assert _status(gone) == {"status": "Failure", "code": 404, "reason": "NotFound", "name": "async",
                             "kind": "configmaps", "group": None, "message": 'configmaps "async" not found'}


async def test_async_watch_sees_later_writes(alk: AsyncClient) -> None:
    created = await alk.create(_configmap("aw", {"v": "1"}, watched="yes"))
    seen: list[tuple[str, str, str]] = []

    async def watch() -> None:
        async for kind, obj in alk.watch(ConfigMap, namespace="*", labels={"watched": "yes"},
                                         resource_version=created.metadata.resourceVersion):
            seen.append((kind, obj.metadata.namespace, obj.data["v"]))
            if kind == "DELETED":
                return

    watcher = asyncio.create_task(watch())
    await alk.patch(ConfigMap, "aw", [{"op": "replace", "path": "/data/v", "value": "2"}], patch_type=PatchType.JSON)
    await alk.delete(ConfigMap, "aw")
    await asyncio.wait_for(watcher, 30)
    assert seen == [("MODIFIED", "default", "2"), ("DELETED", "default", "2")]


async def test_async_service_and_scale(alk: AsyncClient) -> None:
    await alk.create(Service(metadata=ObjectMeta(name="s"), spec=ServiceSpec(ports=[ServicePort(port=80)])))
    assert (await alk.get(Service, "s")).spec.ports[0].targetPort == 80
    await alk.delete(Service, "s")
    await alk.create(_deployment("d", replicas=2))
    scale = await alk.get(Deployment.Scale, "d")
    scale.spec.replicas = 6
    assert (await alk.replace(scale, "d")).spec.replicas == 6
    assert (await alk.get(Deployment, "d")).spec.replicas == 6


@pytest.mark.kplane(controllers=True)
async def test_async_wait_for_a_rollout(alk: AsyncClient) -> None:
    created = await alk.create(_deployment("roll", replicas=2))
    await asyncio.wait_for(alk.wait(Deployment, "roll", for_conditions=["Available"]), 60)
    pods = [p async for p in alk.list(Pod, labels={"app": "roll"})]
    assert len(pods) == 2 and all(p.metadata.ownerReferences[0].kind == "ReplicaSet" for p in pods)
    done = await alk.get(Deployment, "roll")
    assert done.status.readyReplicas == 2 and done.status.observedGeneration == created.metadata.generation
    assert isinstance(done.spec, DeploymentSpec)
