"""Storage failures reach a client as the API errors it retries on (the registry's storeerr),
wherever in a request they happen: here, while a watch's stream is closed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from pathlib import Path

import pytest

from kplane.core.meta import errors
from kplane.core.plugins import PluginManager
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.options import WatchOptions
from kplane.core.registry.registry import Registry
from kplane.core.registry.strategy import RequestContext
from kplane.core.runtime.scheme import Scheme
from kplane.core.storage import interface as st
from kplane.core.storage.sqlite import SQLiteStorage


def configmap(name: str) -> bytes:
    return b'{"apiVersion":"v1","kind":"ConfigMap","metadata":{"name":"%s","namespace":"default"}}' % name.encode()


async def test_a_storage_failure_while_a_watch_closes_is_a_503(tmp_path: Path) -> None:
    storage = await SQLiteStorage.open(str(tmp_path / "state.db"))
    real_watch = storage.watch

    async def failing_to_close(stream: AsyncIterator[st.WatchEvent]) -> AsyncIterator[st.WatchEvent]:
        try:
            async for event in stream:
                yield event
        finally:
            raise st.UnavailableError("the connection broke while closing")

    storage.watch = lambda prefix, *, from_revision: failing_to_close(  # type: ignore[method-assign]
        real_watch(prefix, from_revision=from_revision))
    try:
        scheme, chain = Scheme(), AdmissionChain()
        registry = Registry(scheme, storage, chain)
        manager = PluginManager()
        manager.load_entry_points(only=frozenset({"core"}))
        await manager.setup(scheme, registry, chain)
        store = registry.rest("", "configmaps", "")
        before = await storage.create(store.key("default", "before"), configmap("before"))  # type: ignore[union-attr]
        await storage.create(store.key("default", "after"), configmap("after"))  # type: ignore[union-attr]
        events = await store.watch(RequestContext(namespace="default"), WatchOptions(resource_version=str(before.mod_revision)))  # type: ignore[union-attr]
        assert (await asyncio.wait_for(anext(events), 5)).type == "ADDED"
        with pytest.raises(errors.APIError) as caught:
            await events.aclose()  # as the server does when the client goes away
        assert (caught.value.code, caught.value.reason) == (503, "ServiceUnavailable")
    finally:
        await storage.close()
