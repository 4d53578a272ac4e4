"""ReplicationControllers, PodTemplates, LimitRanges, ResourceQuotas, PriorityClasses and
RuntimeClasses end to end with the real kubectl against `kplane serve` (controllers and
simulated nodes on): generators, get columns, describe, scale, admission messages, cascades."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from pathlib import Path

import aiohttp
import pytest
import yaml

from kplane.core.audit.options import AuditOptions
from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client
from tests.servers import server_config
from tests.kubectl_cli import Kubectl
from tests.waiting import eventually, wait_until

RC = """
apiVersion: v1
kind: ReplicationController
metadata: {name: web}
spec:
  replicas: 2
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: nginx, image: "nginx:1.25"}]
"""


def pods(kubectl: Kubectl, selector: str, namespace: str = "default") -> list[dict]:
    return [p for p in kubectl.json("get", "pods", "-n", namespace, "-l", selector)["items"] if not p["metadata"].get("deletionTimestamp")]


def namespace(kubectl: Kubectl, name: str) -> None:
    kubectl.run("create", "namespace", name)


def test_replication_controller_runs_scales_and_cascades(kubectl: Kubectl) -> None:
    kubectl.apply_file("apply", RC)
    rc = wait_until(lambda: (r := kubectl.json("get", "rc", "web")).get("status", {}).get("readyReplicas") == 2 and r,
                    what="2 ready replicas")
    assert rc["spec"]["selector"] == {"app": "web"} and rc["metadata"]["labels"] == {"app": "web"}  # defaulted
    owned = pods(kubectl, "app=web")
    assert len(owned) == 2
    assert {r["kind"] for p in owned for r in p["metadata"]["ownerReferences"]} == {"ReplicationController"}
    table = kubectl.run("get", "rc", "web", "-o", "wide").stdout.splitlines()
    assert table[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "AGE", "CONTAINERS", "IMAGES", "SELECTOR"]
    assert table[1].split()[:4] == ["web", "2", "2", "2"] and table[1].split()[-3:] == ["nginx", "nginx:1.25", "app=web"]
    kubectl.run("scale", "rc", "web", "--replicas=3")
    wait_until(lambda: kubectl.json("get", "rc", "web").get("status", {}).get("readyReplicas") == 3, what="3 ready")
    described = kubectl.run("describe", "rc", "web").stdout
    assert "Replicas:     3 current / 3 desired" in described and "SuccessfulCreate" in described
    kubectl.run("delete", "rc", "web", "--wait=true")
    wait_until(lambda: not pods(kubectl, "app=web"), what="the pods deleted with their controller")


def test_pod_template(kubectl: Kubectl) -> None:
    kubectl.apply_file("apply", """
apiVersion: v1
kind: PodTemplate
metadata: {name: tpl}
template:
  metadata: {labels: {role: batch}}
  spec:
    containers: [{name: work, image: "busybox:1.36"}]
