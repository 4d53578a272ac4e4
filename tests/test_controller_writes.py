"""What the workload controllers write per transition, counted through a real ``kplane serve``
(its controllers and simulated nodes): the writes kube's controllers make, in as many requests."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

import aiohttp
import pytest

from tests.servers import Served, serving
from tests.waiting import eventually

pytestmark = pytest.mark.controllers

DEPLOYMENTS = "/apis/apps/v1/namespaces/default/deployments"
RSS = "/apis/apps/v1/namespaces/default/replicasets"
REVISION = "deployment.kubernetes.io/revision"


@pytest.fixture(scope="module")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    with serving(tmp_path_factory.mktemp("writes") / "data") as server:
        yield server


def template(app: str) -> dict[str, Any]:
    return {"metadata": {"labels": {"app": app}}, "spec": {"containers": [{"name": "main", "image": "nginx:1.25"}]}}


async def writes(session: aiohttp.ClientSession, verb: str, resource: str, code: str) -> int:
    """``apiserver_request_total`` of one verb, resource (``replicasets/status``) and code."""
    text = await (await session.get("/metrics")).text()
    total = 0
    for labels, value in re.findall(r'^apiserver_request_total\{(.*)\} (\S+)$', text, re.M):
        label = dict(re.findall(r'(\w+)="([^"]*)"', labels))
        if (label["verb"], label["resource"] + (f"/{label['subresource']}" if label["subresource"] else ""), label["code"]) == (verb, resource, code):
            total += int(float(value))
    return total


async def test_a_new_deployments_revision_and_condition_are_one_status_write(served: Served) -> None:
    """As kube's getNewReplicaSet: the new ReplicaSet's revision and the NewReplicaSetCreated
    condition reach the Deployment together, so no version of it has one without the other."""
    body = {"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": "one-write"},
            "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "one-write"}}, "template": template("one-write")}}
    async with aiohttp.ClientSession(base_url=served.url, timeout=aiohttp.ClientTimeout(total=60)) as session:
        async with session.post(DEPLOYMENTS, json=body) as reply:
            assert reply.status == 201, await reply.text()
            version = (await reply.json())["metadata"]["resourceVersion"]
        params = {"watch": "1", "resourceVersion": version, "fieldSelector": "metadata.name=one-write"}
        async with session.get(DEPLOYMENTS, params=params) as watch:
            async for line in watch.content:
                d = json.loads(line)["object"]
                if REVISION in (d["metadata"].get("annotations") or {}):
                    break
    progressing = next(c for c in d["status"]["conditions"] if c["type"] == "Progressing")
    assert (d["metadata"]["annotations"][REVISION], progressing["reason"]) == ("1", "NewReplicaSetCreated")


async def test_a_replica_sets_status_writes_start_from_its_own_last_write(served: Served) -> None:
    """A sync that runs before the informer shows the ReplicaSet's last status write starts from
    the server's reply to it, so no status write of a ReplicaSet nobody else writes is refused
    as stale (a 409, then a GET and a second PUT)."""
    body = {"apiVersion": "apps/v1", "kind": "ReplicaSet", "metadata": {"name": "own-writes"},
            "spec": {"replicas": 6, "selector": {"matchLabels": {"app": "own-writes"}}, "template": template("own-writes")}}
    async with aiohttp.ClientSession(base_url=served.url, timeout=aiohttp.ClientTimeout(total=60)) as session:
        conflicts = await writes(session, "PUT", "replicasets/status", "409")
        async with session.post(RSS, json=body) as reply:
            assert reply.status == 201, await reply.text()

        async def available() -> bool:
            status = (await (await session.get(f"{RSS}/own-writes")).json()).get("status") or {}
            return status.get("availableReplicas") == 6 and status.get("readyReplicas") == 6

        await eventually(available, timeout=60)
        assert await writes(session, "PUT", "replicasets/status", "409") == conflicts
        assert await writes(session, "PUT", "replicasets/status", "200") >= 1
        managers = {(m["manager"], m.get("subresource", "")) for m in
                    (await (await session.get(f"{RSS}/own-writes")).json())["metadata"]["managedFields"]}
    # The controller-manager's caches hold no managedFields (as kube's), so neither do its
    # writes: the server keeps the stored entries and records the controller's own beside them.
    assert {subresource for _, subresource in managers} == {"", "status"}, managers
