"""The real kubectl against a real `kplane serve` process."""

from __future__ import annotations

import subprocess

import yaml

from tests.kubectl_cli import DEPLOYMENT

POD = """
apiVersion: v1
kind: Pod
metadata: {name: box, labels: {app: box}}
spec:
  containers:
  - {name: main, image: busybox:1.36, command: [sleep, "3600"]}
"""
CONFIGMAP = """
apiVersion: v1
kind: ConfigMap
metadata: {name: settings}
data: {color: blue}
"""
NAMESPACE = """
apiVersion: v1
kind: Namespace
metadata: {name: team}
"""


def test_namespaces_exist_from_the_start(kubectl):
    names = kubectl.run("get", "namespaces", "-o", "name").stdout.split()
    assert {"namespace/default", "namespace/kube-system", "namespace/kube-public"} <= set(names)


def test_api_resources_and_versions(kubectl):
    resources = kubectl.run("api-resources").stdout
    assert "deployments" in resources and "deploy" in resources and "apps/v1" in resources
    versions = kubectl.run("api-versions").stdout.split()
    assert {"v1", "apps/v1"} <= set(versions) and "apps/v1beta2" not in versions


def test_deployment_lifecycle(kubectl):
    assert kubectl.apply_file("create", DEPLOYMENT).strip() == "deployment.apps/web created"
    table = kubectl.run("get", "deploy").stdout
    assert table.splitlines()[1].split()[0] == "web"
    obj = yaml.safe_load(kubectl.run("get", "deployment", "web", "-o", "yaml").stdout)
    assert obj["spec"]["replicas"] == 2 and obj["metadata"]["generation"] == 1
    assert kubectl.run("get", "deploy", "web", "-o", "jsonpath={.spec.template.spec.containers[0].image}").stdout == "nginx:1.25"
    kubectl.run("label", "deploy", "web", "tier=frontend")
    assert kubectl.run("get", "deploy", "-l", "tier=frontend", "-o", "name").stdout.strip() == "deployment.apps/web"
    kubectl.run("patch", "deploy", "web", "--type=merge", "-p", '{"spec":{"replicas":3}}')
    kubectl.run("patch", "deploy", "web", "--type=json", "-p", '[{"op":"replace","path":"/spec/replicas","value":4}]')
    assert kubectl.json("get", "deploy", "web")["spec"]["replicas"] == 4
    again = kubectl.run("create", "-f", "-", "--validate=false", "--dry-run=server", stdin=DEPLOYMENT, check=False)
    assert again.returncode == 1 and "(AlreadyExists)" in again.stderr
    renamed = DEPLOYMENT.replace("name: web", "name: trial", 1)
    dry = kubectl.run("create", "-f", "-", "--validate=false", "--dry-run=server", stdin=renamed)
    assert dry.stdout.strip() == "deployment.apps/trial created (server dry run)"
    assert kubectl.run("get", "deploy", "trial", check=False).returncode == 1
    assert kubectl.run("delete", "deploy", "web").stdout.strip() == 'deployment.apps "web" deleted'
    gone = kubectl.run("get", "deploy", "web", check=False)
    assert gone.returncode == 1 and 'deployments.apps "web" not found' in gone.stderr


def test_pods_configmaps_and_namespaces(kubectl):
    kubectl.apply_file("create", NAMESPACE)
    kubectl.apply_file("create", POD, "-n", "team")
    kubectl.apply_file("create", CONFIGMAP, "-n", "team")
    kubectl.run("wait", "--for=condition=Ready", "pod/box", "-n", "team", "--timeout=20s")  # the simulated nodes run it
    pod = kubectl.json("get", "pod", "box", "-n", "team")
    assert pod["status"]["phase"] == "Running" and pod["spec"]["containers"][0]["command"] == ["sleep", "3600"]
    assert kubectl.run("get", "cm", "settings", "-n", "team", "-o", "jsonpath={.data.color}").stdout == "blue"
    running = kubectl.run("get", "pods", "-A", "--field-selector=status.phase=Running,spec.nodeName!=", "-o", "name").stdout.split()
    assert running == ["pod/box"]
    assert kubectl.run("get", "pods", "-A", "--field-selector=status.phase=Pending", "-o", "name").stdout.strip() == ""
    kubectl.run("delete", "pod", "box", "-n", "team")
    kubectl.run("delete", "configmap", "settings", "-n", "team")
    assert kubectl.run("get", "all", "-n", "team", "-o", "name").stdout.strip() == ""
    refused = kubectl.run("create", "-f", "-", "-n", "nowhere", "--validate=false", stdin=CONFIGMAP, check=False)
    assert refused.returncode == 1 and 'namespaces "nowhere" not found' in refused.stderr
    kubectl.apply_file("create", CONFIGMAP, "-n", "team")
    assert kubectl.run("delete", "namespace", "team", timeout=60).stdout.strip() == 'namespace "team" deleted'
    assert kubectl.run("get", "namespace", "team", check=False).returncode == 1
    assert kubectl.run("get", "configmaps", "-A", "-o", "name").stdout.strip() == ""