""")
    assert kubectl.json("get", "podtemplate", "tpl")["template"]["spec"]["restartPolicy"] == "Always"
    table = kubectl.run("get", "podtemplates").stdout.splitlines()
    assert table[0].split() == ["NAME", "CONTAINERS", "IMAGES", "POD", "LABELS"]
    assert table[1].split() == ["tpl", "work", "busybox:1.36", "role=batch"]


def _run(kubectl: Kubectl, ns: str, name: str, *extra: str, check: bool = True):
    return kubectl.run("run", name, "-n", ns, "--image=nginx:1.25", "--restart=Never", *extra, check=check)


def test_resource_quota_admission_and_usage(kubectl: Kubectl) -> None:
    namespace(kubectl, "quota")
    kubectl.run("create", "quota", "compute", "-n", "quota", "--hard=pods=2,requests.cpu=1,count/configmaps=5")
    wait_until(lambda: kubectl.json("get", "quota", "compute", "-n", "quota").get("status", {}).get("used"), what="quota status")
    refused = _run(kubectl, "quota", "bare", check=False)
    assert refused.returncode != 0
    assert 'pods "bare" is forbidden: failed quota: compute: must specify requests.cpu for: bare' in refused.stderr
    overrides = json.dumps({"spec": {"containers": [{"name": "p", "image": "nginx:1.25", "resources": {"requests": {"cpu": "400m"}}}]}})
    for name in ("a", "b"):
        _run(kubectl, "quota", name, f"--overrides={overrides}")
    refused = _run(kubectl, "quota", "c", f"--overrides={overrides}", check=False)
    assert ('pods "c" is forbidden: exceeded quota: compute, requested: pods=1,requests.cpu=400m, '
            'used: pods=2,requests.cpu=800m, limited: pods=2,requests.cpu=1') in refused.stderr
    quota = kubectl.json("get", "quota", "compute", "-n", "quota")
    assert quota["status"]["hard"] == {"pods": "2", "requests.cpu": "1", "count/configmaps": "5"}
    assert quota["status"]["used"]["pods"] == "2" and quota["status"]["used"]["requests.cpu"] == "800m"
    kubectl.run("create", "configmap", "settings", "-n", "quota", "--from-literal=a=b")
    table = wait_until(lambda: (t := kubectl.run("get", "quota", "-n", "quota").stdout.splitlines()) and "1/5" in t[1] and t,
                       what="the ConfigMap counted")
    assert table[0].split() == ["NAME", "AGE", "REQUEST", "LIMIT"]
    assert "count/configmaps: 1/5, pods: 2/2, requests.cpu: 800m/1" in table[1]
    described = kubectl.run("describe", "quota", "compute", "-n", "quota").stdout
    assert "requests.cpu" in described and "800m" in described
    kubectl.run("delete", "pod", "a", "-n", "quota", "--wait=true")
    wait_until(lambda: kubectl.json("get", "quota", "compute", "-n", "quota")["status"]["used"]["pods"] == "1",
               what="the deleted pod's quota given back")
    _run(kubectl, "quota", "c", f"--overrides={overrides}")


def test_limit_range_defaults_and_bounds(kubectl: Kubectl) -> None:
    namespace(kubectl, "limits")
    kubectl.apply_file("apply", """
apiVersion: v1
kind: LimitRange
metadata: {name: bounds, namespace: limits}
spec:
  limits:
  - type: Container
    max: {cpu: "1", memory: 1Gi}
    min: {cpu: 50m}
    default: {cpu: 500m, memory: 256Mi}
    defaultRequest: {cpu: 100m}
""")
    lr = kubectl.json("get", "limits", "bounds", "-n", "limits")
    assert lr["spec"]["limits"][0]["defaultRequest"] == {"cpu": "100m", "memory": "256Mi"}  # defaulted from default
    _run(kubectl, "limits", "defaulted")
    pod = kubectl.json("get", "pod", "defaulted", "-n", "limits")
    assert pod["spec"]["containers"][0]["resources"] == {"limits": {"cpu": "500m", "memory": "256Mi"},
                                                         "requests": {"cpu": "100m", "memory": "256Mi"}}
    assert pod["metadata"]["annotations"]["kubernetes.io/limit-ranger"] == (
        "LimitRanger plugin set: cpu, memory request for container defaulted; cpu, memory limit for container defaulted")
    big = json.dumps({"spec": {"containers": [{"name": "p", "image": "nginx:1.25", "resources": {"limits": {"cpu": "2"}, "requests": {"cpu": "10m"}}}]}})
    refused = _run(kubectl, "limits", "big", f"--overrides={big}", check=False)
    assert ('pods "big" is forbidden: [minimum cpu usage per Container is 50m, but request is 10m, '
            'maximum cpu usage per Container is 1, but limit is 2]') in refused.stderr
    described = kubectl.run("describe", "limits", "bounds", "-n", "limits").stdout
    assert "Container" in described and "cpu" in described and "500m" in described
    assert kubectl.run("get", "limits", "-n", "limits").stdout.split()[:4] == ["NAME", "CREATED", "AT", "bounds"]


def test_priority_classes(kubectl: Kubectl) -> None:
    table = kubectl.run("get", "priorityclasses").stdout.splitlines()
    assert table[0].split() == ["NAME", "VALUE", "GLOBAL-DEFAULT", "AGE", "PREEMPTIONPOLICY"]
    assert {line.split()[0] for line in table[1:]} >= {"system-node-critical", "system-cluster-critical"}
    kubectl.run("create", "priorityclass", "high", "--value=1000", "--global-default", "--description=important")
    refused = kubectl.run("create", "priorityclass", "other", "--value=5", "--global-default", check=False)
    assert "PriorityClass high is already marked as default. Only one default can exist" in refused.stderr
    refused = kubectl.run("create", "priorityclass", "system-mine", "--value=5", check=False)
    assert "priority class names with 'system-' prefix are reserved for system use only" in refused.stderr
    namespace(kubectl, "prio")
    _run(kubectl, "prio", "plain")
    spec = kubectl.json("get", "pod", "plain", "-n", "prio")["spec"]
    assert (spec["priorityClassName"], spec["priority"], spec["preemptionPolicy"]) == ("high", 1000, "PreemptLowerPriority")
    critical = json.dumps({"spec": {"priorityClassName": "system-node-critical"}})
    _run(kubectl, "prio", "critical", f"--overrides={critical}")
    assert kubectl.json("get", "pod", "critical", "-n", "prio")["spec"]["priority"] == 2000001000
    missing = json.dumps({"spec": {"priorityClassName": "nope"}})
    assert "no PriorityClass with name nope was found" in _run(kubectl, "prio", "lost", f"--overrides={missing}", check=False).stderr
    kubectl.run("delete", "priorityclass", "high")


def test_runtime_class_overhead_and_scheduling(kubectl: Kubectl) -> None:
    kubectl.apply_file("apply", """
