"""The serviceaccounts controller: every active namespace has a ``default`` ServiceAccount."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

import pytest

from tests.waiting import eventually

pytestmark = pytest.mark.controllers


def default_account(api, namespace: str) -> Callable[[], Awaitable[dict[str, Any] | None]]:
    async def get() -> dict[str, Any] | None:
        reply = await api.get(f"/api/v1/namespaces/{namespace}/serviceaccounts/default")
        return reply.body if reply.status == 200 else None
    return get


async def test_a_new_namespace_gets_a_default_account_that_pods_then_run_as(api):
    reply = await api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "team"}})
    assert reply.status == 201
    account = await eventually(default_account(api, "team"))
    assert account["metadata"]["namespace"] == "team" and set(account) == {"apiVersion", "kind", "metadata"}
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "p"}, "spec": {"containers": [{"name": "c", "image": "nginx:1"}]}}
    reply = await api.post("/api/v1/namespaces/team/pods", pod)
    assert reply.status == 201 and reply.body["spec"]["serviceAccountName"] == "default"


async def test_the_system_namespaces_have_it(api):
    for namespace in ("default", "kube-system", "kube-public", "kube-node-lease"):
        await eventually(default_account(api, namespace))


async def test_a_deleted_default_account_comes_back(api):
    first = await eventually(default_account(api, "default"))
    assert (await api.delete("/api/v1/namespaces/default/serviceaccounts/default")).status == 200

    async def recreated() -> dict[str, Any] | None:
        account = await default_account(api, "default")()
        return account if account and account["metadata"]["uid"] != first["metadata"]["uid"] else None

    await eventually(recreated)


async def test_other_accounts_are_not_recreated_and_terminating_namespaces_get_none(api):
    accounts = "/api/v1/namespaces/default/serviceaccounts"
    await api.post(accounts, {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": "robot"}})
    assert (await api.delete(f"{accounts}/robot")).status == 200
    await api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "going"}})
    await eventually(default_account(api, "going"))
    await api.delete("/api/v1/namespaces/going")

    async def gone() -> bool:
        return (await api.get("/api/v1/namespaces/going")).status == 404

    await eventually(gone)  # the namespace controller emptied it: the account did not come back to block it
    assert (await api.get(f"{accounts}/robot")).status == 404
