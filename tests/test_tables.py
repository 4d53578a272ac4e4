"""Server-side printing: Tables as kubectl asks for them."""

from __future__ import annotations

import asyncio
import json

import pytest

from kplane.core.registry.printing import human_duration
from tests.builders import DEPLOYMENTS, UNSCHEDULED, configmap, deployment

TABLE_ACCEPT = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json"


@pytest.mark.parametrize(("seconds", "text"), [
    (-5, "<invalid>"), (0, "0s"), (59, "59s"), (119, "119s"), (120, "2m"), (150, "2m30s"), (600, "10m"),
    (3 * 3600 - 1, "179m"), (3 * 3600, "3h"), (3 * 3600 + 60, "3h1m"), (47 * 3600, "47h"), (50 * 3600, "2d2h"),
    (8 * 86400, "8d"), (800 * 86400, "2y70d"), (3000 * 86400, "8y"),
])
def test_human_duration(seconds: int, text: str) -> None:
    assert human_duration(seconds) == text


async def test_deployment_table_columns_and_rows(api):
    await api.post(DEPLOYMENTS, deployment())
    reply = await api.get(DEPLOYMENTS, headers={"Accept": TABLE_ACCEPT})
    assert reply.status == 200 and reply.headers["Content-Type"] == "application/json;as=Table;v=v1;g=meta.k8s.io"
    table = reply.body
    assert table["kind"] == "Table" and table["apiVersion"] == "meta.k8s.io/v1"
    assert table["metadata"]["resourceVersion"]
    columns = [(c["name"], c["priority"]) for c in table["columnDefinitions"]]
    assert columns == [("Name", 0), ("Ready", 0), ("Up-to-date", 0), ("Available", 0), ("Age", 0),
                       ("Containers", 1), ("Images", 1), ("Selector", 1)]
    (row,) = table["rows"]
    assert row["cells"][:4] == ["web", "0/2", 0, 0] and row["cells"][5:] == ["nginx", "nginx:1.25", "app=web"]
    assert row["cells"][4].endswith("s")
    assert row["object"]["kind"] == "PartialObjectMetadata" and row["object"]["apiVersion"] == "meta.k8s.io/v1"
    assert row["object"]["metadata"]["name"] == "web"


@pytest.mark.runtime_config("apps/v1beta2=true")
async def test_include_object(api):
    await api.post(DEPLOYMENTS, deployment())
    full = await api.get(DEPLOYMENTS, headers={"Accept": TABLE_ACCEPT}, params={"includeObject": "Object"})
    assert full.body["rows"][0]["object"]["spec"]["replicas"] == 2
    assert full.body["rows"][0]["object"]["kind"] == "Deployment"
    beta = await api.get("/apis/apps/v1beta2/namespaces/default/deployments", headers={"Accept": TABLE_ACCEPT},
                         params={"includeObject": "Object"})
    assert beta.body["rows"][0]["object"]["apiVersion"] == "apps/v1beta2"
    bare = await api.get(DEPLOYMENTS, headers={"Accept": TABLE_ACCEPT}, params={"includeObject": "None"})
    assert "object" not in bare.body["rows"][0]
    bad = await api.get(DEPLOYMENTS, headers={"Accept": TABLE_ACCEPT}, params={"includeObject": "Everything"})
    assert bad.status == 400


async def test_single_get_is_a_one_row_table(api):
    await api.post("/api/v1/namespaces/default/configmaps", configmap("c", {"a": "1", "b": "2"}))
    reply = await api.get("/api/v1/namespaces/default/configmaps/c", headers={"Accept": TABLE_ACCEPT})
    assert [c["name"] for c in reply.body["columnDefinitions"]] == ["Name", "Data", "Age"]
    assert reply.body["rows"][0]["cells"][:2] == ["c", 2]


async def test_kinds_have_their_kubectl_columns(api):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"schedulerName": UNSCHEDULED, "containers": [{"name": "c", "image": "x"}]}}
    await api.post("/api/v1/namespaces/default/pods", pod)
    pods = (await api.get("/api/v1/namespaces/default/pods", headers={"Accept": TABLE_ACCEPT})).body
    assert [c["name"] for c in pods["columnDefinitions"] if c["priority"] == 0] == ["Name", "Ready", "Status", "Restarts", "Age"]
    assert pods["rows"][0]["cells"][:4] == ["p", "0/1", "Pending", "0"]
    namespaces = (await api.get("/api/v1/namespaces", headers={"Accept": TABLE_ACCEPT})).body
    assert [c["name"] for c in namespaces["columnDefinitions"]] == ["Name", "Status", "Age"]
    assert ["default", "Active"] in [r["cells"][:2] for r in namespaces["rows"]]
    event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"}, "reason": "Scaled", "type": "Normal",
             "message": "scaled up", "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "default"}}
    await api.post("/api/v1/namespaces/default/events", event)
    events = (await api.get("/api/v1/namespaces/default/events", headers={"Accept": TABLE_ACCEPT})).body
    assert [c["name"] for c in events["columnDefinitions"] if c["priority"] == 0] == ["Last Seen", "Type", "Reason", "Object", "Message"]
    assert events["rows"][0]["cells"][1:4] == ["Normal", "Scaled", "deployment/web"]


async def test_pod_status_column_follows_container_states(api, server):
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"schedulerName": UNSCHEDULED, "containers": [{"name": "c", "image": "x"}]}}
    created = (await api.post("/api/v1/namespaces/default/pods", pod)).body
    created["status"] = {"phase": "Pending", "containerStatuses": [
        {"name": "c", "ready": False, "restartCount": 3, "image": "x", "imageID": "",
         "state": {"waiting": {"reason": "CrashLoopBackOff"}}}]}
    assert (await api.put("/api/v1/namespaces/default/pods/p/status", created)).status == 200
    row = (await api.get("/api/v1/namespaces/default/pods/p", headers={"Accept": TABLE_ACCEPT})).body["rows"][0]
    assert row["cells"][1:4] == ["0/1", "CrashLoopBackOff", "3"]


async def test_watch_events_are_tables(api, server):
    created = (await api.post(DEPLOYMENTS, deployment())).body
    params = {"watch": "1", "resourceVersion": created["metadata"]["resourceVersion"]}
    async with api.session.get(DEPLOYMENTS, params=params, headers={"Accept": TABLE_ACCEPT}) as response:
        assert response.headers["Content-Type"] == "application/json;as=Table;v=v1;g=meta.k8s.io"
        await api.patch(f"{DEPLOYMENTS}/web", {"spec": {"replicas": 5}})
        event = json.loads(await asyncio.wait_for(response.content.readline(), 5))
    assert event["type"] == "MODIFIED"
    assert event["object"]["kind"] == "Table" and event["object"]["rows"][0]["cells"][1] == "0/5"
