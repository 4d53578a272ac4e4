"""componentstatuses: what this server knows of the scheduler, the controller-manager and its storage."""

from __future__ import annotations

import pytest

from tests.waiting import eventually

CS = "/api/v1/componentstatuses"


@pytest.mark.controllers
async def test_components_are_healthy_while_the_controllers_lead(api):
    async def healthy() -> dict | None:
        reply = await api.get(CS)
        statuses = {i["metadata"]["name"]: i["conditions"][0] for i in reply.body["items"]}
        return statuses if all(c["status"] == "True" for c in statuses.values()) else None
    statuses = await eventually(healthy, what="the controller-manager to take its Lease")
    assert statuses == {name: {"type": "Healthy", "status": "True", "message": "ok"} for name in ("scheduler", "controller-manager", "etcd-0")}
    one = await api.get(f"{CS}/etcd-0")
    assert one.status == 200 and one.headers["Warning"] == '299 - "v1 ComponentStatus is deprecated in v1.19+"'
    assert (await api.get(f"{CS}/nope")).status == 404
    table = (await api.get(CS, headers={"Accept": "application/json;as=Table;v=v1;g=meta.k8s.io"})).body
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Status", "Message", "Error"]
    assert table["rows"][0]["cells"] == ["scheduler", "Healthy", "ok", ""]
    assert (await api.post(CS, {"metadata": {"name": "x"}})).status == 405


async def test_without_controllers_they_are_unhealthy(api):
    items = {i["metadata"]["name"]: i["conditions"][0] for i in (await api.get(CS)).body["items"]}
    assert items["etcd-0"]["status"] == "True"
    assert items["controller-manager"] == {"type": "Healthy", "status": "False",
                                           "error": "no controller-manager holds the Lease kube-system/kplane-controller-manager"}


def test_kubectl_get_cs(kubectl):
    done = kubectl.run("get", "cs")
    assert "Warning: v1 ComponentStatus is deprecated in v1.19+" in done.stderr
    assert done.stdout.splitlines()[0].split() == ["NAME", "STATUS", "MESSAGE", "ERROR"]
    assert {line.split()[0] for line in done.stdout.splitlines()[1:]} == {"scheduler", "controller-manager", "etcd-0"}
