"""Defaulting of the core/v1 and apps/v1 kinds, compared with what kube-apiserver 1.32 returns for
the same minimal bodies (expected objects written by hand from ``pkg/apis/core/v1/defaults.go``,
``pkg/apis/apps/v1/defaults.go`` and the generated ``zz_generated.defaults.go``)."""

from __future__ import annotations

from typing import Any

import pytest

PODS = "/api/v1/namespaces/default/pods"
TOKEN_MOUNT = "/var/run/secrets/kubernetes.io/serviceaccount"


def pod(name: str = "p", **spec: Any) -> dict[str, Any]:
    spec.setdefault("containers", [{"name": "c", "image": "nginx:1.27"}])
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name}, "spec": spec}


def container_defaults(**more: Any) -> dict[str, Any]:
    return {"resources": {}, "terminationMessagePath": "/dev/termination-log",
            "terminationMessagePolicy": "File", "imagePullPolicy": "IfNotPresent", **more}


def without_token(spec: dict[str, Any]) -> dict[str, Any]:
    """The spec with ServiceAccount admission's token volume and mounts taken out, checked apart."""
    spec = dict(spec)
    volumes = [v for v in spec.get("volumes", []) if not v["name"].startswith("kube-api-access-")]
    spec["volumes"] = volumes
    if not volumes:
        del spec["volumes"]
    for key in ("containers", "initContainers"):
        for c in spec.get(key, []):
            c["volumeMounts"] = [m for m in c.get("volumeMounts", []) if m["mountPath"] != TOKEN_MOUNT]
            if not c["volumeMounts"]:
                del c["volumeMounts"]
    return spec


async def created(api, path: str, body: dict[str, Any]) -> dict[str, Any]:
    reply = await api.post(path, body)
    assert reply.status == 201, reply
    return reply.body


