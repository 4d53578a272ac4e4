"""Fields Go always writes: every served kind answers as kube-apiserver 1.32 encodes its Go type.

Go's ``encoding/json`` writes a field whose tag lacks ``omitempty`` even when it is the zero value
(``reportingComponent: ""``, ``containers: null``), and a struct held by value whatever its tag says
(``status: {}``, ``source: {}``, a ``metav1.Time`` as ``null``). kube-apiserver encodes objects whole,
into etcd and into responses, so clients comparing text (``kubectl -o yaml``, golden files, ``kubectl
diff``) see these fields. The expected bodies below are written by hand from the Go types
(``k8s.io/api`` v0.32, kube-aggregator's ``apiregistration/v1``, sample-apiserver's ``wardle``) and
kube-apiserver's defaulting for the minimal objects of ``tests.builders.KINDS``.
"""

from __future__ import annotations

import copy
import re
from typing import Any

import orjson
import pytest
import yaml

from tests.builders import KINDS, PODSPEC

UID, RV, NOW, IP = "<uid>", "<resourceVersion>", "<time>", "<clusterIP>"


def meta(name: str = "seed", namespace: str | None = "default", **more: Any) -> dict[str, Any]:
    """Server-set metadata, with placeholders for what changes from run to run."""
    out: dict[str, Any] = {"name": name}
    if namespace:
        out["namespace"] = namespace
    return {**out, "uid": UID, "resourceVersion": RV, **more, "creationTimestamp": NOW}


CONTAINER = {  # PODSPEC's container after SetDefaults_Container; resources is a struct value
    "name": "c", "image": "nginx:1.25", "resources": {}, "terminationMessagePath": "/dev/termination-log",
    "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent",
}
TEMPLATE_SPEC = {  # SetDefaults_PodSpec; securityContext is defaulted to an empty struct
    "containers": [CONTAINER], "restartPolicy": "Always", "terminationGracePeriodSeconds": 30,
    "dnsPolicy": "ClusterFirst", "securityContext": {}, "schedulerName": PODSPEC["schedulerName"],
}
TOKEN_VOLUME = "kube-api-access-<suffix>"

