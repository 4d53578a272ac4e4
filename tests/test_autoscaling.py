"""HorizontalPodAutoscalers (autoscaling/v2 and v1), metrics.k8s.io and the autoscaler, through a
real `kplane serve` (its simulated nodes run the pods; the autoscaler syncs every second), the
real kubectl and the official Python client."""

from __future__ import annotations

import json
import os
import shutil
import urllib.error
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest

from tests.kubectl_cli import Kubectl
from tests.servers import Served, serving
from tests.waiting import wait_until

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client as k8s, config as k8s_config  # noqa: E402
from kubernetes.client.rest import ApiException  # noqa: E402

pytestmark = pytest.mark.skipif(shutil.which("kubectl") is None, reason="kubectl is not on PATH")

HPAS = "/apis/autoscaling/{version}/namespaces/default/horizontalpodautoscalers"


def deployment(name: str, replicas: int, cpu: str = "100m", annotations: dict[str, str] | None = None) -> str:
    template_meta: dict[str, Any] = {"labels": {"app": name}}
    if annotations:
        template_meta["annotations"] = annotations
    return json.dumps({
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
        "spec": {"replicas": replicas, "selector": {"matchLabels": {"app": name}}, "template": {
            "metadata": template_meta,
            "spec": {"containers": [{"name": "app", "image": "nginx", "resources": {"requests": {"cpu": cpu, "memory": "64Mi"}}}]},
        }},
    })


def hpa(name: str, target: str, *, max_replicas: int = 4, metrics: list[dict[str, Any]] | None = None,
        behavior: dict[str, Any] | None = None) -> dict[str, Any]:
    spec: dict[str, Any] = {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": target},
                            "minReplicas": 1, "maxReplicas": max_replicas}
    if metrics is not None:
        spec["metrics"] = metrics
    if behavior is not None:
        spec["behavior"] = behavior
    return {"apiVersion": "autoscaling/v2", "kind": "HorizontalPodAutoscaler", "metadata": {"name": name}, "spec": spec}


def cpu(percent: int) -> dict[str, Any]:
    return {"type": "Resource", "resource": {"name": "cpu", "target": {"type": "Utilization", "averageUtilization": percent}}}


class Cluster:
    def __init__(self, served: Served, kubectl: Kubectl) -> None:
        self.served, self.kubectl = served, kubectl

    def http(self, method: str, path: str, body: Any = None) -> tuple[int, Any]:
        data = json.dumps(body).encode() if body is not None else None
        request = urllib.request.Request(self.served.url + path, data=data, method=method, headers={"Content-Type": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=10) as reply:
                return reply.status, json.loads(reply.read())
        except urllib.error.HTTPError as err:
            return err.code, json.loads(err.read())

    def hpa(self, name: str) -> dict[str, Any]:
        return self.kubectl.json("get", "hpa", name)

    def replicas(self, name: str) -> int:
        return self.kubectl.json("get", "deploy", name).get("status", {}).get("readyReplicas", 0)

    def condition(self, name: str, kind: str) -> dict[str, Any]:
        return next((c for c in self.hpa(name).get("status", {}).get("conditions", []) if c["type"] == kind), {})


@pytest.fixture(scope="module")
def cluster(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Cluster]:
    workdir = tmp_path_factory.mktemp("autoscaling")
    with serving(workdir / "data", "--horizontal-pod-autoscaler-sync-period", "1s") as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir)}
        yield Cluster(served, Kubectl(env, workdir))


@pytest.fixture(scope="module")
def python_client(cluster: Cluster) -> Iterator[Any]:
    with k8s_config.new_client_from_config(config_file=str(cluster.served.kubeconfig)) as api_client:
        yield api_client


