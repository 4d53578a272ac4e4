"""The EventRecorder against a real server: what it writes, how repeats fold in, and what kubectl describe finds."""

from __future__ import annotations

import logging
import time
import uuid
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kplane.core.client.events import NORMAL, WARNING, EventRecorder
from kplane.core.client.rest import RESTClient
from kplane.core.meta.clock import parse
from kplane.core.serving.apiserver import APIServer
from tests.builders import deployment
from tests.servers import free_port


@pytest.fixture
async def client(server: APIServer) -> AsyncIterator[RESTClient]:
    rest = RESTClient(server.url)
    try:
        yield rest
    finally:
        await rest.close()


async def create_deployment(client: RESTClient, name: str = "web") -> dict[str, Any]:
    # No replicas: the deployment controller then records no events of its own about it.
    return await client.resource("apps", "v1", "deployments", namespace="default").create(deployment(name, replicas=0))


async def events_about(client: RESTClient, obj: dict[str, Any], namespace: str = "default") -> list[dict[str, Any]]:
    """The query kubectl describe sends (kubectl-wire §8.11), uid included; sorted by name."""
    meta = obj["metadata"]
    selector = f"involvedObject.name={meta['name']},involvedObject.kind={obj['kind']},involvedObject.uid={meta['uid']}"
    if meta.get("namespace"):
        selector += f",involvedObject.namespace={meta['namespace']}"
    listing = await client.resource("", "v1", "events", namespace=namespace).list(fieldSelector=selector)
    return sorted(listing["items"], key=lambda e: e["metadata"]["name"])


async def test_event_about_a_deployment(client: RESTClient, monkeypatch: pytest.MonkeyPatch) -> None:
    web = await create_deployment(client)
    recorder = EventRecorder(client, "deployment-controller", host="node-1")
    async with recorder:
        recorder.event(web, NORMAL, "ScalingReplicaSet", "Scaled up replica set web-abc to 2")
    [event] = await events_about(client, web)
    meta = web["metadata"]
    assert event["involvedObject"] == {"apiVersion": "apps/v1", "kind": "Deployment", "namespace": "default", "name": "web",
                                       "uid": meta["uid"], "resourceVersion": meta["resourceVersion"]}
    assert (event["type"], event["reason"], event["message"], event["count"]) == (
        NORMAL, "ScalingReplicaSet", "Scaled up replica set web-abc to 2", 1)
    assert event["source"] == {"component": "deployment-controller", "host": "node-1"}
    assert (event["reportingComponent"], event["reportingInstance"]) == ("deployment-controller", "node-1")
    assert event["firstTimestamp"] == event["lastTimestamp"]
    assert abs(parse(event["firstTimestamp"]).timestamp() - time.time()) < 5
    involved, suffix = event["metadata"]["name"].rsplit(".", 1)
    assert involved == "web" and abs(int(suffix, 16) - time.time_ns()) < 5 * 10**9  # client-go's <name>.<hex nanos>

    # The same again, a minute and a half later: the same Event, counted twice.
    later = time.time_ns() + 90 * 10**9
    async with recorder:
        with monkeypatch.context() as patched:
            patched.setattr(time, "time_ns", lambda: later)
            recorder.event(web, NORMAL, "ScalingReplicaSet", "Scaled up replica set web-abc to 2")
    [again] = await events_about(client, web)
    assert again["metadata"]["name"] == event["metadata"]["name"]
    assert again["count"] == 2
    assert again["firstTimestamp"] == event["firstTimestamp"]
    assert parse(again["lastTimestamp"]).timestamp() == pytest.approx(later / 1e9, abs=1)

    # Another reason is another Event.
    async with recorder:
        recorder.event(web, WARNING, "FailedCreate", "quota exceeded")
    reasons = {(e["reason"], e["type"], e["count"]) for e in await events_about(client, web)}
    assert reasons == {("ScalingReplicaSet", NORMAL, 2), ("FailedCreate", WARNING, 1)}


async def test_a_recreated_object_gets_its_own_events(client: RESTClient) -> None:
    """kubectl describe matches the uid: a new object of the same name sees none of the old one's events."""
    old = await create_deployment(client)
    async with EventRecorder(client, "deployment-controller") as recorder:
        recorder.event(old, NORMAL, "ScalingReplicaSet", "Scaled up")
        await client.resource("apps", "v1", "deployments", namespace="default").delete("web")
        new = await create_deployment(client)
        assert await events_about(client, new) == []
        recorder.event(new, NORMAL, "ScalingReplicaSet", "Scaled up")
    [event] = await events_about(client, new)
    assert event["count"] == 1  # not folded into the old object's Event
    assert len(await events_about(client, old)) == 1


