"""`kplane controller-manager` as its own process next to `kplane serve --no-controllers`: it runs
the controllers, one leader at a time, survives a kill -9 mid-rollout, and honours --controllers."""

from __future__ import annotations

import asyncio
import base64
import datetime
import signal
import subprocess
import sys
from collections.abc import AsyncIterator, Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509

from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.controllers.manager import ControllerSelection
from kplane.core.controllers.standard import build_controller_manager
from kplane.core.plugins import PluginManager
from kplane.core.config import ServerConfig
from kplane.core.serving.datadir import write_kubeconfig
from tests.builders import deployment
from tests.certs import new_ca
from tests.servers import Served, serving
from tests.test_certificates import csr_body, new_request
from tests.test_deployment_controller import complete, deployments, is_ready, owned, pods, set_image
from tests.waiting import eventually

FAST = ("--leader-elect-lease-duration", "2", "--leader-elect-renew-deadline", "1.5", "--leader-elect-retry-period", "0.3")
ACQUIRED = "acquired lease"
Obj = dict[str, Any]
Start = Callable[..., subprocess.Popen[str]]


@pytest.fixture
def served(tmp_path: Path) -> Iterator[Served]:
    with serving(tmp_path / "state", "--no-controllers") as srv:
        yield srv


@pytest.fixture
async def client(served: Served) -> AsyncIterator[RESTClient]:
    rest = RESTClient(served.url)
    try:
        yield rest
    finally:
        await rest.close()


@pytest.fixture
def start_cm(tmp_path: Path, served: Served) -> Iterator[Start]:
    """Starts `kplane controller-manager` processes (logging to files: pipes could fill up), all ended afterwards."""
    started: list[subprocess.Popen[str]] = []

    def start(identity: str, *args: str) -> subprocess.Popen[str]:
        log = (tmp_path / f"{identity}.log").open("w")
        process = subprocess.Popen([sys.executable, "-m", "kplane.core.cli", "controller-manager", "--kubeconfig", str(served.kubeconfig),
                                    "--identity", identity, *args], stdout=log, stderr=subprocess.STDOUT, text=True)
        log.close()
        started.append(process)
        return process

    yield start
    for process in started:
        if process.poll() is None:
            process.terminate()
    for process in started:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def log_of(tmp_path: Path, identity: str) -> str:
    return (tmp_path / f"{identity}.log").read_text()


async def holder(client: RESTClient) -> str:
    """The Lease's holder identity; empty if there is no Lease yet or nobody holds it."""
    try:
        lease = await client.resource("coordination.k8s.io", "v1", "leases", "kube-system").get("kplane-controller-manager")
    except ApiError as err:
        if err.code == 404:
            return ""
        raise
    return str((lease.get("spec") or {}).get("holderIdentity") or "")


async def exited(process: subprocess.Popen[str], timeout: float = 10.0) -> int:
    return await asyncio.to_thread(process.wait, timeout)


async def test_a_separate_controller_manager_rolls_a_deployment_out(client: RESTClient, start_cm: Start) -> None:
    start_cm("solo")
    await deployments(client).create(deployment("web", replicas=3))
    d = await complete(client, "web", timeout=20)
    assert d["status"]["availableReplicas"] == 3
    listed = (await pods(client).list(labelSelector="app=web"))["items"]
    assert len(listed) == 3 and all(is_ready(p) for p in listed)
    assert await holder(client) == "solo"


async def test_one_leader_at_a_time_and_the_other_takes_over_on_sigterm(client: RESTClient, start_cm: Start, tmp_path: Path) -> None:
    processes = {name: start_cm(name, *FAST) for name in ("a", "b")}
    leader = await eventually(lambda: holder(client))
    follower = "b" if leader == "a" else "a"
    await deployments(client).create(deployment("before", replicas=2))
    await complete(client, "before", timeout=20)
    await asyncio.sleep(1.0)  # several retry periods: the follower keeps trying, and must keep failing
    assert await holder(client) == leader
    assert ACQUIRED in log_of(tmp_path, leader) and ACQUIRED not in log_of(tmp_path, follower)

    processes[leader].send_signal(signal.SIGTERM)
    assert await exited(processes[leader]) == 0
    assert await holder(client) in ("", follower)  # handed back on the way out, not left to expire

    async def taken_over() -> bool:
        return await holder(client) == follower
    await eventually(taken_over, timeout=10)
    await deployments(client).create(deployment("after", replicas=2))
    await complete(client, "after", timeout=20)
    assert ACQUIRED in log_of(tmp_path, follower)
    assert processes[follower].poll() is None


async def test_a_rollout_killed_midway_finishes_under_a_new_leader_without_duplicates(client: RESTClient, start_cm: Start) -> None:
    first = start_cm("first", *FAST)
    slow = {"type": "RollingUpdate", "rollingUpdate": {"maxSurge": 1, "maxUnavailable": 0}}  # six steps, one pod at a time
    await deployments(client).create(deployment("web", replicas=6, strategy=slow))
    await complete(client, "web", timeout=20)
    await set_image(client, "web", "nginx:1.26")

    async def midway() -> bool:
        replica_sets = await owned(client, await deployments(client).get("web"))
        return len(replica_sets) == 2 and (replica_sets[1].get("status") or {}).get("replicas", 0) >= 1
    await eventually(midway, timeout=10)
    first.kill()
    assert await exited(first) == -signal.SIGKILL
    d = await deployments(client).get("web")
    assert d["status"].get("updatedReplicas", 0) < 6, "the rollout finished before the kill; the test proves nothing"

    start_cm("second", *FAST)
    d = await complete(client, "web", timeout=30)
    old, new = await owned(client, d)
    new_hash = new["metadata"]["labels"]["pod-template-hash"]

    async def settled() -> list[Obj] | None:
        rs_uids = {old["metadata"]["uid"], new["metadata"]["uid"]}
        mine = [p for p in (await pods(client).list())["items"]
                if any(r["uid"] in rs_uids for r in p["metadata"].get("ownerReferences") or [])]
        return mine if len(mine) == 6 and all(is_ready(p) for p in mine) else None
    mine = await eventually(settled, timeout=15)
    assert {p["metadata"]["labels"]["pod-template-hash"] for p in mine} == {new_hash}
    assert {c["image"] for p in mine for c in p["spec"]["containers"]} == {"nginx:1.26"}
    assert new["spec"]["replicas"] == 6 and old["spec"]["replicas"] == 0