# -- the kind ---------------------------------------------------------------------------------------
def test_kubectl_autoscale_scales_up_to_max(cluster: Cluster) -> None:
    """Pods use what they request by default (100% of it), so a 50% target doubles them, up to max."""
    kubectl = cluster.kubectl
    kubectl.apply_file("apply", deployment("web", 2))
    wait_until(lambda: cluster.replicas("web") == 2, what="web's 2 pods ready")
    assert "horizontalpodautoscaler.autoscaling/web autoscaled" in kubectl.run("autoscale", "deploy", "web", "--cpu-percent=50",
                                                                               "--min=1", "--max=4").stdout
    wait_until(lambda: cluster.replicas("web") == 4, what="web scaled to 4")
    wait_until(lambda: cluster.condition("web", "ScalingLimited").get("reason") == "TooManyReplicas", what="limited at max")
    table = kubectl.run("get", "hpa", "web").stdout.splitlines()
    assert table[0].split() == ["NAME", "REFERENCE", "TARGETS", "MINPODS", "MAXPODS", "REPLICAS", "AGE"]
    assert table[1].split()[:7] == ["web", "Deployment/web", "cpu:", "100%/50%", "1", "4", "4"]
    described = kubectl.run("describe", "hpa", "web").stdout
    assert "resource cpu on pods  (as a percentage of request):  100% (100m) / 50%" in described
    assert "SuccessfulRescale" in described and "New size: 4; reason: cpu resource utilization (percentage of request) above target" in described
    status, v1 = cluster.http("GET", HPAS.format(version="v1") + "/web")
    assert status == 200 and v1["spec"]["targetCPUUtilizationPercentage"] == 50
    assert v1["status"]["currentCPUUtilizationPercentage"] == 100 and v1["status"]["currentReplicas"] == 4
    assert json.loads(v1["metadata"]["annotations"]["autoscaling.alpha.kubernetes.io/conditions"])[0]["type"] == "AbleToScale"
    kubectl.run("delete", "hpa", "web")


def test_scales_down_when_usage_drops(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    kubectl.apply_file("apply", deployment("api", 3, cpu="200m"))
    wait_until(lambda: cluster.replicas("api") == 3, what="api's 3 pods ready")
    kubectl.apply_file("apply", json.dumps(hpa("api", "api", metrics=[cpu(50)], behavior={"scaleDown": {"stabilizationWindowSeconds": 0}})))
    wait_until(lambda: cluster.replicas("api") == 4, what="api scaled up to 4 at 100% of its requests")
    kubectl.run("annotate", "pods", "-l", "app=api", "kplane.io/usage=cpu=20m", "--overwrite")
    wait_until(lambda: cluster.hpa("api")["status"].get("desiredReplicas") == 1, what="api asked down to 1")
    wait_until(lambda: cluster.replicas("api") == 1, what="api scaled down")
    events = kubectl.run("get", "events", "--field-selector", "involvedObject.name=api,involvedObject.kind=HorizontalPodAutoscaler").stdout
    assert "New size: 1; reason: All metrics below target" in events
    spec = cluster.hpa("api")["spec"]["behavior"]  # the behaviour given in part, completed by defaulting
    assert spec["scaleDown"] == {"stabilizationWindowSeconds": 0, "selectPolicy": "Max", "policies": [{"type": "Percent", "value": 100, "periodSeconds": 15}]}
    assert spec["scaleUp"]["policies"] == [{"type": "Pods", "value": 4, "periodSeconds": 15}, {"type": "Percent", "value": 100, "periodSeconds": 15}]


def test_metrics_that_cannot_be_read_stop_scaling(cluster: Cluster) -> None:
    kubectl = cluster.kubectl
    pods_metric = {"type": "Pods", "pods": {"metric": {"name": "qps"}, "target": {"type": "AverageValue", "averageValue": "10"}}}
    kubectl.apply_file("apply", json.dumps(hpa("custom", "api", metrics=[pods_metric])))
    kubectl.apply_file("apply", json.dumps(hpa("nowhere", "missing", metrics=[cpu(50)])))
    active = wait_until(lambda: cluster.condition("custom", "ScalingActive") or None, what="custom's ScalingActive")
    assert (active["status"], active["reason"]) == ("False", "FailedGetPodsMetric")
    assert "custom.metrics.k8s.io" in active["message"]
    able = wait_until(lambda: cluster.condition("nowhere", "AbleToScale") or None, what="nowhere's AbleToScale")
    assert (able["status"], able["reason"]) == ("False", "FailedGetScale")
    assert able["message"] == 'the HPA controller was unable to get the target\'s current scale: deployments.apps "missing" not found'
    kubectl.run("delete", "hpa", "custom", "nowhere")


def test_v1_keeps_what_v2_holds_in_annotations(cluster: Cluster) -> None:
    memory = {"type": "Resource", "resource": {"name": "memory", "target": {"type": "AverageValue", "averageValue": "100Mi"}}}
    status, _ = cluster.http("POST", HPAS.format(version="v2"), hpa("both", "nothing", metrics=[memory, cpu(60)],
                                                                   behavior={"scaleUp": {"selectPolicy": "Disabled"}}))
    assert status == 201
    status, v1 = cluster.http("GET", HPAS.format(version="v1") + "/both")
    annotations = v1["metadata"]["annotations"]
    assert v1["spec"]["targetCPUUtilizationPercentage"] == 60
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/metrics"]) == [
        {"type": "Resource", "resource": {"name": "memory", "targetAverageValue": "100Mi"}}]
    assert json.loads(annotations["autoscaling.alpha.kubernetes.io/behavior"])["scaleUp"]["selectPolicy"] == "Disabled"

    def read_modify_write() -> bool:  # as a v1 client does it, again when the controller wrote in between
        _, current = cluster.http("GET", HPAS.format(version="v1") + "/both")
        current["spec"]["maxReplicas"] = 7
        status, _ = cluster.http("PUT", HPAS.format(version="v1") + "/both", current)
        assert status in (200, 409)
        return status == 200

    wait_until(read_modify_write, what="the v1 update")
    status, v2 = cluster.http("GET", HPAS.format(version="v2") + "/both")
    assert v2["spec"]["maxReplicas"] == 7 and v2["spec"]["metrics"] == [memory, cpu(60)]
    assert v2["spec"]["behavior"]["scaleUp"]["selectPolicy"] == "Disabled"
    assert "annotations" not in v2["metadata"]
    status, bad = cluster.http("PUT", HPAS.format(version="v1") + "/both",
                               {**v1, "metadata": {**v1["metadata"], "annotations": {"autoscaling.alpha.kubernetes.io/metrics": "{nope"}}})
    assert status == 400 and "annotation autoscaling.alpha.kubernetes.io/metrics" in bad["message"]
    cluster.kubectl.run("delete", "hpa", "both")


