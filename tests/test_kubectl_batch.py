"""kubectl's Job and CronJob workflows end to end against `kplane serve` with its controllers and
simulated nodes (generators sending protobuf, wait, get columns, describe, create job --from,
delete cascades), and the official Python client's typed BatchV1Api on the same server."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest
import yaml

from tests.kubectl_cli import Kubectl
from tests.servers import serving
from tests.waiting import wait_until

kubernetes = pytest.importorskip("kubernetes")
from kubernetes import client, config  # noqa: E402


@pytest.fixture(scope="module")
def kubectl(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Kubectl]:
    """kubectl for a `kplane serve` whose containers run half a second unless told otherwise."""
    workdir = tmp_path_factory.mktemp("kubectl-batch")
    with serving(workdir / "data", "--simulated-run-seconds", "0.5", "--job-pod-failure-backoff", "200ms") as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(workdir / "cache"), "HOME": str(workdir)}
        yield Kubectl(env, workdir)


def test_create_job_wait_get_and_describe(kubectl: Kubectl) -> None:
    assert kubectl.run("create", "job", "pi", "--image=busybox", "--", "echo", "hi").stdout.strip() == "job.batch/pi created"
    assert "job.batch/pi condition met" in kubectl.run("wait", "--for=condition=complete", "job/pi", "--timeout=30s", timeout=40).stdout
    header, row = kubectl.run("get", "job", "pi").stdout.splitlines()
    assert header.split() == ["NAME", "STATUS", "COMPLETIONS", "DURATION", "AGE"]
    assert row.split()[:3] == ["pi", "Complete", "1/1"]
    wide = kubectl.run("get", "job", "pi", "-o", "wide").stdout.splitlines()
    assert wide[0].split()[-3:] == ["CONTAINERS", "IMAGES", "SELECTOR"] and "batch.kubernetes.io/controller-uid=" in wide[1]
    described = kubectl.run("describe", "job", "pi").stdout
    assert "Pods Statuses:    0 Active (0 Ready) / 1 Succeeded / 0 Failed" in described
    assert "Created pod: pi-" in described and "Job completed" in described
    pods = kubectl.json("get", "pods", "-l", "job-name=pi")["items"]
    assert [p["status"]["phase"] for p in pods] == ["Succeeded"] and not pods[0]["metadata"].get("finalizers")
    assert "Completed" in kubectl.run("get", "pods", "-l", "job-name=pi").stdout


def test_failing_job_and_wait_for_failed(kubectl: Kubectl) -> None:
    manifest = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "broken"},
                "spec": {"backoffLimit": 1, "template": {"spec": {"restartPolicy": "Never",
                                                                  "containers": [{"name": "main", "image": "busybox:exit-2"}]}}}}
    kubectl.apply_file("create", yaml.safe_dump(manifest))
    assert "condition met" in kubectl.run("wait", "--for=condition=failed", "job/broken", "--timeout=30s", timeout=40).stdout
    row = kubectl.run("get", "job", "broken", "--no-headers").stdout.split()
    assert row[:3] == ["broken", "Failed", "0/1"]
    assert "BackoffLimitExceeded" in kubectl.run("describe", "job", "broken").stdout
    assert "Error" in kubectl.run("get", "pods", "-l", "job-name=broken").stdout


def test_cronjob_generator_columns_and_job_from_cronjob(kubectl: Kubectl) -> None:
    out = kubectl.run("create", "cronjob", "tick", "--image=busybox", "--schedule=0 3 * * *", "--", "date").stdout
    assert out.strip() == "cronjob.batch/tick created"
    header, row = kubectl.run("get", "cronjob", "tick").stdout.splitlines()
    assert header.split() == ["NAME", "SCHEDULE", "TIMEZONE", "SUSPEND", "ACTIVE", "LAST", "SCHEDULE", "AGE"]
    assert row.split()[:7] == ["tick", "0", "3", "*", "*", "*", "<none>"]
    kubectl.run("patch", "cronjob", "tick", "-p", '{"spec":{"timeZone":"Europe/Paris"}}')
    assert kubectl.json("get", "cj", "tick")["spec"]["timeZone"] == "Europe/Paris"
    assert kubectl.run("create", "job", "now", "--from=cronjob/tick").stdout.strip() == "job.batch/now created"
    made = kubectl.json("get", "job", "now")
    assert made["metadata"]["annotations"]["cronjob.kubernetes.io/instantiate"] == "manual"
    assert made["metadata"]["ownerReferences"][0]["kind"] == "CronJob"
    kubectl.run("wait", "--for=condition=complete", "job/now", "--timeout=30s", timeout=40)
    bad = kubectl.run("create", "cronjob", "bad", "--image=busybox", "--schedule=99 * * * *", check=False)
    assert bad.returncode != 0 and "end of range (99) above maximum (59): 99" in bad.stderr


def test_deleting_a_job_deletes_its_pods(kubectl: Kubectl) -> None:
    manifest = {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "long"},
                "spec": {"parallelism": 2, "completions": 2, "template": {
                    "metadata": {"annotations": {"kplane.io/run-seconds": "600"}},
                    "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}
    kubectl.apply_file("create", yaml.safe_dump(manifest))
    wait_until(lambda: len(kubectl.json("get", "pods", "-l", "job-name=long")["items"]) == 2, what="two pods")
    kubectl.run("delete", "job", "long", "--wait=true", timeout=40)
    wait_until(lambda: not kubectl.json("get", "pods", "-l", "job-name=long")["items"], what="the pods to go")


def test_python_client_typed_batch_api(kubectl: Kubectl) -> None:
    api = client.BatchV1Api(config.new_client_from_config(config_file=str(kubectl.workdir / "data" / "kubeconfig")))
    body = client.V1Job(metadata=client.V1ObjectMeta(name="typed"), spec=client.V1JobSpec(
        completions=2, parallelism=2, completion_mode="Indexed",
        template=client.V1PodTemplateSpec(spec=client.V1PodSpec(restart_policy="Never", containers=[
            client.V1Container(name="main", image="busybox")]))))
    created = api.create_namespaced_job("default", body)
    assert isinstance(created, client.V1Job) and created.spec.backoff_limit == 6
    done = wait_until(lambda: (j := api.read_namespaced_job_status("typed", "default")).status.succeeded == 2 and j, timeout=30)
    assert done.status.completed_indexes == "0-1" and any(c.type == "Complete" for c in done.status.conditions)
    cron = client.V1CronJob(metadata=client.V1ObjectMeta(name="typed-cron"), spec=client.V1CronJobSpec(
        schedule="@hourly", job_template=client.V1JobTemplateSpec(spec=body.spec)))
    assert api.create_namespaced_cron_job("default", cron).spec.concurrency_policy == "Allow"
    assert [c.metadata.name for c in api.list_namespaced_cron_job("default").items] == ["tick", "typed-cron"]