async def test_disabling_the_garbage_collector_leaves_dependents(client: RESTClient, start_cm: Start) -> None:
    start_cm("no-gc", "--controllers", "*,-garbagecollector")
    await deployments(client).create(deployment("web", replicas=2))
    d = await complete(client, "web", timeout=20)  # the other controllers do run
    (rs,) = await owned(client, d)
    await deployments(client).delete("web", propagation_policy="Background")
    await asyncio.sleep(2.0)  # the collector, if running, deletes a dangling dependent within a moment
    replica_sets = client.resource("apps", "v1", "replicasets", "default")
    assert (await replica_sets.get(rs["metadata"]["name"]))["metadata"]["uid"] == rs["metadata"]["uid"]
    assert len((await pods(client).list(labelSelector="app=web"))["items"]) == 2


async def test_selection_picks_controllers_like_kube_controller_manager() -> None:
    plugins = PluginManager(config=ServerConfig(simulated_nodes=1))
    plugins.load_entry_points()
    client = RESTClient("http://127.0.0.1:1")  # never contacted: nothing is started
    try:
        chosen: dict[str, set[str]] = {}
        for text in ("*", "*,-deployment,-simulated-nodes", "replicaset,namespace", "-replicaset,replicaset,*"):
            manager = await build_controller_manager(client, plugins, controllers=ControllerSelection.parse(text))
            chosen[text] = set(manager.controllers)
        with pytest.raises(ValueError, match="unknown controller.*garbage-collector"):
            await build_controller_manager(client, plugins, controllers=ControllerSelection.parse("*,-garbage-collector"))
    finally:
        await client.close()
    everything = chosen["*"]
    assert {"namespace", "garbagecollector", "simulated-nodes", "serviceaccount", "replicaset", "deployment", "endpoint",
            "endpointslice", "clusterrole-aggregation", "root-ca-cert-publisher", "serviceaccount-token", "replicationcontroller",
            "resourcequota", "daemonset", "disruption", "node-lifecycle-controller", "taint-eviction-controller", "statefulset", "job", "cronjob", "ttl-after-finished", "horizontalpodautoscaling"} <= everything
    assert chosen["*,-deployment,-simulated-nodes"] == everything - {"deployment", "simulated-nodes"}
    assert chosen["replicaset,namespace"] == {"replicaset", "namespace"}
    assert chosen["-replicaset,replicaset,*"] == everything - {"replicaset"}  # the first mention decides


def test_an_unknown_controller_name_is_refused_with_the_known_ones(tmp_path: Path) -> None:
    kubeconfig = tmp_path / "kubeconfig"
    write_kubeconfig(kubeconfig, "http://127.0.0.1:1")
    run = subprocess.run([sys.executable, "-m", "kplane.core.cli", "controller-manager", "--kubeconfig", str(kubeconfig),
                          "--controllers", "*,-garbagecolector"], capture_output=True, text=True, timeout=30)
    assert run.returncode == 2
    assert "unknown controller(s) -garbagecolector;" in run.stderr
    known = run.stderr.partition("known: ")[2].strip().split(", ")
    assert known == sorted(known) and {"clusterrole-aggregation", "deployment", "garbagecollector"} <= set(known)
    serve = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--port", "0", "--data-dir", str(tmp_path / "state"),
                            "--controllers", "bogus"], capture_output=True, text=True, timeout=30)
    assert serve.returncode == 1 and "unknown controller(s) bogus" in serve.stderr


async def test_the_signers_sign_with_the_ca_of_the_flags(client: RESTClient, start_cm: Start, tmp_path: Path) -> None:
    """--cluster-signing-cert-file/--cluster-signing-key-file name the CA, --cluster-signing-duration
    bounds the validity (an hour, asked for none: not backdated, as short certificates are not)."""
    ca = new_ca("signing-ca")
    cert_file, key_file = ca.write(tmp_path, "signing-ca")
    start_cm("signer", "--controllers=csrsigning", "--cluster-signing-cert-file", str(cert_file),
             "--cluster-signing-key-file", str(key_file), "--cluster-signing-duration", "1h")
    csrs = client.resource("certificates.k8s.io", "v1", "certificatesigningrequests")
    _, request = new_request("sam")
    csr = await csrs.create(csr_body("sam", request))
    csr["status"] = {"conditions": [{"type": "Approved", "status": "True", "reason": "Test"}]}
    await csrs.update(csr, subresource="approval")

    async def certificate() -> bytes | None:
        found = (await csrs.get("sam")).get("status", {}).get("certificate")
        return base64.b64decode(found) if found else None
    cert = x509.load_pem_x509_certificate(await eventually(certificate))
    cert.verify_directly_issued_by(ca.certificate)
    assert cert.not_valid_after_utc - cert.not_valid_before_utc == datetime.timedelta(hours=1)
