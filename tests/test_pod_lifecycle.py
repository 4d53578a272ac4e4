"""The simulated kubelets' pod lifecycle against a real server: containers exit after their run
time, pods of restartPolicy Never end Succeeded or Failed, others restart with the crash-loop
back-off, and the pure parts (phase, back-off, Go durations)."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio

from kplane.core.serving.apiserver import APIServer
from kplane.plugins.core.controllers.nodes.container_state import backoff_delay, go_duration
from kplane.plugins.core.controllers.nodes.pod_status import _phase
from tests.conftest import Client
from tests.servers import server_config
from tests.waiting import eventually

PODS = "/api/v1/namespaces/default/pods"
SHARED = pytest.mark.asyncio(loop_scope="module")  # the module's server runs on the module's loop


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """One server for the module, its kubelets with a short default run time and back-off."""
    srv = APIServer(server_config(data_dir=tmp_path_factory.mktemp("lifecycle") / "state", port=0, run_controllers=True,
                                  plugin_settings={"core": {"simulated_run_seconds": 0.3, "simulated_restart_backoff": 0.3}}))
    await srv.start()
    try:
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            yield Client(session)
    finally:
        await srv.stop()


def pod(name: str, image: str, policy: str, **annotations: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "annotations": annotations},
            "spec": {"restartPolicy": policy, "containers": [{"name": "main", "image": image}]}}


async def phase_of(api: Client, name: str, *phases: str) -> dict[str, Any] | None:
    body = (await api.get(f"{PODS}/{name}")).body
    return body if (body.get("status") or {}).get("phase") in phases else None


@SHARED
async def test_never_pod_succeeds_after_its_run_time(api: Client) -> None:
    assert (await api.post(PODS, pod("ok", "busybox", "Never"))).status == 201
    done = await eventually(lambda: phase_of(api, "ok", "Succeeded", "Failed"), what="the pod to finish")
    assert done["status"]["phase"] == "Succeeded"
    state = done["status"]["containerStatuses"][0]
    terminated = state["state"]["terminated"]
    assert terminated["exitCode"] == 0 and terminated["reason"] == "Completed"
    assert terminated["startedAt"] <= terminated["finishedAt"] and terminated["containerID"].startswith("containerd://")
    assert state["ready"] is False and state["restartCount"] == 0
    ready = next(c for c in done["status"]["conditions"] if c["type"] == "Ready")
    assert ready["status"] == "False" and ready["reason"] == "PodCompleted"


@SHARED
async def test_exit_code_in_the_image_tag_fails_a_never_pod(api: Client) -> None:
    assert (await api.post(PODS, pod("bad", "busybox:exit-3", "Never", **{"kplane.io/run-seconds": "0"}))).status == 201
    done = await eventually(lambda: phase_of(api, "bad", "Succeeded", "Failed"), what="the pod to fail")
    assert done["status"]["phase"] == "Failed"
    terminated = done["status"]["containerStatuses"][0]["state"]["terminated"]
    assert terminated["exitCode"] == 3 and terminated["reason"] == "Error"


@SHARED
async def test_always_pod_restarts_with_back_off(api: Client) -> None:
    assert (await api.post(PODS, pod("crash", "busybox:exit-1", "Always", **{"kplane.io/run-seconds": "0.1"}))).status == 201

    async def looping() -> dict[str, Any] | None:
        body = (await api.get(f"{PODS}/crash")).body
        statuses = (body.get("status") or {}).get("containerStatuses") or []
        waiting = statuses[0]["state"].get("waiting", {}) if statuses else {}
        return body if statuses and statuses[0]["restartCount"] >= 2 and waiting.get("reason") == "CrashLoopBackOff" else None

    body = await eventually(looping, what="a crash loop")
    state = body["status"]["containerStatuses"][0]
    assert body["status"]["phase"] == "Running"
    assert state["lastState"]["terminated"]["exitCode"] == 1 and state["lastState"]["terminated"]["reason"] == "Error"
    assert state["state"]["waiting"]["message"].startswith("back-off ") and "restarting failed container=main pod=crash_default(" in state["state"]["waiting"]["message"]


@SHARED
async def test_on_failure_pod_restarts_in_place_and_never_finishes(api: Client) -> None:
    assert (await api.post(PODS, pod("retry", "busybox:exit-2", "OnFailure", **{"kplane.io/run-seconds": "0"}))).status == 201

    async def restarted() -> dict[str, Any] | None:
        body = (await api.get(f"{PODS}/retry")).body
        statuses = (body.get("status") or {}).get("containerStatuses") or []
        return body if statuses and statuses[0]["restartCount"] >= 1 else None

    body = await eventually(restarted, what="a restart")
    assert body["status"]["phase"] == "Running"


@SHARED
async def test_deleting_a_running_job_like_pod_kills_it(api: Client) -> None:
    assert (await api.post(PODS, pod("long", "busybox", "Never", **{"kplane.io/run-seconds": "600"}))).status == 201

    async def running() -> bool:
        body = (await api.get(f"{PODS}/long")).body
        return "running" in (((body.get("status") or {}).get("containerStatuses") or [{}])[0].get("state") or {})

    await eventually(running, what="the container to run")
    assert (await api.delete(f"{PODS}/long")).status == 200
    await eventually(lambda: _gone(api, "long"), what="the pod to go")


async def _gone(api: Client, name: str) -> bool:
    return (await api.get(f"{PODS}/{name}")).status == 404


def test_phase_follows_the_kubelets_get_phase() -> None:
    ran = {"lastState": {"terminated": {"exitCode": 1}}}
    assert _phase("Never", [{"state": {"terminated": {"exitCode": 0}}}], False) == "Succeeded"
    assert _phase("Never", [{"state": {"terminated": {"exitCode": 0}}}, {"state": {"terminated": {"exitCode": 1}}}], False) == "Failed"
    assert _phase("Never", [{"state": {"terminated": {"exitCode": 1}}}, {"state": {"running": {}}}], False) == "Running"
    assert _phase("OnFailure", [{"state": {"waiting": {"reason": "CrashLoopBackOff"}}, **ran}], False) == "Running"
    assert _phase("Always", [{"state": {"waiting": {"reason": "ImagePullBackOff"}}}], False) == "Pending"


def test_back_off_doubles_to_five_minutes() -> None:
    assert [backoff_delay(n, 10) for n in range(7)] == [0, 10, 20, 40, 80, 160, 300]
    assert [go_duration(s) for s in (10, 80, 300, 0.2, 3725)] == ["10s", "1m20s", "5m0s", "200ms", "1h2m5s"]
