"""Deleting a namespace: Terminating, emptied by the namespace controller, then gone."""

from __future__ import annotations

import asyncio

import pytest

from tests.builders import configmap, deployment
from tests.waiting import eventually

pytestmark = pytest.mark.controllers


async def create_namespace(api, name: str) -> None:
    reply = await api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}})
    assert reply.status == 201, reply


async def test_deleting_a_namespace_deletes_everything_in_it(api):
    await create_namespace(api, "team")
    await api.post("/api/v1/namespaces/team/configmaps", configmap("settings"))
    assert (await api.post("/apis/apps/v1/namespaces/team/deployments", deployment())).status == 201
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "x"}]}}
    await api.post("/api/v1/namespaces/team/pods", pod)
    await api.post("/api/v1/namespaces/default/configmaps", configmap("elsewhere"))
    reply = await api.delete("/api/v1/namespaces/team")
    assert reply.status == 200 and reply.body["status"]["phase"] == "Terminating"

    async def gone() -> bool:
        return (await api.get("/api/v1/namespaces/team")).status == 404

    await eventually(gone)
    for path in ("/api/v1/namespaces/team/configmaps", "/apis/apps/v1/namespaces/team/deployments", "/api/v1/namespaces/team/pods"):
        assert (await api.get(path)).body["items"] == []
    assert (await api.get("/api/v1/namespaces/default/configmaps/elsewhere")).status == 200


async def test_a_namespace_waits_for_finalizers_of_its_content(api):
    await create_namespace(api, "held")
    await api.post("/api/v1/namespaces/held/configmaps", configmap("keep", finalizers=["example.com/hold"]))
    await api.delete("/api/v1/namespaces/held")

    async def content_marked() -> bool:
        cm = (await api.get("/api/v1/namespaces/held/configmaps/keep")).body
        return bool(cm["metadata"].get("deletionTimestamp"))

    await eventually(content_marked)
    await asyncio.sleep(0.3)
    namespace = await api.get("/api/v1/namespaces/held")
    assert namespace.status == 200 and namespace.body["status"]["phase"] == "Terminating"
    refused = await api.post("/api/v1/namespaces/held/configmaps", configmap("new"))
    assert refused.status == 403 and refused.body["reason"] == "Forbidden"
    assert refused.body["message"] == (
        'configmaps "new" is forbidden: unable to create new content in namespace held because it is being terminated')
    assert refused.body["details"]["causes"][0]["reason"] == "NamespaceTerminating"
    await api.patch("/api/v1/namespaces/held/configmaps/keep", {"metadata": {"finalizers": None}})

    async def gone() -> bool:
        return (await api.get("/api/v1/namespaces/held")).status == 404

    await eventually(gone)