def test_errors_come_back_as_kubectl_prints_them(kubectl):
    bad = DEPLOYMENT.replace("replicas: 2", "replicas: -1").replace("name: web", "name: broken", 1)
    result = kubectl.run("create", "-f", "-", "--validate=false", stdin=bad, check=False)
    assert result.returncode == 1
    assert 'The Deployment "broken" is invalid: spec.replicas: Invalid value: -1: must be greater than or equal to 0' in result.stderr


def test_get_watch_streams_changes(kubectl):
    kubectl.apply_file("create", CONFIGMAP)
    watcher = subprocess.Popen(["kubectl", "get", "configmap", "settings", "-w", "-o", "name"], env=kubectl.env,
                               stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        assert watcher.stdout is not None
        first = watcher.stdout.readline().strip()
        kubectl.run("patch", "configmap", "settings", "--type=merge", "-p", '{"data":{"color":"red"}}')
        second = watcher.stdout.readline().strip()
        kubectl.run("delete", "configmap", "settings")
        third = watcher.stdout.readline().strip()
    finally:
        watcher.terminate()
        watcher.wait(timeout=10)
    assert first == second == third == "configmap/settings"


def test_get_prints_server_side_tables(kubectl):
    kubectl.apply_file("create", DEPLOYMENT.replace("name: web", "name: tabled", 1).replace("app: web", "app: tabled"))
    lines = kubectl.run("get", "deploy", "tabled").stdout.splitlines()
    assert lines[0].split() == ["NAME", "READY", "UP-TO-DATE", "AVAILABLE", "AGE"]
    name, ready, up_to_date, available = lines[1].split()[:4]
    assert name == "tabled" and ready.endswith("/2") and up_to_date.isdigit() and available.isdigit()
    wide = kubectl.run("get", "deploy", "tabled", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"]
    assert wide[1].split()[-3:] == ["nginx", "nginx:1.25", "app=tabled"]
    kubectl.apply_file("create", DEPLOYMENT.replace("name: web", "name: small", 1).replace("replicas: 2", "replicas: 1"))
    ordered = kubectl.run("get", "deploy", "--sort-by=.spec.replicas", "-o", "name").stdout.split()
    assert ordered == ["deployment.apps/small", "deployment.apps/tabled"]
    labelled = kubectl.run("get", "deploy", "-A", "--show-labels").stdout.splitlines()
    assert labelled[0].split()[0] == "NAMESPACE" and labelled[0].split()[-1] == "LABELS"
    kubectl.run("delete", "deploy", "tabled", "small")


def test_scale(kubectl):
    kubectl.apply_file("create", DEPLOYMENT.replace("name: web", "name: scaled", 1).replace("app: web", "app: scaled"))
    assert kubectl.run("scale", "deploy", "scaled", "--replicas=5").stdout.strip() == "deployment.apps/scaled scaled"
    kubectl.run("scale", "deploy", "scaled", "--current-replicas=5", "--replicas=3")
    refused = kubectl.run("scale", "deploy", "scaled", "--current-replicas=9", "--replicas=1", check=False)
    assert refused.returncode == 1 and "Expected replicas to be 9, was 3" in refused.stderr
    assert kubectl.json("get", "deploy", "scaled")["spec"]["replicas"] == 3
    kubectl.run("delete", "deploy", "scaled")