async def test_cluster_scoped_objects_report_into_default(client: RESTClient) -> None:
    namespace = await client.resource("", "v1", "namespaces").create({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    role = {"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole", "metadata": {"name": "system:controller:x", "uid": "r1"}}
    async with EventRecorder(client, "namespace-controller") as recorder:
        recorder.event(namespace, NORMAL, "Created", "namespace created")
        recorder.event(role, WARNING, "Odd", "a name no Event can be named after")
    [event] = await events_about(client, namespace)
    assert event["metadata"]["namespace"] == "default"
    assert "namespace" not in event["involvedObject"]
    assert event["metadata"]["name"].startswith("team.")
    [odd] = await events_about(client, role)
    uuid.UUID(odd["metadata"]["name"])  # "system:controller:x.<hex>" is no valid name: client-go falls back to a UUID
    assert (await client.resource("", "v1", "events", namespace="team").list())["items"] == []


async def test_a_deleted_event_is_written_anew_on_repeat(client: RESTClient) -> None:
    web = await create_deployment(client)
    recorder = EventRecorder(client, "c")
    async with recorder:
        recorder.event(web, NORMAL, "R", "m")
    [first] = await events_about(client, web)
    await client.resource("", "v1", "events", namespace="default").delete(first["metadata"]["name"])
    async with recorder:
        recorder.event(web, NORMAL, "R", "m")
    [second] = await events_about(client, web)
    assert (second["metadata"]["name"], second["count"], second["firstTimestamp"]) == (first["metadata"]["name"], 2, first["firstTimestamp"])


async def test_window_and_cache_cap_end_aggregation(client: RESTClient) -> None:
    web = await create_deployment(client)
    async with EventRecorder(client, "c", window=0) as recorder:
        recorder.event(web, NORMAL, "Windowed", "m")
        recorder.event(web, NORMAL, "Windowed", "m")
    async with EventRecorder(client, "c", cache_size=1) as recorder:
        recorder.event(web, NORMAL, "A", "m")
        recorder.event(web, NORMAL, "B", "m")  # evicts A
        recorder.event(web, NORMAL, "A", "m")
        recorder.event(web, NORMAL, "A", "m")
    counts = sorted((e["reason"], e["count"]) for e in await events_about(client, web))
    assert counts == [("A", 1), ("A", 2), ("B", 1), ("Windowed", 1), ("Windowed", 1)]


async def test_recording_never_blocks_and_drops_when_full(client: RESTClient, caplog: pytest.LogCaptureFixture) -> None:
    web = await create_deployment(client)
    recorder = EventRecorder(client, "c", queue_size=2)
    with caplog.at_level(logging.ERROR, "kplane.core.client.events"):
        for reason in ("One", "Two", "Three"):
            recorder.event(web, NORMAL, reason, "m")  # not started yet: queued, nothing sent
        recorder.event(web, "Critical", "Four", "m")
        recorder.event({"kind": "Deployment", "metadata": {"name": "web"}}, NORMAL, "Five", "m")
        assert await events_about(client, web) == []
    messages = [r.getMessage() for r in caplog.records]
    assert any("Three" in m and "dropped" in m for m in messages)
    assert any("Four" in m and "neither Normal nor Warning" in m for m in messages)
    assert any("Five" in m and "lacks apiVersion" in m for m in messages)
    async with recorder:
        pass
    assert sorted(e["reason"] for e in await events_about(client, web)) == ["One", "Two"]


async def test_failures_are_logged_not_raised(client: RESTClient, caplog: pytest.LogCaptureFixture) -> None:
    web = await create_deployment(client)
    stranger = {**web, "metadata": {**web["metadata"], "namespace": "nowhere"}}
    unreachable = RESTClient(f"http://127.0.0.1:{free_port()}")
    try:
        with caplog.at_level(logging.WARNING, "kplane.core.client.events"):
            async with EventRecorder(client, "c") as recorder:
                recorder.event(stranger, NORMAL, "Lost", "m")
                recorder.event(web, NORMAL, "Kept", "m")  # the worker carries on after a failure
            async with EventRecorder(unreachable, "c") as offline:
                offline.event(web, NORMAL, "Offline", "m")
    finally:
        await unreachable.close()
    [lost] = [r for r in caplog.records if "server rejected event Lost" in r.getMessage()]
    [offline_log] = [r for r in caplog.records if "event Offline" in r.getMessage() and "not written" in r.getMessage()]
    for expected in (lost, offline_log):  # expected trouble: one warning line, no traceback
        assert (expected.levelno, expected.exc_info) == (logging.WARNING, None)
    assert [e["reason"] for e in await events_about(client, web)] == ["Kept"]
