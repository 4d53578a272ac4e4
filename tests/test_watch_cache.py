"""The watch cache behind the HTTP API: consistent reads, reads from the cache, and watch events
encoded once for every watcher."""

from __future__ import annotations

import asyncio
import json

import aiohttp
import pytest

from kplane.core.registry.stored import storage_bytes
from kplane.core.serving.apiserver import APIServer
from kplane.core.storage.cacher import CachedStorage
from tests.builders import configmap, deployment

CMS = "/api/v1/namespaces/default/configmaps"
DEPLOYMENTS = "apis/{version}/namespaces/default/deployments"


def stored_configmap(name: str) -> bytes:
    """A ConfigMap as storage holds it, for writes that go around the HTTP layer."""
    wire = configmap(name)
    wire["metadata"].update(namespace="default", uid=f"uid-{name}", creationTimestamp="2026-11-29T00:00:00Z")
    return storage_bytes(wire)


async def test_the_server_reads_through_the_watch_cache(server: APIServer) -> None:
    assert isinstance(server.storage, CachedStorage)


async def test_a_list_without_resource_version_sees_every_write_before_it(server: APIServer, api) -> None:
    """Writes land in storage before the cache hears of them; a consistent LIST waits for it."""
    storage = server.storage
    for i in range(50):
        await storage.create(f"/registry/core/configmaps/default/direct-{i:02d}", stored_configmap(f"direct-{i:02d}"))
        reply = await api.get(CMS)  # no resourceVersion: consistent
        names = [item["metadata"]["name"] for item in reply.body["items"]]
        assert f"direct-{i:02d}" in names
        assert int(reply.body["metadata"]["resourceVersion"]) >= await storage.current_revision()


async def test_a_list_at_resource_version_0_answers_from_the_cache(server: APIServer, api) -> None:
    made = await api.post(CMS, configmap("seen"))
    reply = await api.get(CMS, params={"resourceVersion": "0"})
    assert reply.status == 200
    # "0" promises nothing about freshness: whatever the cache holds, which is never ahead of storage
    assert int(reply.body["metadata"]["resourceVersion"]) <= await server.storage.current_revision()
    newer = await api.get(CMS, params={"resourceVersion": made.body["metadata"]["resourceVersion"],
                                       "resourceVersionMatch": "NotOlderThan"})
    assert "seen" in [item["metadata"]["name"] for item in newer.body["items"]]


async def test_pages_are_one_snapshot_while_writes_land_between_them(api) -> None:
    for i in range(6):
        await api.post(CMS, configmap(f"page-{i}"))
    first = await api.get(CMS, params={"limit": "2"})
    await api.delete(f"{CMS}/page-3")
    await api.post(CMS, configmap("page-9"))
    await api.patch(f"{CMS}/page-4", {"data": {"changed": "yes"}})
    token, items = first.body["metadata"]["continue"], list(first.body["items"])
    while token:
        page = await api.get(CMS, params={"limit": "2", "continue": token})
        assert page.body["metadata"]["resourceVersion"] == first.body["metadata"]["resourceVersion"]
        items += page.body["items"]
        token = page.body["metadata"].get("continue", "")
    names = [item["metadata"]["name"] for item in items]
    assert names == [f"page-{i}" for i in range(6)]  # page-3 still there, page-9 not yet
    assert "changed" not in next(i for i in items if i["metadata"]["name"] == "page-4")["data"]


@pytest.mark.runtime_config("apps/v1beta2=true")
async def test_each_watch_event_is_encoded_once_per_version(server: APIServer, api) -> None:
    created = await api.post(f"/{DEPLOYMENTS.format(version='apps/v1')}", deployment("shared"))
    since = created.body["metadata"]["resourceVersion"]
    async with aiohttp.ClientSession(base_url=server.url) as session:
        streams = []
        table = {"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"}  # kubectl get -w
        for version, headers in (("apps/v1", {}), ("apps/v1", {}), ("apps/v1", {}), ("apps/v1beta2", {}),
                                 ("apps/v1", table), ("apps/v1", table)):
            reply = await session.get(f"/{DEPLOYMENTS.format(version=version)}", headers=headers,
                                      params={"watch": "1", "resourceVersion": since})
            streams.append(reply)
        await asyncio.sleep(0.1)
        await api.patch(f"/{DEPLOYMENTS.format(version='apps/v1')}/shared", {"metadata": {"labels": {"new": "label"}}})
        lines = [await asyncio.wait_for(stream.content.readline(), 5) for stream in streams]
        for stream in streams:
            stream.close()
    v1_lines, beta_line, table_lines = lines[:3], lines[3], lines[4:]
    assert v1_lines[0] == v1_lines[1] == v1_lines[2]
    assert table_lines[0] == table_lines[1] and json.loads(table_lines[0])["object"]["kind"] == "Table"
    assert json.loads(beta_line)["object"]["apiVersion"] == "apps/v1beta2"
    # The storage event the watchers shared carries exactly one encoding per version, the one
    # every watcher of that version was sent.
    replay = server.storage.watch("/registry/apps/deployments/", from_revision=int(since))
    event = await asyncio.wait_for(anext(replay), 5)
    await replay.aclose()
    lines_kept = {key: value for key, value in event.memo.items() if isinstance(value, bytes)}
    assert lines_kept == {("MODIFIED", "v1"): v1_lines[0], ("MODIFIED", "v1beta2"): beta_line,
                          ("MODIFIED", "v1", "application/json;as=Table;v=v1;g=meta.k8s.io", "Metadata"): table_lines[0]}


async def test_a_continue_token_older_than_a_compaction_is_410_expired(server: APIServer, api) -> None:
    for i in range(4):
        await api.post(CMS, configmap(f"c-{i}"))
    first = await api.get(CMS, params={"limit": "2"})
    changed = await api.patch(f"{CMS}/c-0", {"data": {"n": "1"}})
    await server.storage.compact(int(changed.body["metadata"]["resourceVersion"]))
    expired = await api.get(CMS, params={"limit": "2", "continue": first.body["metadata"]["continue"]})
    assert expired.status == 410 and expired.body["reason"] == "Expired"
    assert expired.body["message"].startswith("The provided continue parameter is too old")
