"""Fixed paths with a trailing slash answer as kube-apiserver answers them (issue 11 B1: kr8s asks
``/version/`` first). go-restful ignores a trailing slash, and kube's mux registers ``/api/`` and
``/apis/``, so those paths serve what the path without it does; the health endpoints and
``/openapi/v3`` are exact paths there, so their slashed forms are 404."""

from __future__ import annotations

import pytest

from tests.conftest import Client

SAME_AS_WITHOUT_SLASH = ["/version", "/api", "/apis", "/api/v1", "/apis/apps", "/apis/apps/v1",
                         "/apis/apiregistration.k8s.io/v1", "/api/v1/namespaces",
                         "/api/v1/namespaces/default/configmaps", "/apis/apps/v1/deployments"]
NOT_FOUND_WITH_SLASH = ["/healthz/", "/livez/", "/readyz/", "/openapi/v3/", "/openapi/v3/apis/apps/v1/"]


@pytest.mark.parametrize("path", SAME_AS_WITHOUT_SLASH)
async def test_a_trailing_slash_serves_the_same(api: Client, path: str) -> None:
    plain, slashed = await api.get(path), await api.get(path + "/")
    assert plain.status == 200, plain
    assert (slashed.status, slashed.body) == (plain.status, plain.body)


async def test_aggregated_discovery_with_a_trailing_slash(api: Client) -> None:
    accept = {"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"}
    for path in ("/api", "/apis"):
        plain, slashed = await api.get(path, headers=accept), await api.get(path + "/", headers=accept)
        assert slashed.body["kind"] == "APIGroupDiscoveryList"
        assert slashed.body == plain.body


async def test_a_named_object_with_a_trailing_slash(api: Client) -> None:
    assert (await api.post("/api/v1/namespaces/default/configmaps", {"metadata": {"name": "c"}})).status == 201
    reply = await api.get("/api/v1/namespaces/default/configmaps/c/")
    assert (reply.status, reply.body["metadata"]["name"]) == (200, "c")


@pytest.mark.parametrize("path", NOT_FOUND_WITH_SLASH)
async def test_exact_paths_with_a_trailing_slash_are_404(api: Client, path: str) -> None:
    assert (await api.get(path)).status == 404