async def test_a_minimal_pod_comes_back_as_kube_apiserver_returns_it(api):
    body = pod(containers=[{"name": "web", "image": "nginx:1.27"}])
    spec = (await created(api, PODS, body))["spec"]
    token = next(v["name"] for v in spec["volumes"] if v["name"].startswith("kube-api-access-"))
    assert spec == {
        "volumes": [{"name": token, "projected": {
            "sources": [
                {"serviceAccountToken": {"expirationSeconds": 3607, "path": "token"}},
                {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
                {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
            ],
            "defaultMode": 420,
        }}],
        "containers": [{"name": "web", "image": "nginx:1.27", **container_defaults(
            volumeMounts=[{"name": token, "readOnly": True, "mountPath": TOKEN_MOUNT}])}],
        "restartPolicy": "Always",
        "terminationGracePeriodSeconds": 30,
        "dnsPolicy": "ClusterFirst",
        "serviceAccountName": "default",
        "serviceAccount": "default",
        "securityContext": {},
        "schedulerName": "default-scheduler",
        "tolerations": [
            {"key": "node.kubernetes.io/not-ready", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
            {"key": "node.kubernetes.io/unreachable", "operator": "Exists", "effect": "NoExecute", "tolerationSeconds": 300},
        ],
        "priority": 0,
        "enableServiceLinks": True,
        "preemptionPolicy": "PreemptLowerPriority",
    }
    assert token[len("kube-api-access-"):].isalnum() and len(token) == len("kube-api-access-") + 5


async def test_a_volume_without_a_source_is_an_empty_dir_and_sources_get_their_defaults(api):
    volumes = [
        {"name": "scratch"},
        {"name": "secret", "secret": {"secretName": "s"}},
        {"name": "config", "configMap": {"name": "c", "defaultMode": 256}},
        {"name": "host", "hostPath": {"path": "/data"}},
        {"name": "info", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels"}}]}},
        {"name": "all", "projected": {"sources": [
            {"serviceAccountToken": {"path": "t", "audience": "vault"}},
            {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace"}}]}},
        ]}},
        {"name": "disk", "azureDisk": {"diskName": "d", "diskURI": "u"}},
        {"name": "claim", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"]}}}},
    ]
    spec = without_token((await created(api, PODS, pod(volumes=volumes)))["spec"])
    assert spec["volumes"] == [
        {"name": "scratch", "emptyDir": {}},
        {"name": "secret", "secret": {"secretName": "s", "defaultMode": 420}},
        {"name": "config", "configMap": {"name": "c", "defaultMode": 256}},
        {"name": "host", "hostPath": {"path": "/data", "type": ""}},
        {"name": "info", "downwardAPI": {"items": [{"path": "labels", "fieldRef": {"fieldPath": "metadata.labels", "apiVersion": "v1"}}],
                                         "defaultMode": 420}},
        {"name": "all", "projected": {"sources": [
            {"serviceAccountToken": {"path": "t", "audience": "vault", "expirationSeconds": 3600}},
            {"downwardAPI": {"items": [{"path": "ns", "fieldRef": {"fieldPath": "metadata.namespace", "apiVersion": "v1"}}]}},
        ], "defaultMode": 420}},
        {"name": "disk", "azureDisk": {"diskName": "d", "diskURI": "u", "cachingMode": "ReadWrite", "fsType": "ext4",
                                       "readOnly": False, "kind": "Shared"}},
        {"name": "claim", "ephemeral": {"volumeClaimTemplate": {"spec": {"accessModes": ["ReadWriteOnce"], "volumeMode": "Filesystem"}}}},
    ]


async def test_containers_get_probe_port_env_and_lifecycle_defaults(api):
    web = {
        "name": "web", "image": "nginx",
        "ports": [{"containerPort": 80}, {"containerPort": 53, "protocol": "UDP"}],
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName"}}}],
        "livenessProbe": {"httpGet": {"port": 80}},
        "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 2},
        "startupProbe": {"grpc": {"port": 9090}, "failureThreshold": 30},
        "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/stop"}}},
    }
    init = {"name": "setup", "image": "busybox:latest", "restartPolicy": "Always"}
    spec = without_token((await created(api, PODS, pod(containers=[web], initContainers=[init])))["spec"])
    probe = {"timeoutSeconds": 1, "successThreshold": 1}
    assert spec["containers"] == [{
        "name": "web", "image": "nginx",
        "ports": [{"containerPort": 80, "protocol": "TCP"}, {"containerPort": 53, "protocol": "UDP"}],
        "env": [{"name": "NODE", "valueFrom": {"fieldRef": {"fieldPath": "spec.nodeName", "apiVersion": "v1"}}}],
        "resources": {},
        "livenessProbe": {"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, **probe, "periodSeconds": 10, "failureThreshold": 3},
        "readinessProbe": {"tcpSocket": {"port": 80}, "periodSeconds": 2, **probe, "failureThreshold": 3},
        "startupProbe": {"grpc": {"port": 9090, "service": ""}, "failureThreshold": 30, **probe, "periodSeconds": 10},
        "lifecycle": {"preStop": {"httpGet": {"port": 80, "path": "/stop", "scheme": "HTTP"}}},
        **container_defaults(imagePullPolicy="Always"),
    }]
    assert spec["initContainers"] == [{"name": "setup", "image": "busybox:latest", "restartPolicy": "Always",
                                       **container_defaults(imagePullPolicy="Always")}]


@pytest.mark.parametrize(("image", "policy"), [
    ("nginx", "Always"),
    ("nginx:latest", "Always"),
    ("registry.example.com:5000/team/app", "Always"),
    ("nginx:1.27", "IfNotPresent"),
    ("nginx@sha256:" + "a" * 64, "IfNotPresent"),
    ("nginx:latest@sha256:" + "a" * 64, "Always"),
    ("NGINX", "IfNotPresent"),  # does not parse as a reference
])
async def test_image_pull_policy_follows_the_tag(api, image, policy):
    body = pod(containers=[{"name": "c", "image": image}])
    assert (await created(api, PODS, body))["spec"]["containers"][0]["imagePullPolicy"] == policy


async def test_requests_default_to_limits_and_host_network_ports_to_host_ports_on_pods_only(api):
    c = {"name": "c", "image": "nginx:1.27", "ports": [{"containerPort": 8080}],
         "resources": {"limits": {"cpu": "500m", "memory": "1Gi"}, "requests": {"cpu": "100m"}}}
    spec = (await created(api, PODS, pod(containers=[c], hostNetwork=True)))["spec"]
    assert spec["containers"][0]["resources"] == {"limits": {"cpu": "500m", "memory": "1Gi"},
                                                  "requests": {"cpu": "100m", "memory": "1Gi"}}
    assert spec["containers"][0]["ports"] == [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]

    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {"containers": [c], "hostNetwork": True}}}}
    template = (await created(api, "/apis/apps/v1/namespaces/default/deployments", deploy))["spec"]["template"]["spec"]
    assert template["containers"][0]["resources"] == c["resources"]
    assert template["containers"][0]["ports"] == [{"containerPort": 8080, "protocol": "TCP"}]


async def test_a_deployment_template_gets_pod_spec_defaults_and_no_pod_or_admission_ones(api):
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "web"}, "spec": {
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"labels": {"app": "web"}}, "spec": {
            "volumes": [{"name": "scratch"}], "containers": [{"name": "web", "image": "nginx"}]}}}}
    spec = (await created(api, "/apis/apps/v1/namespaces/default/deployments", deploy))["spec"]
    assert spec == {
        "replicas": 1,
        "selector": {"matchLabels": {"app": "web"}},
        "template": {"metadata": {"creationTimestamp": None, "labels": {"app": "web"}}, "spec": {
            "volumes": [{"name": "scratch", "emptyDir": {}}],
            "containers": [{"name": "web", "image": "nginx", **container_defaults(imagePullPolicy="Always")}],
            "restartPolicy": "Always",
            "terminationGracePeriodSeconds": 30,
            "dnsPolicy": "ClusterFirst",
            "securityContext": {},
            "schedulerName": "default-scheduler",
        }},
        "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": "25%", "maxSurge": "25%"}},
        "revisionHistoryLimit": 10,
        "progressDeadlineSeconds": 600,
    }


