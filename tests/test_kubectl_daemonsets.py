"""kubectl's DaemonSet workflows and the official client's typed API, end to end against
`kplane serve` with its controllers and simulated nodes: apply, get columns, rollout
status/history/undo, describe, delete cascading to the pods."""

from __future__ import annotations

import pytest
import yaml

from tests.kubectl_cli import Kubectl
from tests.waiting import wait_until

MANIFEST = """
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, labels: {app: agent}}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "fluentd:v1"}]
"""


def status(kubectl: Kubectl, name: str) -> str:
    return kubectl.run("rollout", "status", f"ds/{name}", "--timeout=60s", timeout=90).stdout


def test_rollout_history_and_undo(kubectl: Kubectl) -> None:
    kubectl.apply_file("apply", MANIFEST)
    assert 'daemon set "agent" successfully rolled out' in status(kubectl, "agent")
    row = kubectl.run("get", "ds", "agent", "-o", "wide").stdout.splitlines()
    assert row[0].split() == ["NAME", "DESIRED", "CURRENT", "READY", "UP-TO-DATE", "AVAILABLE", "NODE", "SELECTOR", "AGE",
                              "CONTAINERS", "IMAGES", "SELECTOR"]
    cells = row[1].split()
    assert cells[:7] == ["agent", "3", "3", "3", "3", "3", "<none>"] and cells[-3:] == ["agent", "fluentd:v1", "app=agent"]
    kubectl.run("set", "image", "ds/agent", "agent=fluentd:v2")
    out = status(kubectl, "agent")
    assert "new pods have been updated" in out and 'daemon set "agent" successfully rolled out' in out
    history = kubectl.run("rollout", "history", "ds/agent").stdout.split()
    assert history[history.index("CHANGE-CAUSE") + 1:] == ["1", "<none>", "2", "<none>"]
    assert "fluentd:v1" in kubectl.run("rollout", "history", "ds/agent", "--revision=1").stdout
    assert "rolled back" in kubectl.run("rollout", "undo", "ds/agent").stdout
    status(kubectl, "agent")
    history = kubectl.run("rollout", "history", "ds/agent").stdout.split()
    assert history[history.index("CHANGE-CAUSE") + 1:] == ["2", "<none>", "3", "<none>"]  # revision 1 is 3 now
    pods = kubectl.json("get", "pods", "-l", "app=agent")["items"]
    assert sorted(p["spec"]["nodeName"] for p in pods) == ["kplane-node-1", "kplane-node-2", "kplane-node-3"]
    assert {p["spec"]["containers"][0]["image"] for p in pods} == {"fluentd:v1"}
    described = kubectl.run("describe", "ds", "agent").stdout
    for line in ("Desired Number of Nodes Scheduled: 3", "Number of Nodes Scheduled with Up-to-date Pods: 3",
                 "Pods Status:  3 Running / 0 Waiting / 0 Succeeded / 0 Failed", "SuccessfulCreate"):
        assert line in described
    kubectl.run("delete", "ds", "agent", "--cascade=foreground", "--timeout=60s", timeout=90)
    wait_until(lambda: not kubectl.json("get", "pods", "-l", "app=agent")["items"], what="the agent's pods deleted")
    assert not kubectl.json("get", "controllerrevisions", "-l", "app=agent")["items"]


def test_the_python_clients_typed_api(kubectl: Kubectl) -> None:
    kubernetes = pytest.importorskip("kubernetes")
    api = kubernetes.client.AppsV1Api(kubernetes.config.new_client_from_config(config_file=kubectl.env["KUBECONFIG"]))
    body = yaml.safe_load(MANIFEST.replace("agent", "typed"))
    body["spec"]["updateStrategy"] = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "50%", "maxUnavailable": 0}}
    made = api.create_namespaced_daemon_set("default", body)
    assert made.spec.update_strategy.rolling_update.max_surge == "50%" and made.spec.revision_history_limit == 10

    def available() -> bool:
        ds = api.read_namespaced_daemon_set_status("typed", "default")
        return ds.status.number_available == 3 and ds.status.desired_number_scheduled == 3

    wait_until(available, what="the typed DaemonSet available")
    assert [d.metadata.name for d in api.list_namespaced_daemon_set("default").items] == ["typed"]
    api.delete_namespaced_daemon_set("typed", "default")