EXPECTED: dict[str, dict[str, Any]] = {
    "configmap": {"apiVersion": "v1", "kind": "ConfigMap", "metadata": meta(), "data": {"a": "b"}},
    "secret": {"apiVersion": "v1", "kind": "Secret", "metadata": meta(), "data": {"a": "Yg=="}, "type": "Opaque"},
    "service": {"apiVersion": "v1", "kind": "Service", "metadata": meta(), "spec": {
        "ports": [{"protocol": "TCP", "port": 80, "targetPort": 80}], "clusterIP": IP, "clusterIPs": [IP],
        "type": "ClusterIP", "sessionAffinity": "None", "ipFamilies": ["IPv4"], "ipFamilyPolicy": "SingleStack",
        "internalTrafficPolicy": "Cluster",
    }, "status": {"loadBalancer": {}}},  # ServiceStatus.LoadBalancer: a struct value
    "pod": {"apiVersion": "v1", "kind": "Pod", "metadata": meta(), "spec": {
        "volumes": [{"name": TOKEN_VOLUME, "projected": {"sources": [
            {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ], "defaultMode": 420}}],
        "containers": [{**CONTAINER, "volumeMounts": [
            {"name": TOKEN_VOLUME, "readOnly": True, "mountPath": "/var/run/secrets/kubernetes.io/serviceaccount"}]}],
        **{k: v for k, v in TEMPLATE_SPEC.items() if k != "containers"},
        "serviceAccountName": "default", "serviceAccount": "default",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ],
        "priority": 0, "enableServiceLinks": True, "preemptionPolicy": "PreemptLowerPriority",
    }, "status": {"phase": "Pending", "qosClass": "BestEffort"}},
    "serviceaccount": {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": meta()},
    "event": {  # involvedObject and source are struct values, the three times metav1.Time/MicroTime
        # values, reportingComponent/reportingInstance strings without omitempty
        "apiVersion": "v1", "kind": "Event", "metadata": meta(),
        "involvedObject": {"kind": "Pod", "namespace": "default", "name": "seed"}, "reason": "Test", "message": "m",
        "source": {}, "firstTimestamp": None, "lastTimestamp": None, "type": "Normal", "eventTime": None,
        "reportingComponent": "", "reportingInstance": "",
    },
    "namespace": {"apiVersion": "v1", "kind": "Namespace",
                  "metadata": meta(namespace=None, labels={"kubernetes.io/metadata.name": "seed"}),
                  "spec": {"finalizers": ["kubernetes"]}, "status": {"phase": "Active"}},
    "node": {"apiVersion": "v1", "kind": "Node", "metadata": meta(namespace=None), "spec": {}, "status": {
        "daemonEndpoints": {"kubeletEndpoint": {"Port": 0}},  # DaemonEndpoint.Port: `json:"Port"`
        "nodeInfo": {key: "" for key in (  # NodeSystemInfo: ten strings without omitempty
            "machineID", "systemUUID", "bootID", "kernelVersion", "osImage", "containerRuntimeVersion",
            "kubeletVersion", "kubeProxyVersion", "operatingSystem", "architecture")},
    }},
    "deployment": {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": meta(generation=1), "spec": {
        "replicas": 1, "selector": {"matchLabels": {"app": "a"}},
        "template": {"metadata": {"creationTimestamp": None, "labels": {"app": "a"}}, "spec": TEMPLATE_SPEC},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
        "revisionHistoryLimit": 10, "progressDeadlineSeconds": 600,
    }, "status": {}},
    "replicaset": {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": meta(generation=1), "spec": {
        "replicas": 0, "selector": {"matchLabels": {"app": "r"}},
        "template": {"metadata": {"creationTimestamp": None, "labels": {"app": "r"}}, "spec": TEMPLATE_SPEC},
    }, "status": {"replicas": 0}},  # ReplicaSetStatus.Replicas: int32 without omitempty
    "lease": {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": meta(),
              "spec": {"holderIdentity": "me"}},
    "apiservice": {  # kplane marks a Local APIService available as it is created
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": meta("v1.corpus.example.com", None),
        "spec": {"group": "corpus.example.com", "version": "v1", "groupPriorityMinimum": 100, "versionPriority": 10},
        "status": {"conditions": [{"type": "Available", "status": "True", "lastTransitionTime": NOW, "reason": "Local",
                                   "message": "Local APIServices are always available"}]},
    },
    "flunder": {"apiVersion": "wardle.example.com/v1beta1", "kind": "Flunder", "metadata": meta(),
                "spec": {}, "status": {}},
}
assert EXPECTED.keys() == KINDS.keys()  # every served kind


def normalized(body: dict[str, Any]) -> dict[str, Any]:
    """The body with placeholders for what differs between runs (managedFields are tested elsewhere)."""
    out = copy.deepcopy(body)
    metadata = out["metadata"]
    metadata.pop("managedFields", None)
    for key, placeholder in (("uid", UID), ("resourceVersion", RV), ("creationTimestamp", NOW)):
        if key in metadata:
            metadata[key] = placeholder
    if out["kind"] == "Service":
        out["spec"]["clusterIP"], out["spec"]["clusterIPs"] = IP, [IP]
    for condition in (out.get("status") or {}).get("conditions") or ():
        condition["lastTransitionTime"] = NOW
    text = re.sub(r"kube-api-access-[a-z0-9]{5}", TOKEN_VOLUME, orjson.dumps(out).decode())
    return orjson.loads(text)


@pytest.mark.parametrize("name", list(KINDS))
async def test_a_minimal_object_is_answered_as_kube_apiserver_encodes_its_go_type(api, name: str) -> None:
    kind = KINDS[name]
    created = await api.post(kind.collection, kind.body(kind.seed))
    assert created.status == 201, created
    assert normalized(created.body) == EXPECTED[name]
    read = await api.get(kind.item())  # the stored bytes as they are: storage has the fields too
    assert normalized(read.body) == EXPECTED[name]
    listed = await api.get(kind.collection, params={"fieldSelector": f"metadata.name={kind.seed}"})
    assert [normalized(item | {"apiVersion": kind.api_version, "kind": kind.kind}) for item in listed.body["items"]] == [EXPECTED[name]]


