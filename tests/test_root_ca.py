"""kube-root-ca.crt: every namespace gets the CA that verifies the server (the root CA
publisher), which the pods' kube-api-access volume mounts next to their token."""

from __future__ import annotations

from typing import Any

import pytest

from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client
from tests.waiting import eventually

CA_MAP = "/api/v1/namespaces/team/configmaps/kube-root-ca.crt"


async def _published(api: Client) -> dict[str, Any] | None:
    reply = await api.get(CA_MAP)
    return reply.body if reply.status == 200 else None


@pytest.mark.secure
@pytest.mark.controllers
async def test_every_namespace_gets_the_servers_ca(api: Client, server: APIServer) -> None:
    ca = (server.config.data_dir / "pki" / "ca.crt").read_text()
    assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})).status == 201
    published = await eventually(lambda: _published(api), what="kube-root-ca.crt in team")
    assert published["data"] == {"ca.crt": ca}
    assert published["metadata"]["annotations"]["kubernetes.io/description"].startswith("Contains a CA bundle")
    assert (await eventually(lambda: _published_in(api, "kube-system"), what="kube-root-ca.crt in kube-system"))

    tampered = {**published, "data": {"ca.crt": "not a CA"}}
    assert (await api.put(CA_MAP, tampered)).status == 200
    await eventually(lambda: _has_ca(api, ca), what="the CA put back")
    assert (await api.delete(CA_MAP)).status == 200
    await eventually(lambda: _has_ca(api, ca), what="the ConfigMap made again")


async def _published_in(api: Client, namespace: str) -> bool:
    return (await api.get(f"/api/v1/namespaces/{namespace}/configmaps/kube-root-ca.crt")).status == 200


async def _has_ca(api: Client, ca: str) -> bool:
    published = await _published(api)
    return published is not None and published.get("data") == {"ca.crt": ca}


@pytest.mark.controllers
async def test_without_a_known_ca_nothing_is_published(api: Client) -> None:
    """Plain HTTP: no CA to publish (and the serviceaccount controller shows the namespace synced)."""
    assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})).status == 201
    await eventually(lambda: _default_account(api), what="the default ServiceAccount")
    assert (await api.get(CA_MAP)).status == 404


async def _default_account(api: Client) -> bool:
    return (await api.get("/api/v1/namespaces/team/serviceaccounts/default")).status == 200


@pytest.mark.secure
@pytest.mark.controllers
async def test_a_kube_root_ca_made_first_by_someone_else_is_put_right(api: Client, server: APIServer) -> None:
    """A namespace made together with its own kube-root-ca.crt (another CA): the publisher's
    create meets a conflict, tries again from its cache, and puts the server's CA in."""
    ca = (server.config.data_dir / "pki" / "ca.crt").read_text()
    mine = {"metadata": {"name": "kube-root-ca.crt"}, "data": {"ca.crt": "a CA of my own"}}
    assert (await api.post("/api/v1/namespaces", {"metadata": {"name": "team"}})).status == 201
    planted = await api.post("/api/v1/namespaces/team/configmaps", mine)
    if planted.status == 409:  # the publisher was quicker: plant it over the published one
        current = (await api.get(CA_MAP)).body
        assert (await api.put(CA_MAP, {**current, "data": mine["data"]})).status == 200
    await eventually(lambda: _has_ca(api, ca), what="the server's CA in place of the planted one")
