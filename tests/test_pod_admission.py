"""The pod plugins of kube-apiserver's default admission chain: ServiceAccount, Priority,
DefaultTolerationSeconds (and NamespaceLifecycle running before them)."""

from __future__ import annotations

from typing import Any

PODS = "/api/v1/namespaces/default/pods"
ACCOUNTS = "/api/v1/namespaces/default/serviceaccounts"
TOKEN_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"
NOT_READY = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}
UNREACHABLE = {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300}


def pod(name: str = "p", annotations: dict[str, str] | None = None, **spec: Any) -> dict[str, Any]:
    spec.setdefault("containers", [{"name": "c", "image": "nginx:1.27"}])
    meta: dict[str, Any] = {"name": name, **({"annotations": annotations} if annotations else {})}
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}


async def account(api, name: str, **fields: Any) -> None:
    reply = await api.post(ACCOUNTS, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}, **fields})
    assert reply.status == 201, reply


def token_volumes(spec: dict[str, Any]) -> list[dict[str, Any]]:
    return [v for v in spec.get("volumes", []) if v["name"].startswith("kube-api-access-")]


def mounts(container: dict[str, Any]) -> list[str]:
    return [m["mountPath"] for m in container.get("volumeMounts", [])]


async def test_a_missing_named_service_account_refuses_the_pod_and_stores_nothing(api):
    reply = await api.post(PODS, pod(serviceAccountName="robot"))
    assert reply.status == 403, reply
    assert reply.body["reason"] == "Forbidden"
    assert reply.body["message"] == (
        'pods "p" is forbidden: error looking up service account default/robot: serviceaccount "robot" not found'
    )
    assert (await api.get(f"{PODS}/p")).status == 404
    await account(api, "robot")
    assert (await api.post(PODS, pod(serviceAccountName="robot"))).status == 201


async def test_the_default_account_may_be_missing_when_no_controller_made_it(api):
    """kplane's one leniency: without the serviceaccount controller, pods still run as default."""
    assert (await api.get(f"{ACCOUNTS}/default")).status == 404
    reply = await api.post(PODS, pod())
    assert reply.status == 201 and reply.body["spec"]["serviceAccountName"] == "default"


async def test_the_token_is_mounted_into_every_container_unless_the_pod_or_account_says_no(api):
    body = pod(initContainers=[{"name": "init", "image": "busybox:1"}], containers=[
        {"name": "a", "image": "nginx:1"},
        {"name": "b", "image": "nginx:1", "volumeMounts": [{"name": "own", "mountPath": TOKEN_MOUNT}]},
    ], volumes=[{"name": "own"}])
    spec = (await api.post(PODS, body)).body["spec"]
    [volume] = token_volumes(spec)
    assert mounts(spec["initContainers"][0]) == [TOKEN_MOUNT] and mounts(spec["containers"][0]) == [TOKEN_MOUNT]
    assert spec["containers"][0]["volumeMounts"][0] == {"name": volume["name"], "readOnly": True, "mountPath": TOKEN_MOUNT}
    assert spec["containers"][1]["volumeMounts"] == [{"name": "own", "mountPath": TOKEN_MOUNT}]  # its own mount wins

    await account(api, "quiet", automountServiceAccountToken=False)
    spec = (await api.post(PODS, pod("q1", serviceAccountName="quiet"))).body["spec"]
    assert token_volumes(spec) == [] and "volumeMounts" not in spec["containers"][0]
    spec = (await api.post(PODS, pod("q2", serviceAccountName="quiet", automountServiceAccountToken=True))).body["spec"]
    assert len(token_volumes(spec)) == 1  # the pod's preference wins
    spec = (await api.post(PODS, pod("q3", automountServiceAccountToken=False))).body["spec"]
    assert token_volumes(spec) == [] and "volumeMounts" not in spec["containers"][0]


async def test_an_account_lends_its_image_pull_secrets_to_pods_without_any(api):
    await account(api, "puller", imagePullSecrets=[{"name": "registry"}])
    spec = (await api.post(PODS, pod(serviceAccountName="puller"))).body["spec"]
    assert spec["imagePullSecrets"] == [{"name": "registry"}]
    spec = (await api.post(PODS, pod("own", serviceAccountName="puller", imagePullSecrets=[{"name": "mine"}]))).body["spec"]
    assert spec["imagePullSecrets"] == [{"name": "mine"}]


