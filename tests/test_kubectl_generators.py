"""The real kubectl's generator commands, which POST protobuf bodies, against `kplane serve`."""

from __future__ import annotations

import base64

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
