"""The garbage collector: Background, Foreground and Orphan deletion through ownerReferences."""

from __future__ import annotations

import pytest

from tests.builders import DEPLOYMENTS, configmap, deployment
from tests.waiting import eventually

pytestmark = pytest.mark.controllers

CMS = "/api/v1/namespaces/default/configmaps"


async def _owner_and_dependents(api, *names: str, block: bool = False) -> dict:
    owner = (await api.post(DEPLOYMENTS, deployment("owner"))).body
    ref = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "owner", "uid": owner["metadata"]["uid"]}
    if block:
        ref["blockOwnerDeletion"] = True
    for name in names:
        reply = await api.post(CMS, configmap(name, ownerReferences=[ref]))
        assert reply.status == 201, reply
    return owner


async def _exists(api, path: str) -> bool:
    return (await api.get(path)).status == 200


async def test_background_deletion_collects_dependents(api):
    await _owner_and_dependents(api, "dep-a", "dep-b")
    await api.post(CMS, configmap("unrelated"))
    reply = await api.delete(f"{DEPLOYMENTS}/owner")
    assert reply.status == 200 and reply.body["status"] == "Success"

    async def collected() -> bool:
        return not await _exists(api, f"{CMS}/dep-a") and not await _exists(api, f"{CMS}/dep-b")

    await eventually(collected)
    assert await _exists(api, f"{CMS}/unrelated")


async def test_foreground_deletion_waits_for_blocking_dependents(api):
    await _owner_and_dependents(api, "held", block=True)
    await api.patch(f"{CMS}/held", {"metadata": {"finalizers": ["example.com/hold"]}})
    reply = await api.delete(f"{DEPLOYMENTS}/owner", {"propagationPolicy": "Foreground"})
    assert reply.status == 200 and reply.body["metadata"]["finalizers"] == ["foregroundDeletion"]
    assert reply.body["metadata"]["deletionTimestamp"]

    async def dependent_deleting() -> bool:
        return bool((await api.get(f"{CMS}/held")).body["metadata"].get("deletionTimestamp"))

    await eventually(dependent_deleting)
    assert await _exists(api, f"{DEPLOYMENTS}/owner")  # blocked by the dependent's own finalizer
    await api.patch(f"{CMS}/held", {"metadata": {"finalizers": None}})

    async def owner_gone() -> bool:
        return not await _exists(api, f"{DEPLOYMENTS}/owner")

    await eventually(owner_gone)


async def test_orphan_deletion_keeps_dependents(api):
    await _owner_and_dependents(api, "kept")
    reply = await api.delete(f"{DEPLOYMENTS}/owner", params={"propagationPolicy": "Orphan"})
    assert reply.body["metadata"]["finalizers"] == ["orphan"]

    async def owner_gone() -> bool:
        return not await _exists(api, f"{DEPLOYMENTS}/owner")

    await eventually(owner_gone)
    kept = (await api.get(f"{CMS}/kept")).body
    assert "ownerReferences" not in kept["metadata"]


async def test_dependents_of_missing_owners(api):
    ghost = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "ghost", "uid": "00000000-0000-0000-0000-000000000000"}
    await api.post(CMS, configmap("orphaned", ownerReferences=[ghost]))
    owner = (await api.post(DEPLOYMENTS, deployment("alive"))).body
    alive = {"apiVersion": "apps/v1", "kind": "Deployment", "name": "alive", "uid": owner["metadata"]["uid"]}
    await api.post(CMS, configmap("half", ownerReferences=[ghost, alive]))

    async def settled() -> bool:
        half = (await api.get(f"{CMS}/half")).body
        return not await _exists(api, f"{CMS}/orphaned") and half["metadata"].get("ownerReferences") == [alive]

    await eventually(settled)