async def test_mirror_pods_are_not_changed_and_may_not_reference_accounts_or_secrets(api):
    mirror = {"kubernetes.io/config.mirror": "abc"}
    spec = (await api.post(PODS, pod("static", annotations=mirror))).body["spec"]
    assert "serviceAccountName" not in spec and "volumes" not in spec
    for name, body, why in [
        ("m1", pod("m1", annotations=mirror, serviceAccountName="default"), "a mirror pod may not reference service accounts"),
        ("m2", pod("m2", annotations=mirror, volumes=[{"name": "s", "secret": {"secretName": "x"}}]), "a mirror pod may not reference secrets"),
        ("m3", pod("m3", annotations=mirror, containers=[{"name": "c", "image": "i", "envFrom": [{"secretRef": {"name": "x"}}]}]),
         "a mirror pod may not reference secrets"),
    ]:
        reply = await api.post(PODS, body)
        assert reply.status == 403 and reply.body["message"] == f'pods "{name}" is forbidden: {why}', reply


async def test_priority_comes_from_the_priority_class(api):
    spec = (await api.post(PODS, pod(priorityClassName="system-cluster-critical"))).body["spec"]
    assert (spec["priority"], spec["preemptionPolicy"]) == (2000000000, "PreemptLowerPriority")
    assert (await api.post(PODS, pod("zero", priority=0))).status == 201
    for name, spec, why in [
        ("unknown", {"priorityClassName": "gold"}, "no PriorityClass with name gold was found"),
        ("chosen", {"priority": 7}, "the integer value of priority (7) must not be provided in pod spec; "
                                    "priority admission controller computed 0 from the given PriorityClass name"),
        ("never", {"preemptionPolicy": "Never"}, "the string value of PreemptionPolicy (Never) must not be provided in "
                                                 "pod spec; priority admission controller computed PreemptLowerPriority "
                                                 "from the given PriorityClass name"),
    ]:
        reply = await api.post(PODS, pod(name, **spec))
        assert reply.status == 403 and reply.body["message"] == f'pods "{name}" is forbidden: {why}', reply
        assert (await api.get(f"{PODS}/{name}")).status == 404


async def test_an_update_keeps_the_priority_create_set(api):
    created = (await api.post(PODS, pod())).body
    del created["spec"]["priority"], created["spec"]["preemptionPolicy"]
    reply = await api.put(f"{PODS}/p", created)
    assert reply.status == 200, reply
    assert (reply.body["spec"]["priority"], reply.body["spec"]["preemptionPolicy"]) == (0, "PreemptLowerPriority")


async def test_default_toleration_seconds(api):
    spec = (await api.post(PODS, pod())).body["spec"]
    assert spec["tolerations"] == [NOT_READY, UNREACHABLE]
    own = {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 10}
    spec = (await api.post(PODS, pod("own", tolerations=[own]))).body["spec"]
    assert spec["tolerations"] == [own, UNREACHABLE]
    everything = {"operator": "Exists"}
    spec = (await api.post(PODS, pod("all", tolerations=[everything]))).body["spec"]
    assert spec["tolerations"] == [everything]
    other = {"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}
    spec = (await api.post(PODS, pod("other", tolerations=[other]))).body["spec"]
    assert spec["tolerations"] == [other, NOT_READY, UNREACHABLE]


async def test_a_pod_in_a_missing_namespace_is_not_found_before_its_account_is_looked_up(api):
    reply = await api.post("/api/v1/namespaces/nowhere/pods", pod(serviceAccountName="robot"))
    assert reply.status == 404 and reply.body["message"] == 'namespaces "nowhere" not found', reply


async def test_subresources_and_other_kinds_are_left_alone(api):
    assert (await api.post(PODS, pod())).status == 201
    status = await api.patch(f"{PODS}/p/status", {"status": {"phase": "Running"}})
    assert status.status == 200, status
    template = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}}, "template": {"metadata": {"labels": {"app": "d"}}, "spec": {
            "serviceAccountName": "missing", "containers": [{"name": "c", "image": "nginx:1"}]}}}}
    reply = await api.post("/apis/apps/v1/namespaces/default/deployments", template)
    assert reply.status == 201, reply  # only pods are looked at; the ReplicaSet's pods would be refused
    spec = reply.body["spec"]["template"]["spec"]
    assert "tolerations" not in spec and "priority" not in spec and "volumes" not in spec
