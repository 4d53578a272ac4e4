"""Informers, indexers, listers and the shared factory against a real server."""

from __future__ import annotations

import asyncio
import contextlib

import pytest

from kplane.core.client.cache import Indexer, Lister
from kplane.core.client.informer import Handlers, Informer, SharedInformerFactory
from kplane.core.client.rest import RESTClient
from kplane.core.meta.selectors import parse_label_selector
from tests.builders import configmap
from tests.waiting import eventually

CMS = "/api/v1/namespaces/default/configmaps"


def cm(name: str, namespace: str = "default", **labels: str) -> dict:
    return {"metadata": {"name": name, "namespace": namespace, "labels": labels, "resourceVersion": "1"}}


def test_indexer_and_lister() -> None:
    indexer = Indexer({"by-app": lambda o: [o["metadata"]["labels"].get("app", "")]})
    indexer.put(cm("a", app="web"))
    indexer.put(cm("b", app="db"))
    indexer.put(cm("c", namespace="other", app="web"))
    assert {o["metadata"]["name"] for o in indexer.by_index("by-app", "web")} == {"a", "c"}
    indexer.put(cm("a", app="db"))  # re-indexed on update
    assert {o["metadata"]["name"] for o in indexer.by_index("by-app", "db")} == {"a", "b"}
    indexer.pop("default/b")
    assert [o["metadata"]["name"] for o in indexer.by_index("by-app", "db")] == ["a"]
    lister = Lister(indexer)
    assert lister.namespaced("other").get("c") is not None and lister.namespaced("default").get("c") is None
    assert [o["metadata"]["name"] for o in lister.namespaced("default").list()] == ["a"]
    assert {o["metadata"]["name"] for o in lister.list(parse_label_selector("app=web"))} == {"c"}
    indexer.add_indexer("by-name", lambda o: [o["metadata"]["name"]])
    assert [o["metadata"]["namespace"] for o in indexer.by_index("by-name", "c")] == ["other"]
    with pytest.raises(ValueError):
        indexer.add_indexer("namespace", lambda o: [])


@pytest.fixture
async def client(server):
    rest = RESTClient(server.url)
    yield rest
    await rest.close()


async def test_informer_lists_then_watches(api, client):
    await api.post(CMS, configmap("before"))
    informer = Informer(client.resource("", "v1", "configmaps"))
    seen: list[tuple[str, str]] = []
    informer.add_handlers(Handlers(on_add=lambda o: seen.append(("add", o["metadata"]["name"])),
                                   on_update=lambda old, new: seen.append(("update", new["metadata"]["name"])),
                                   on_delete=lambda o: seen.append(("delete", o["metadata"]["name"]))))
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.synced.wait(), 5)
        assert seen == [("add", "before")]
        await api.post(CMS, configmap("after"))
        await api.patch(f"{CMS}/after", {"data": {"x": "y"}})
        await api.delete(f"{CMS}/before")

        async def all_seen() -> bool:
            return seen[1:] == [("add", "after"), ("update", "after"), ("delete", "before")]

        await eventually(all_seen)
        assert informer.lister().namespaced("default").get("after")["data"] == {"a": "b", "x": "y"}
        late: list[str] = []
        informer.add_handlers(Handlers(on_add=lambda o: late.append(o["metadata"]["name"])))
        assert late == ["after"]  # a late handler is replayed what is cached
    finally:
        task.cancel()


async def test_relist_after_410_reports_missed_deletions(api, client, server):
    await api.post(CMS, configmap("gone-while-away"))
    await api.post(CMS, configmap("stays"))
    informer = Informer(client.resource("", "v1", "configmaps"))
    deleted: list[str] = []
    informer.add_handlers(Handlers(on_delete=lambda o: deleted.append(o["metadata"]["name"])))
    task = asyncio.create_task(informer.run())
    await asyncio.wait_for(informer.synced.wait(), 5)
    task.cancel()
    with contextlib.suppress(asyncio.CancelledError):
        await task
    await api.delete(f"{CMS}/gone-while-away")
    for i in range(3):
        await api.post(CMS, configmap(f"filler-{i}"))
    await server.storage.compact(await server.storage.current_revision())
    task = asyncio.create_task(informer.run())  # resumes from its old, now compacted, version
    try:
        async def relisted() -> bool:
            return deleted == ["gone-while-away"] and informer.lister().namespaced("default").get("filler-2") is not None

        await eventually(relisted)
        assert informer.lister().namespaced("default").get("stays") is not None
    finally:
        task.cancel()


async def test_resync_redelivers_cached_objects(api, client):
    await api.post(CMS, configmap("steady"))
    informer = Informer(client.resource("", "v1", "configmaps"), resync=0.1)
    resynced: list[str] = []
    informer.add_handlers(Handlers(on_update=lambda old, new: resynced.append(new["metadata"]["name"]) if old is new else None))
    task = asyncio.create_task(informer.run())
    try:
        async def twice() -> bool:
            return resynced.count("steady") >= 2

        await eventually(twice)
    finally:
        task.cancel()


async def test_shared_informer_factory(api, client):
    await api.post(CMS, configmap("shared"))
    factory = SharedInformerFactory(client)
    first = factory.informer("", "v1", "configmaps")
    assert factory.informer("", "v1", "configmaps") is first
    factory.informer("apps", "v1", "deployments")
    factory.start()
    try:
        assert await factory.wait_for_cache_sync(timeout=5)
        assert first.lister().namespaced("default").get("shared") is not None
    finally:
        await factory.stop()


async def test_a_failing_handler_does_not_stop_the_informer(api, client):
    informer = Informer(client.resource("", "v1", "configmaps"))
    seen: list[str] = []

    def broken(obj: dict) -> None:
        raise RuntimeError("a bug in some controller")

    informer.add_handlers(Handlers(on_add=broken))
    informer.add_handlers(Handlers(on_add=lambda o: seen.append(o["metadata"]["name"])))
    task = asyncio.create_task(informer.run())
    try:
        await asyncio.wait_for(informer.synced.wait(), 5)
        await api.post(CMS, configmap("first"))
        await api.post(CMS, configmap("second"))

        async def both() -> bool:
            return seen == ["first", "second"]

        await eventually(both)
    finally:
        task.cancel()