async def test_a_read_in_another_version_writes_that_versions_zero_fields(api) -> None:
    """A v1beta1 Flunder read as v1alpha1 is converted, and still has Go's struct values."""
    kind = KINDS["flunder"]
    assert (await api.post(kind.collection, kind.body(kind.seed))).status == 201
    read = await api.get(f"/apis/wardle.example.com/v1alpha1/namespaces/default/flunders/{kind.seed}")
    assert normalized(read.body) == {**EXPECTED["flunder"], "apiVersion": "wardle.example.com/v1alpha1"}


async def test_zero_fields_a_client_sends_back_are_still_unset(api) -> None:
    """A client that read an Event and writes it back sends ``reportingComponent: ""`` and
    ``source: {}``; they mean unset, as in Go, and a value the client sets replaces them."""
    kind = KINDS["event"]
    created = (await api.post(kind.collection, kind.body(kind.seed))).body
    replaced = await api.put(kind.item(), created | {"reportingComponent": "kubelet", "source": {"host": "n1"}})
    assert replaced.status == 200, replaced
    assert normalized(replaced.body) == EXPECTED["event"] | {"reportingComponent": "kubelet", "source": {"host": "n1"}}
    patched = await api.patch(kind.item(), {"reportingComponent": None, "source": None})
    assert normalized(patched.body) == EXPECTED["event"]


async def test_an_object_stored_without_them_is_served_as_stored_until_its_next_write(api, server) -> None:
    """Objects written before the server wrote these fields are not migrated: a read in the storage
    version serves the stored bytes; the next write stores the object whole, fields included."""
    kind = KINDS["event"]
    body = {"apiVersion": "v1", "kind": "Event", "metadata": {
        "name": "old", "namespace": "default", "uid": "0c7e5b9e-0000-4000-8000-000000000001",
        "creationTimestamp": "2026-01-02T03:04:05Z"}, "involvedObject": {"kind": "Pod", "name": "p"}, "reason": "Old"}
    await server.storage.create("/registry/core/events/default/old", orjson.dumps(body))
    read = await api.get(kind.item("old"))
    assert {k: v for k, v in read.body.items() if k != "metadata"} == {k: v for k, v in body.items() if k != "metadata"}
    labelled = await api.patch(kind.item("old"), {"metadata": {"labels": {"a": "b"}}})
    assert labelled.status == 200, labelled
    assert (await api.get(kind.item("old"))).body == labelled.body
    assert labelled.body["source"] == {} and labelled.body["eventTime"] is None
    assert labelled.body["reportingComponent"] == "" and labelled.body["reportingInstance"] == ""


def test_kubectl_get_o_yaml_shows_them(kubectl) -> None:
    """``kubectl get -o yaml`` of a Deployment and an Event, as it prints kube-apiserver's."""
    kubectl.run("apply", "-f", "-", stdin=yaml.safe_dump_all([
        KINDS["deployment"].body("zeros"), KINDS["event"].body("zeros")]))
    deployment = kubectl.run("get", "deployment", "zeros", "-o", "yaml").stdout
    assert "  template:\n    metadata:\n      creationTimestamp: null\n      labels:\n        app: a\n" in deployment
    assert "        resources: {}\n" in deployment
    event = yaml.safe_load(kubectl.run("get", "event", "zeros", "-o", "yaml").stdout)
    expected = {k: v for k, v in EXPECTED["event"].items() if k != "metadata"}
    assert {k: v for k, v in event.items() if k != "metadata"} == expected
    text = kubectl.run("get", "event", "zeros", "-o", "yaml").stdout
    for line in ("eventTime: null\n", "firstTimestamp: null\n", 'reportingComponent: ""\n', "source: {}\n"):
        assert line in text
