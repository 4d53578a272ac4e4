"""The real kubectl's generator commands, which POST protobuf bodies (`kubectl run` and `expose` send JSON),
against `kplane serve`."""

from __future__ import annotations

import base64
import shutil
import subprocess

import pytest

from tests.kubectl_cli import Kubectl


def test_create_namespace(kubectl: Kubectl) -> None:
    assert kubectl.run("create", "namespace", "gen").stdout.strip() == "namespace/gen created"
    assert kubectl.json("get", "namespace", "gen")["status"]["phase"] == "Active"


def test_create_configmap(kubectl: Kubectl) -> None:
    kubectl.run("create", "configmap", "c", "--from-literal=a=b", "--from-literal=k=v")
    assert kubectl.json("get", "configmap", "c")["data"] == {"a": "b", "k": "v"}


def test_create_secret(kubectl: Kubectl) -> None:
    kubectl.run("create", "secret", "generic", "s", "--from-literal=user=admin")
    secret = kubectl.json("get", "secret", "s")
    assert base64.b64decode(secret["data"]["user"]) == b"admin" and secret["type"] == "Opaque"


def test_create_deployment(kubectl: Kubectl) -> None:
    kubectl.run("create", "deployment", "web", "--image=nginx:1.25", "--replicas=2", "--port=80")
    deployment = kubectl.json("get", "deployment", "web")
    spec = deployment["spec"]
    assert spec["replicas"] == 2
    assert deployment["metadata"]["labels"] == spec["selector"]["matchLabels"] == {"app": "web"}
    assert spec["template"]["metadata"]["labels"] == {"app": "web"}
    (container,) = spec["template"]["spec"]["containers"]
    assert container["name"] == "nginx" and container["image"] == "nginx:1.25"
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]


def test_create_deployment_with_a_command(kubectl: Kubectl) -> None:
    kubectl.run("create", "deployment", "sleeper", "--image=busybox:1.36", "--", "sleep", "3600")
    (container,) = kubectl.json("get", "deployment", "sleeper")["spec"]["template"]["spec"]["containers"]
    assert container["command"] == ["sleep", "3600"]


def test_create_serviceaccount(kubectl: Kubectl) -> None:
    kubectl.run("create", "serviceaccount", "robot")
    assert kubectl.json("get", "serviceaccount", "robot")["metadata"]["name"] == "robot"


@pytest.mark.parametrize(
    ("args", "spec"),
    [
        (["clusterip", "cip", "--tcp=80:8080"],
         {"type": "ClusterIP", "selector": {"app": "cip"}, "ports": [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080}]}),
        (["clusterip", "headless", "--clusterip=None"], {"type": "ClusterIP", "clusterIP": "None", "selector": {"app": "headless"}}),
        (["nodeport", "np", "--tcp=80:8080", "--node-port=30080"],
         {"type": "NodePort", "ports": [{"name": "80-8080", "port": 80, "protocol": "TCP", "targetPort": 8080, "nodePort": 30080}]}),
        (["loadbalancer", "lb", "--tcp=443"], {"type": "LoadBalancer", "ports": [{"name": "443", "port": 443, "protocol": "TCP", "targetPort": 443}]}),
        (["externalname", "ext", "--external-name=example.com"], {"type": "ExternalName", "externalName": "example.com"}),
    ],
    ids=lambda value: value[1] if isinstance(value, list) else "",
)
def test_create_service(kubectl: Kubectl, args: list[str], spec: dict) -> None:
    name = args[1]
    assert kubectl.run("create", "service", *args).stdout.strip() == f"service/{name} created"
    live = kubectl.json("get", "service", name)["spec"]
    if "ports" in spec:  # a LoadBalancer's nodePort is allocated: compare it only where asked
        live["ports"] = [{k: v for k, v in port.items() if k != "nodePort" or "nodePort" in wanted}
                         for port, wanted in zip(live["ports"], spec["ports"])]
    assert {key: live.get(key) for key in spec} == spec
    kubectl.run("delete", "service", name)


def test_expose_a_deployment(kubectl: Kubectl) -> None:
    kubectl.run("create", "deployment", "exposed", "--image=nginx:1.25")
    assert kubectl.run("expose", "deployment", "exposed", "--port=80", "--target-port=8080").stdout.strip() == "service/exposed exposed"
    spec = kubectl.json("get", "service", "exposed")["spec"]
    assert spec["selector"] == {"app": "exposed"}
    assert spec["ports"] == [{"port": 80, "protocol": "TCP", "targetPort": 8080}]


def test_run_a_pod(kubectl: Kubectl) -> None:
    kubectl.run("run", "runner", "--image=busybox:1.36", "--port=80", "--labels=tier=cli", "--env=K=V",
                "--restart=Never", "--", "sleep", "3600")
    pod = kubectl.json("get", "pod", "runner")
    assert pod["metadata"]["labels"] == {"tier": "cli"}
    (container,) = pod["spec"]["containers"]
    assert container["args"] == ["sleep", "3600"] and container["env"] == [{"name": "K", "value": "V"}]
    assert container["ports"] == [{"containerPort": 80, "protocol": "TCP"}]
    assert pod["spec"]["restartPolicy"] == "Never"


def test_create_secret_docker_registry(kubectl: Kubectl) -> None:
    kubectl.run("create", "secret", "docker-registry", "reg", "--docker-server=r.example.com",
                "--docker-username=u", "--docker-password=p")
    secret = kubectl.json("get", "secret", "reg")
    assert secret["type"] == "kubernetes.io/dockerconfigjson"
    auths = base64.b64decode(secret["data"][".dockerconfigjson"])
    assert b'"r.example.com"' in auths


@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the certificate")
def test_create_secret_tls(kubectl: Kubectl) -> None:
    cert, key = kubectl.workdir / "tls.crt", kubectl.workdir / "tls.key"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", str(key), "-out", str(cert),
                    "-days", "1", "-subj", "/CN=example"], check=True, capture_output=True)
    kubectl.run("create", "secret", "tls", "tls", f"--cert={cert}", f"--key={key}")
    secret = kubectl.json("get", "secret", "tls")
    assert secret["type"] == "kubernetes.io/tls"
    assert base64.b64decode(secret["data"]["tls.crt"]) == cert.read_bytes()