apiVersion: node.k8s.io/v1
kind: RuntimeClass
metadata: {name: sandboxed}
handler: runsc
overhead: {podFixed: {cpu: 250m, memory: 64Mi}}
scheduling:
  nodeSelector: {sandbox: "true"}
  tolerations: [{key: sandbox, operator: Exists, effect: NoSchedule}]
""")
    table = kubectl.run("get", "runtimeclass").stdout.splitlines()
    assert table[0].split() == ["NAME", "HANDLER", "AGE"] and table[1].split()[:2] == ["sandboxed", "runsc"]
    namespace(kubectl, "sandbox")
    chosen = json.dumps({"spec": {"runtimeClassName": "sandboxed"}})
    _run(kubectl, "sandbox", "boxed", f"--overrides={chosen}")
    spec = kubectl.json("get", "pod", "boxed", "-n", "sandbox")["spec"]
    assert spec["overhead"] == {"cpu": "250m", "memory": "64Mi"} and spec["nodeSelector"] == {"sandbox": "true"}
    assert {"key": "sandbox", "operator": "Exists", "effect": "NoSchedule"} in spec["tolerations"]
    lost = json.dumps({"spec": {"runtimeClassName": "gvisor"}})
    assert 'pod rejected: RuntimeClass "gvisor" not found' in _run(kubectl, "sandbox", "x", f"--overrides={lost}", check=False).stderr
    changed = yaml.safe_dump({"apiVersion": "node.k8s.io/v1", "kind": "RuntimeClass", "metadata": {"name": "sandboxed"}, "handler": "kata"})
    refused = kubectl.run("replace", "-f", "-", stdin=changed, check=False)
    assert "handler: Invalid value: \"kata\": field is immutable" in refused.stderr


def test_typed_python_client_and_validation(kubectl: Kubectl) -> None:
    from kubernetes import client, config
    from kubernetes.client.rest import ApiException

    api = config.new_client_from_config(config_file=kubectl.env["KUBECONFIG"])
    core, scheduling, node = client.CoreV1Api(api), client.SchedulingV1Api(api), client.NodeV1Api(api)
    core.create_namespace(client.V1Namespace(metadata=client.V1ObjectMeta(name="typed")))
    template = client.V1PodTemplateSpec(metadata=client.V1ObjectMeta(labels={"app": "typed"}),
                                        spec=client.V1PodSpec(containers=[client.V1Container(name="c", image="nginx:1.25")]))
    core.create_namespaced_replication_controller("typed", client.V1ReplicationController(
        metadata=client.V1ObjectMeta(name="typed"), spec=client.V1ReplicationControllerSpec(replicas=1, template=template)))
    core.patch_namespaced_replication_controller_scale("typed", "typed", {"spec": {"replicas": 2}})
    wait_until(lambda: (core.read_namespaced_replication_controller_status("typed", "typed").status.ready_replicas or 0) == 2,
               what="the typed RC scaled to 2")
    assert core.read_namespaced_replication_controller_scale("typed", "typed").status.selector == "app=typed"
    core.create_namespaced_pod_template("typed", client.V1PodTemplate(metadata=client.V1ObjectMeta(name="t"), template=template))
    assert [t.metadata.name for t in core.list_namespaced_pod_template("typed").items] == ["t"]
    core.create_namespaced_resource_quota("typed", client.V1ResourceQuota(
        metadata=client.V1ObjectMeta(name="objects"), spec=client.V1ResourceQuotaSpec(hard={"count/podtemplates": "1", "pods": "5"})))
    wait_until(lambda: (core.read_namespaced_resource_quota_status("objects", "typed").status.used or {}).get("count/podtemplates") == "1",
               what="podtemplates counted")
    assert core.read_namespaced_resource_quota("objects", "typed").status.used["pods"] == "2"
    try:
        core.create_namespaced_pod_template("typed", client.V1PodTemplate(metadata=client.V1ObjectMeta(name="t2"), template=template))
        raise AssertionError("a second PodTemplate went over the quota")
    except ApiException as err:
        assert err.status == 403 and "exceeded quota: objects, requested: count/podtemplates=1" in err.body
    assert {pc.metadata.name for pc in scheduling.list_priority_class().items} >= {"system-node-critical", "system-cluster-critical"}
    node.create_runtime_class(client.V1RuntimeClass(metadata=client.V1ObjectMeta(name="plain"), handler="runc"))
    assert node.read_runtime_class("plain").handler == "runc"

    def refused(call, *args) -> dict:
        try:
            call(*args)
        except ApiException as err:
            assert err.status == 422, err.body
            return json.loads(err.body)
        raise AssertionError("accepted")

    status = refused(core.create_namespaced_limit_range, "typed", {"metadata": {"name": "bad"}, "spec": {"limits": [
        {"type": "Container", "min": {"cpu": "2"}, "max": {"cpu": "1"}}]}})
    assert "spec.limits[0].min[cpu]: Invalid value: \"2\": min value 2 is greater than max value 1" in status["message"]
    status = refused(core.create_namespaced_resource_quota, "typed", {"metadata": {"name": "bad"}, "spec": {"hard": {"pods": "1.5"}}})
    assert "spec.hard[pods]: Invalid value: \"1500m\": must be an integer" in status["message"]
    status = refused(core.create_namespaced_replication_controller, "typed", {"metadata": {"name": "bad"}, "spec": {}})
    assert [c["field"] for c in status["details"]["causes"]] == ["spec.selector", "spec.template"]
    status = refused(scheduling.create_priority_class, {"metadata": {"name": "huge"}, "value": 2000000000})
    assert "maximum allowed value of a user defined priority is 1000000000" in status["message"]


DISCOVERY_AUDIT = """
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: Metadata
  nonResourceURLs: ["/apis"]