async def test_a_replica_set_defaults_to_one_replica_and_a_recreate_deployment_has_no_rolling_update(api):
    rs = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "rs"}, "spec": {
        "selector": {"matchLabels": {"app": "rs"}},
        "template": {"metadata": {"labels": {"app": "rs"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}
    assert (await created(api, "/apis/apps/v1/namespaces/default/replicasets", rs))["spec"]["replicas"] == 1
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "re"}, "spec": {
        "selector": {"matchLabels": {"app": "re"}}, "strategy": {"type": "Recreate"},
        "template": {"metadata": {"labels": {"app": "re"}}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}}}
    assert (await created(api, "/apis/apps/v1/namespaces/default/deployments", deploy))["spec"]["strategy"] == {"type": "Recreate"}


async def test_service_account_is_the_alias_of_service_account_name(api):
    await created(api, "/api/v1/namespaces/default/serviceaccounts",
                  {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}})
    spec = (await created(api, PODS, pod(serviceAccount="robot")))["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("robot", "robot")
    spec = (await created(api, PODS, pod("q", serviceAccountName="robot", serviceAccount="other")))["spec"]
    assert (spec["serviceAccountName"], spec["serviceAccount"]) == ("robot", "robot")
    deploy = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "d"}, "spec": {
        "selector": {"matchLabels": {"app": "d"}},
        "template": {"metadata": {"labels": {"app": "d"}}, "spec": {
            "serviceAccountName": "robot", "containers": [{"name": "c", "image": "nginx:1"}]}}}}
    template = (await created(api, "/apis/apps/v1/namespaces/default/deployments", deploy))["spec"]["template"]["spec"]
    assert (template["serviceAccountName"], template["serviceAccount"]) == ("robot", "robot")


async def service(api, name: str, **spec: Any) -> dict[str, Any]:
    body = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": name}, "spec": spec}
    return (await created(api, "/api/v1/namespaces/default/services", body))["spec"]


async def test_service_defaults(api):
    plain = await service(api, "plain", ports=[{"port": 80}], selector={"app": "web"})
    assert plain["type"] == "ClusterIP" and plain["sessionAffinity"] == "None" and "sessionAffinityConfig" not in plain
    assert plain["ports"] == [{"protocol": "TCP", "port": 80, "targetPort": 80}]
    assert plain["internalTrafficPolicy"] == "Cluster" and "externalTrafficPolicy" not in plain
    assert plain["ipFamilyPolicy"] == "SingleStack" and plain["ipFamilies"] == ["IPv4"]
    assert "allocateLoadBalancerNodePorts" not in plain

    sticky = await service(api, "sticky", ports=[{"port": 80}], sessionAffinity="ClientIP")
    assert sticky["sessionAffinityConfig"] == {"clientIP": {"timeoutSeconds": 10800}}
    none = await service(api, "none", ports=[{"port": 80}], sessionAffinityConfig={"clientIP": {"timeoutSeconds": 5}})
    assert "sessionAffinityConfig" not in none  # dropped without ClientIP affinity

    external = await service(api, "external", ports=[{"port": 80}], externalIPs=["192.0.2.10"])
    assert external["externalTrafficPolicy"] == "Cluster"
    balancer = await service(api, "balancer", type="LoadBalancer", ports=[{"port": 443, "targetPort": "https"}])
    assert balancer["allocateLoadBalancerNodePorts"] is True and balancer["externalTrafficPolicy"] == "Cluster"
    assert balancer["internalTrafficPolicy"] == "Cluster" and balancer["ports"][0]["targetPort"] == "https"
    name = await service(api, "name", type="ExternalName", externalName="api.example.com")
    assert "internalTrafficPolicy" not in name and "externalTrafficPolicy" not in name


async def test_secret_and_node_defaults(api):
    secret = await created(api, "/api/v1/namespaces/default/secrets",
                           {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "s"}})
    assert secret["type"] == "Opaque"
    node = await created(api, "/api/v1/nodes", {"apiVersion": "v1", "kind": "Node", "metadata": {"name": "n1"},
                                                "status": {"capacity": {"cpu": "4", "pods": "110"}}})
    assert node["status"]["allocatable"] == {"cpu": "4", "pods": "110"}


async def test_odd_shapes_inside_untyped_parts_never_make_defaulting_or_admission_fail(api):
    """Volume sources, probes and handlers are kept as wire data; whatever is in them, no 5xx."""
    odd: list[Any] = [5, "abc", None, [1], {"items": "abc"}, {"sources": 5}, {"sources": ["x", 1]}]
    for i, value in enumerate(odd):
        volumes = [{"name": "a", "projected": value}, {"name": "b", "downwardAPI": value},
                   {"name": "c", "ephemeral": {"volumeClaimTemplate": value}}, {"name": 7}]
        c = {"name": "c", "image": "nginx:1", "livenessProbe": {"httpGet": value, "grpc": value},
             "lifecycle": {"preStop": value}, "envFrom": [value] if value is not None else []}
        reply = await api.post(PODS, pod(f"odd{i}", volumes=volumes, containers=[c]))
        assert 400 <= reply.status < 500, reply  # the volume named 7 is refused