METRICS, BEHAVIOR = "autoscaling.alpha.kubernetes.io/metrics", "autoscaling.alpha.kubernetes.io/behavior"
CONDITIONS = "autoscaling.alpha.kubernetes.io/conditions"


@pytest.mark.parametrize(("key", "value", "why"), [
    (METRICS, [{"type": "Pods", "pods": {"metricName": "x", "targetAverageValue": "1", "selector": {"matchLabels": [1]}}}],
     "[0].pods.selector.matchLabels: Invalid value"),
    (METRICS, [{"type": "Object", "object": {"target": 5, "metricName": "x", "targetValue": "1"}}], "[0].object.target: Invalid value"),
    (METRICS, [{"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 2**31}}],
     "[0].resource.targetAverageUtilization: Invalid value: cannot unmarshal number 2147483648 into Go value of type int32"),
    (METRICS, [{"type": "Resource", "resource": {"name": "cpu", "targetAverageUtilization": 10**23}}],
     "[0].resource.targetAverageUtilization: Invalid value"),
    (METRICS, [{"type": "External", "external": {"metricName": "x", "metricSelector": {
        "matchExpressions": [{"key": "a", "operator": "In", "values": "zz"}]}}}], "[0].external.metricSelector.matchExpressions[0].values"),
    (BEHAVIOR, {"scaleUp": {"stabilizationWindowSeconds": 2**31}}, "scaleUp.stabilizationWindowSeconds: Invalid value"),
    (CONDITIONS, [{"type": 1, "status": "True"}], "[0].type: Invalid value"),
])
def test_v1_annotations_are_type_checked(cluster: Cluster, key: str, value: Any, why: str) -> None:
    """What the annotations hold is loaded as a body is: a wrong type or an int32 out of range is
    a 400 naming the annotation (as kube's conversion fails), never a 500 or a stored object v2
    cannot read."""
    body = {"apiVersion": "autoscaling/v1", "kind": "HorizontalPodAutoscaler",
            "metadata": {"name": "typed", "annotations": {key: json.dumps(value)}},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}, "maxReplicas": 3}}
    status, bad = cluster.http("POST", HPAS.format(version="v1"), body)
    assert status == 400 and bad["reason"] == "BadRequest", bad
    assert f"annotation {key}: {why}" in bad["message"]
    assert cluster.http("GET", HPAS.format(version="v2") + "/typed")[0] == 404