- level: None
"""


@pytest.fixture
async def audited(tmp_path: Path) -> AsyncIterator[tuple[Client, Path]]:
    """A server running its controllers that audits discovery's first request; and its audit log."""
    (tmp_path / "policy.yaml").write_text(DISCOVERY_AUDIT)
    audit = AuditOptions(policy_file=tmp_path / "policy.yaml", log_path=str(tmp_path / "audit.log"))
    srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=True, audit=audit))
    await srv.start()
    try:
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            yield Client(session), tmp_path / "audit.log"
    finally:
        await srv.stop()


async def test_a_quota_naming_unknown_resources_costs_one_discovery(audited: tuple[Client, Path]) -> None:
    """300 ``count/`` names nothing serves, synced again on each ConfigMap: discovery runs once
    (a miss is remembered), not once per name and sync."""
    api, audit_log = audited
    hard = {f"count/nothing{i}.example.com": "1" for i in range(300)} | {"count/configmaps": "10"}
    quota = {"apiVersion": "v1", "kind": "ResourceQuota", "metadata": {"name": "many"}, "spec": {"hard": hard}}
    assert (await api.post("/api/v1/namespaces/default/resourcequotas", quota)).status == 201
    for count in (1, 2, 3):
        body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": f"c{count}"}}
        assert (await api.post("/api/v1/namespaces/default/configmaps", body)).status == 201

        async def counted(count: int = count) -> bool:
            used = ((await api.get("/api/v1/namespaces/default/resourcequotas/many")).body.get("status") or {}).get("used") or {}
            return used.get("count/configmaps") == str(count) and used.get("count/nothing0.example.com") == "0"
        await eventually(counted, what=f"{count} ConfigMaps counted")
    discoveries = [json.loads(line) for line in audit_log.read_text().splitlines()]
    assert len([e for e in discoveries if "resourcequota" in e["user"]["username"]]) == 1, discoveries
