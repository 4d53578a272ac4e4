"""LIST and WATCH semantics: selectors, pagination, resourceVersion rules, streaming events."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import aiohttp
import pytest

from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client

from tests.builders import UNSCHEDULED, configmap
from tests.servers import server_config

CMS = "/api/v1/namespaces/default/configmaps"


async def _make(api, *names: str, **labels: str) -> list[dict[str, Any]]:
    made = []
    for name in names:
        reply = await api.post(CMS, configmap(name, labels=dict(labels) or None))
        assert reply.status == 201, reply
        made.append(reply.body)
    return made


async def _names(api, **params: str) -> list[str]:
    reply = await api.get(CMS, params=params)
    assert reply.status == 200, reply
    return [i["metadata"]["name"] for i in reply.body["items"]]


class Watch:
    """A live watch stream, read line by line."""

    def __init__(self, response) -> None:
        self.response = response

    async def next(self, timeout: float = 5.0) -> dict[str, Any]:
        line = await asyncio.wait_for(self.response.content.readline(), timeout)
        assert line, "the watch stream ended"
        return json.loads(line)

    async def take(self, count: int) -> list[tuple[str, str]]:
        return [(e["type"], e["object"]["metadata"].get("name", "")) for e in [await self.next() for _ in range(count)]]

    async def ended(self, timeout: float = 5.0) -> bool:
        return await asyncio.wait_for(self.response.content.readline(), timeout) == b""


@pytest.fixture
async def watch(api):
    opened = []

    async def start(path: str = CMS, **params: str) -> Watch:
        response = await api.session.get(path, params={"watch": "true", **params})
        assert response.status == 200
        opened.append(response)
        return Watch(response)

    yield start
    for response in opened:
        response.close()


async def test_label_selectors(api):
    await _make(api, "a1", tier="front", env="prod")
    await _make(api, "a2", tier="back", env="prod")
    await _make(api, "a3", tier="front")
    assert await _names(api, labelSelector="tier=front") == ["a1", "a3"]
    assert await _names(api, labelSelector="tier==front,env=prod") == ["a1"]
    assert await _names(api, labelSelector="tier!=front") == ["a2"]
    assert await _names(api, labelSelector="tier in (back, middle)") == ["a2"]
    assert await _names(api, labelSelector="tier notin (back)") == ["a1", "a3"]
    assert await _names(api, labelSelector="env") == ["a1", "a2"]
    assert await _names(api, labelSelector="!env") == ["a3"]


async def test_field_selectors(api):
    await _make(api, "f1", "f2")
    assert await _names(api, fieldSelector="metadata.name=f2") == ["f2"]
    assert await _names(api, fieldSelector="metadata.name!=f2") == ["f1"]
    assert await _names(api, fieldSelector="metadata.namespace=default") == ["f1", "f2"]
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"},
           "spec": {"schedulerName": UNSCHEDULED, "containers": [{"name": "c", "image": "x"}]}}
    await api.post("/api/v1/namespaces/default/pods", pod)
    pending = await api.get("/api/v1/pods", params={"fieldSelector": "status.phase=Pending,spec.nodeName="})
    assert [p["metadata"]["name"] for p in pending.body["items"]] == ["p"]
    running = await api.get("/api/v1/pods", params={"fieldSelector": "status.phase=Running"})
    assert running.body["items"] == []


async def test_event_field_selectors_match_involved_object(api):
    for name, uid in (("e1", "u1"), ("e2", "u2")):
        event = {"apiVersion": "v1", "kind": "Event", "metadata": {"name": name}, "reason": "R", "source": {"component": "me"},
                 "involvedObject": {"kind": "Deployment", "name": "web", "namespace": "default", "uid": uid}}
        assert (await api.post("/api/v1/namespaces/default/events", event)).status == 201
    selector = "involvedObject.name=web,involvedObject.namespace=default,involvedObject.kind=Deployment,involvedObject.uid=u2"
    found = await api.get("/api/v1/namespaces/default/events", params={"fieldSelector": selector})
    assert [e["metadata"]["name"] for e in found.body["items"]] == ["e2"]
    by_source = await api.get("/api/v1/namespaces/default/events", params={"fieldSelector": "source=me"})
    assert len(by_source.body["items"]) == 2


async def test_invalid_selectors_are_400(api):
    for params in ({"labelSelector": "a in (b"}, {"labelSelector": "=x"}, {"fieldSelector": "spec.unknown=x"},
                   {"fieldSelector": "nonsense"}):
        reply = await api.get(CMS, params=params)
        assert reply.status == 400 and reply.body["reason"] == "BadRequest", (params, reply)
    unsupported = await api.get(CMS, params={"fieldSelector": "spec.unknown=x"})
    assert unsupported.body["message"] == '"spec.unknown" is not a known field selector: only "metadata.name", "metadata.namespace"'


async def test_pagination_is_a_consistent_snapshot(api):
    await _make(api, *(f"p{i:02d}" for i in range(7)))
    first = (await api.get(CMS, params={"limit": "3"})).body
    assert [i["metadata"]["name"] for i in first["items"]] == ["p00", "p01", "p02"]
    token = first["metadata"]["continue"]
    await api.delete(f"{CMS}/p04")  # changes after the first page do not show in later pages
    await _make(api, "p03a")
    second = (await api.get(CMS, params={"limit": "3", "continue": token})).body
    assert [i["metadata"]["name"] for i in second["items"]] == ["p03", "p04", "p05"]
    third = (await api.get(CMS, params={"limit": "3", "continue": second["metadata"]["continue"]})).body
    assert [i["metadata"]["name"] for i in third["items"]] == ["p06"]
    assert "continue" not in third["metadata"]
    assert third["metadata"]["resourceVersion"] == first["metadata"]["resourceVersion"]


async def test_pagination_with_a_label_selector_fills_pages(api):
    for i in range(6):
        await _make(api, f"s{i}", keep="yes" if i % 2 else "no")
    page = (await api.get(CMS, params={"limit": "2", "labelSelector": "keep=yes"})).body
    assert [i["metadata"]["name"] for i in page["items"]] == ["s1", "s3"]
    rest = (await api.get(CMS, params={"limit": "2", "labelSelector": "keep=yes", "continue": page["metadata"]["continue"]})).body
    assert [i["metadata"]["name"] for i in rest["items"]] == ["s5"]


async def test_bad_continue_token(api):
    reply = await api.get(CMS, params={"limit": "1", "continue": "garbage!!"})
    assert reply.status == 400


async def test_resource_version_match(api):
    (old,) = await _make(api, "v")
    old_rv = old["metadata"]["resourceVersion"]
    await api.patch(f"{CMS}/v", {"data": {"a": "changed"}})
    exact = (await api.get(CMS, params={"resourceVersion": old_rv, "resourceVersionMatch": "Exact"})).body
    assert exact["items"][0]["data"] == {"a": "b"} and exact["metadata"]["resourceVersion"] == old_rv
    newer = (await api.get(CMS, params={"resourceVersion": old_rv, "resourceVersionMatch": "NotOlderThan"})).body
    assert newer["items"][0]["data"] == {"a": "changed"}
    assert (await api.get(CMS, params={"resourceVersion": "0"})).body["items"][0]["data"] == {"a": "changed"}
    future = await api.get(CMS, params={"resourceVersion": "999999"})
    assert future.status == 504 and future.body["reason"] == "Timeout"
    no_rv = await api.get(CMS, params={"resourceVersionMatch": "Exact"})
    assert no_rv.status == 422
    assert (await api.get(CMS, params={"resourceVersion": "abc"})).status == 400


async def test_watch_from_now_and_from_a_version(api, watch):
    (first,) = await _make(api, "w1")
    stream = await watch(resourceVersion=first["metadata"]["resourceVersion"])
    await _make(api, "w2")
    await api.patch(f"{CMS}/w2", {"data": {"x": "y"}})
    await api.delete(f"{CMS}/w1")
    assert await stream.take(3) == [("ADDED", "w2"), ("MODIFIED", "w2"), ("DELETED", "w1")]
    history = await watch(resourceVersion=first["metadata"]["resourceVersion"])  # replays the same
    assert await history.take(3) == [("ADDED", "w2"), ("MODIFIED", "w2"), ("DELETED", "w1")]


async def test_watch_with_rv_zero_or_empty_starts_with_current_objects(api, watch):
    await _make(api, "c1", "c2")
    for params in ({"resourceVersion": "0"}, {}):
        stream = await watch(**params)
        assert sorted(await stream.take(2)) == [("ADDED", "c1"), ("ADDED", "c2")]
    stream = await watch()
    await _make(api, "c3")
    assert (await stream.take(3))[2] == ("ADDED", "c3")


async def test_watch_events_carry_increasing_resource_versions(api, watch):
    stream = await watch(resourceVersion="1")
    await _make(api, "r1", "r2")
    await api.delete(f"{CMS}/r1")
    events = [await stream.next() for _ in range(3)]
    rvs = [int(e["object"]["metadata"]["resourceVersion"]) for e in events]
    assert rvs == sorted(rvs) and len(set(rvs)) == 3
    deleted = events[2]
    assert deleted["type"] == "DELETED" and deleted["object"]["data"] == {"a": "b"}


async def test_watch_with_selectors_turns_updates_into_added_and_deleted(api, watch):
    (cm,) = await _make(api, "sel", tier="a")
    stream = await watch(labelSelector="tier=b", resourceVersion=cm["metadata"]["resourceVersion"])
    await api.patch(f"{CMS}/sel", {"metadata": {"labels": {"tier": "b"}}})
    await api.patch(f"{CMS}/sel", {"data": {"n": "1"}})
    await api.patch(f"{CMS}/sel", {"metadata": {"labels": {"tier": "c"}}})
    assert await stream.take(3) == [("ADDED", "sel"), ("MODIFIED", "sel"), ("DELETED", "sel")]
    named = await watch(fieldSelector="metadata.name=other", resourceVersion=cm["metadata"]["resourceVersion"])
    await _make(api, "unrelated", "other")
    assert await named.take(1) == [("ADDED", "other")]


async def test_watch_timeout_closes_the_stream(api, watch):
    stream = await watch(timeoutSeconds="1")
    assert await stream.ended(timeout=5)


async def test_watch_bookmarks(tmp_path):
    server = APIServer(server_config(data_dir=tmp_path, port=0, bookmark_interval=0.2))
    await server.start()
    try:
        async with aiohttp.ClientSession(base_url=server.url) as session:
            api = Client(session)
            (cm,) = await _make(api, "b1")
            params = {"watch": "1", "allowWatchBookmarks": "True", "resourceVersion": cm["metadata"]["resourceVersion"]}
            async with session.get(CMS, params=params) as response:
                event = await Watch(response).next()
            quiet = await session.get(CMS, params={"watch": "1", "resourceVersion": cm["metadata"]["resourceVersion"], "timeoutSeconds": "1"})
            assert await Watch(quiet).ended()  # no bookmarks unless asked for
    finally:
        await server.stop()
    assert event["type"] == "BOOKMARK"
    assert event["object"]["metadata"]["resourceVersion"] == cm["metadata"]["resourceVersion"]
    assert event["object"]["kind"] == "ConfigMap"


async def test_watch_from_a_compacted_version_is_410_expired(api, server, watch):
    (cm,) = await _make(api, "old")
    for i in range(3):
        await api.patch(f"{CMS}/old", {"data": {"n": str(i)}})
    await server.storage.compact(await server.storage.current_revision())
    stream = await watch(resourceVersion=cm["metadata"]["resourceVersion"])
    event = await stream.next()
    assert event["type"] == "ERROR"
    assert event["object"]["code"] == 410 and event["object"]["reason"] == "Expired"
    assert event["object"]["message"].startswith(f"too old resource version: {cm['metadata']['resourceVersion']}")
    exact = await api.get(CMS, params={"resourceVersion": cm["metadata"]["resourceVersion"], "resourceVersionMatch": "Exact"})
    assert exact.status == 410


async def test_watch_of_one_namespace_sees_only_it(api, watch):
    await api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "other"}})
    stream = await watch(resourceVersion="1")
    await api.post("/api/v1/namespaces/other/configmaps", configmap("elsewhere"))
    await _make(api, "here")
    assert await stream.take(1) == [("ADDED", "here")]