def test_python_client_typed_api_and_validation(python_client: Any) -> None:
    api = k8s.AutoscalingV2Api(python_client)
    body = k8s.V2HorizontalPodAutoscaler(
        metadata=k8s.V1ObjectMeta(name="typed"),
        spec=k8s.V2HorizontalPodAutoscalerSpec(
            scale_target_ref=k8s.V2CrossVersionObjectReference(api_version="apps/v1", kind="Deployment", name="nothing"),
            max_replicas=3))
    created = api.create_namespaced_horizontal_pod_autoscaler("default", body)
    assert created.spec.min_replicas == 1  # defaulted, with the 80% CPU metric
    assert created.spec.metrics[0].resource.target.average_utilization == 80
    listed = k8s.AutoscalingV1Api(python_client).list_namespaced_horizontal_pod_autoscaler("default")
    assert "typed" in [item.metadata.name for item in listed.items]
    api.delete_namespaced_horizontal_pod_autoscaler("typed", "default")
    body.metadata.name = "invalid"
    body.spec.min_replicas, body.spec.max_replicas = 3, 2
    body.spec.metrics = [k8s.V2MetricSpec(type="Resource", resource=k8s.V2ResourceMetricSource(
        name="cpu", target=k8s.V2MetricTarget(type="Utilization", average_utilization=0)))]
    with pytest.raises(ApiException) as refused:
        api.create_namespaced_horizontal_pod_autoscaler("default", body)
    assert refused.value.status == 422
    causes = {(c["field"], c["message"]) for c in json.loads(refused.value.body)["details"]["causes"]}
    assert ("spec.maxReplicas", "Invalid value: 2: must be greater than or equal to `minReplicas`") in causes
    assert ("spec.metrics[0].resource.target.averageUtilization", "Invalid value: 0: must be greater than 0") in causes


# -- metrics.k8s.io ---------------------------------------------------------------------------------
def test_kubectl_top_reports_declared_usage(cluster: Cluster, python_client: Any) -> None:
    kubectl = cluster.kubectl
    kubectl.apply_file("apply", deployment("busy", 1, annotations={"kplane.io/usage": "cpu=250m,memory=100Mi"}))
    wait_until(lambda: cluster.replicas("busy") == 1, what="busy's pod ready")
    top = wait_until(lambda: [line.split() for line in kubectl.run("top", "pod", "-l", "app=busy").stdout.splitlines()],
                     what="kubectl top pod")
    assert top[0] == ["NAME", "CPU(cores)", "MEMORY(bytes)"] and top[1][1:] == ["250m", "100Mi"]
    nodes = kubectl.run("top", "node").stdout.splitlines()
    assert nodes[0].split() == ["NAME", "CPU(cores)", "CPU(%)", "MEMORY(bytes)", "MEMORY(%)"] and len(nodes) == 4
    custom = k8s.CustomObjectsApi(python_client)
    listed = custom.list_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods", label_selector="app=busy")
    [item] = listed["items"]
    assert item["kind"] == "PodMetrics" and item["containers"] == [{"name": "app", "usage": {"cpu": "250m", "memory": "100Mi"}}]
    assert item["metadata"]["labels"]["app"] == "busy" and item["window"]
    one = custom.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods", item["metadata"]["name"])
    assert one["containers"] == item["containers"]
    with pytest.raises(ApiException) as missing:
        custom.get_namespaced_custom_object("metrics.k8s.io", "v1beta1", "default", "pods", "nope")
    assert missing.value.status == 404 and json.loads(missing.value.body)["message"] == 'pods.metrics.k8s.io "nope" not found'
    table = kubectl.run("get", "podmetrics", "-l", "app=busy").stdout.splitlines()
    assert table[0].split() == ["NAME", "CPU", "MEMORY", "WINDOW"] and table[1].split()[1:3] == ["250m", "100Mi"]
    status, refused = cluster.http("POST", "/apis/metrics.k8s.io/v1beta1/namespaces/default/pods", {"metadata": {"name": "x"}})
    assert status == 405 and refused["reason"] == "MethodNotAllowed"
