"""API aggregation: APIServices, the proxy, discovery and OpenAPI of proxied groups, availability.

The backends are real servers: a `kplane serve --plugins coordination` process (the main server is
started without that plugin, so coordination.k8s.io exists only through the proxy), and a tiny
aiohttp server of the test's own where the test must see what a backend receives. Every server
here listens on loopback; backends are on, as kplane serve has them, except where a test shows
what a server started with --no-enable-apiservice-backends refuses.
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import json
import os
import shutil
import ssl
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator, Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import aiohttp
import pytest
from aiohttp import web

from kplane.core.client.tls import load_cert_chain
from kplane.core.pki.certificates import SubjectAltNames, issue, new_ca
from kplane.core.runtime.scheme import parse_runtime_config
from kplane.core.config import ServerConfig
from kplane.core.serving.apiserver import APIServer
from kplane.core.server.discovery import AGGREGATED
from kplane.plugins.apiregistration.backends import Backends
from kplane.plugins.apiregistration.proxy import REDIRECT_REFUSED
from kplane.plugins.apiregistration.settings import NO_BACKENDS_FLAG
from tests.conftest import Client
from tests.kubectl_cli import Kubectl
from tests.servers import Served, free_port, server_config, serving, start, wait_ready
from tests.waiting import eventually

APISERVICES = "/apis/apiregistration.k8s.io/v1/apiservices"
LEASES = "/apis/coordination.k8s.io/v1/namespaces/team/leases"
TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"


def api_service(group: str, version: str, url: str, **spec: Any) -> dict[str, Any]:
    return {
        "apiVersion": "apiregistration.k8s.io/v1",
        "kind": "APIService",
        "metadata": {"name": f"{version}.{group}"},
        "spec": {"group": group, "version": version, "url": url, "groupPriorityMinimum": 1000, "versionPriority": 15, **spec},
    }


def lease(name: str, holder: str = "me") -> dict[str, Any]:
    return {"apiVersion": "coordination.k8s.io/v1", "kind": "Lease", "metadata": {"name": name}, "spec": {"holderIdentity": holder}}


def available(obj: dict[str, Any]) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == "Available"), None)


async def wait_available(api: Client, name: str, status: str = "True", timeout: float = 15.0, reason: str = "") -> dict[str, Any]:
    async def probe() -> dict[str, Any] | None:
        reply = await api.get(f"{APISERVICES}/{name}")
        cond = available(reply.body) if reply.status == 200 else None
        if cond is None or cond["status"] != status or (reason and cond.get("reason") != reason):
            return None
        return cond
    return await eventually(probe, timeout)


# -- fixtures: real servers -----------------------------------------------------------------------
@pytest.fixture
def backend(tmp_path: Path) -> Iterator[Served]:
    """A kplane serving coordination.k8s.io alone."""
    with serving(tmp_path / "backend", "--plugins", "coordination", "--no-controllers") as served:
        yield served


@pytest.fixture
def main(tmp_path: Path) -> Iterator[Served]:
    """The aggregator: every plugin but coordination, availability re-checked every second."""
    with serving(tmp_path / "main", "--disable-plugin", "coordination", "--no-controllers",
                 "--apiservice-probe-interval", "1") as served:
        yield served


@pytest.fixture
async def main_api(main: Served) -> AsyncIterator[Client]:
    async with aiohttp.ClientSession(base_url=main.url) as session:
        yield Client(session)


async def register_coordination(api: Client, backend: Served) -> None:
    created = await api.post(APISERVICES, api_service("coordination.k8s.io", "v1", backend.url, groupPriorityMinimum=16500))
    assert created.status == 201, created
    await wait_available(api, "v1.coordination.k8s.io")


# -- the APIService kind ----------------------------------------------------------------------------
async def test_local_api_services_are_kept_for_every_served_group_version(api: Client) -> None:
    listed = (await api.get(APISERVICES)).body["items"]
    by_name = {a["metadata"]["name"]: a for a in listed}
    assert {"v1.", "v1.apps", "v1.coordination.k8s.io", "v1.apiregistration.k8s.io"} <= set(by_name)
    assert "v1beta2.apps" not in by_name  # not served by default
    apps = by_name["v1.apps"]
    assert apps["spec"] == {"group": "apps", "version": "v1", "groupPriorityMinimum": 17800, "versionPriority": 15}
    assert apps["metadata"]["labels"] == {"kube-aggregator.kubernetes.io/automanaged": "onstart"}
    cond = available(apps)
    assert cond is not None and (cond["status"], cond["reason"], cond["message"]) == ("True", "Local", "Local APIServices are always available")
    table = (await api.get(APISERVICES, headers={"Accept": TABLE})).body
    assert [c["name"] for c in table["columnDefinitions"]] == ["Name", "Service", "Available", "Age"]
    row = next(r for r in table["rows"] if r["cells"][0] == "v1.apps")
    assert row["cells"][1:3] == ["Local", "True"]


async def test_local_api_services_follow_the_served_groups_across_restarts(tmp_path: Path) -> None:
    async def names(config: ServerConfig) -> set[str]:
        server = APIServer(config)
        await server.start()
        try:
            async with aiohttp.ClientSession(base_url=server.url) as session:
                items = (await Client(session).get(APISERVICES)).body["items"]
                return {a["metadata"]["name"] for a in items}
        finally:
            await server.stop()

    config = server_config(data_dir=tmp_path / "state", port=0, run_controllers=False)
    first = await names(config)
    assert "v1.coordination.k8s.io" in first
    assert await names(config) == first  # idempotent
    config.disabled_plugins = frozenset({"coordination"})
    assert await names(config) == first - {"v1.coordination.k8s.io"}  # no longer served: deleted


async def test_api_service_validation(aggregator: APIServer) -> None:
    async with aiohttp.ClientSession(base_url=aggregator.url) as session:
        await _api_service_validation(Client(session))


async def _api_service_validation(api: Client) -> None:
    wrong_name = api_service("wardle.example.com", "v1alpha1", "http://127.0.0.1:1")
    wrong_name["metadata"]["name"] = "v1alpha1.wrong.example.com"
    reply = await api.post(APISERVICES, wrong_name)
    assert reply.status == 422 and reply.body["reason"] == "Invalid", reply
    assert reply.body["details"]["causes"] == [{
        "reason": "FieldValueInvalid", "field": "metadata.name",
        "message": 'Invalid value: "v1alpha1.wrong.example.com": must be `spec.version+"."+spec.group`: '
                   '"v1alpha1.wardle.example.com"',
    }]
    assert reply.body["message"].startswith('APIService.apiregistration.k8s.io "v1alpha1.wrong.example.com" is invalid: ')

    slash = api_service("x.example.com", "v1", "http://127.0.0.1:1")
    slash["metadata"]["name"] = "v1/x.example.com"
    reply = await api.post(APISERVICES, slash)
    assert reply.status == 422

    bad = {
        "apiVersion": "apiregistration.k8s.io/v1", "kind": "APIService", "metadata": {"name": "v1.bad.example.com"},
        "spec": {"group": "bad.example.com", "version": "v1", "groupPriorityMinimum": 0, "versionPriority": 1001,
                 "service": {"name": "api"}, "insecureSkipTLSVerify": True, "caBundle": "aGVsbG8="},
    }
    reply = await api.post(APISERVICES, bad)
    assert reply.status == 422
    assert {(c["field"], c["reason"]) for c in reply.body["details"]["causes"]} == {
        ("spec.groupPriorityMinimum", "FieldValueInvalid"),
        ("spec.versionPriority", "FieldValueInvalid"),
        ("spec.service.namespace", "FieldValueRequired"),
        ("spec.insecureSkipTLSVerify", "FieldValueInvalid"),
    }
    local_with_ca = {**bad, "metadata": {"name": "v1.local.example.com"},
                     "spec": {"group": "local.example.com", "version": "v1", "groupPriorityMinimum": 1, "versionPriority": 1,
                              "caBundle": "aGVsbG8="}}
    reply = await api.post(APISERVICES, local_with_ca)
    assert reply.status == 422 and "local APIServices may not have a caBundle" in reply.body["message"]
    url = api_service("u.example.com", "v1", "ftp://user@host/x?y")
    reply = await api.post(APISERVICES, url)
    assert reply.status == 422
    assert [c["message"].rsplit(": ", 1)[1] for c in reply.body["details"]["causes"]] == [
        "'http' or 'https' scheme required", "user information is not permitted in the URL",
        "query parameters are not permitted in the URL"]
    both = api_service("b.example.com", "v1", "http://127.0.0.1:1", service={"namespace": "ns", "name": "api"})
    reply = await api.post(APISERVICES, both)
    assert reply.status == 422 and reply.body["details"]["causes"][0]["field"] == "spec.url"

    service = api_service("s.example.com", "v1", "", service={"namespace": "wardle", "name": "api"})
    del service["spec"]["url"]
    created = await api.post(APISERVICES, service)
    assert created.status == 201 and created.body["spec"]["service"]["port"] == 443  # defaulted
    assert created.body.get("status", {}) == {}  # a user's status is dropped; the server writes it


async def test_status_is_written_through_its_subresource_only(api: Client) -> None:
    local = api_service("st.example.com", "v1", "")
    del local["spec"]["url"]  # a Local one: nothing writes its status meanwhile
    created = (await api.post(APISERVICES, local)).body
    assert (available(created) or {}).get("reason") == "Local"
    created["status"] = {"conditions": [{"type": "Available", "status": "False", "reason": "Faked"}]}
    created["spec"]["versionPriority"] = 20
    updated = (await api.put(f"{APISERVICES}/v1.st.example.com", created)).body
    assert updated["spec"]["versionPriority"] == 20 and (available(updated) or {}).get("reason") == "Local"
    updated["status"] = {"conditions": [{"type": "Available", "status": "Maybe"}]}
    reply = await api.put(f"{APISERVICES}/v1.st.example.com/status", updated)
    assert reply.status == 422 and reply.body["details"]["causes"][0]["field"] == "status.conditions[0].status"


# -- proxying to a kplane backend ---------------------------------------------------------------------
async def test_crud_watch_discovery_and_openapi_through_the_aggregator(backend: Served, main_api: Client) -> None:
    api = main_api
    assert (await api.get(LEASES)).status == 404  # not served here
    await register_coordination(api, backend)

    created = await api.post(LEASES, lease("l1"))
    assert created.status == 201 and created.body["metadata"]["namespace"] == "team", created
    async with aiohttp.ClientSession(base_url=backend.url) as session:  # it is the backend's object
        direct = Client(session)
        assert (await direct.get(f"{LEASES}/l1")).body["metadata"]["uid"] == created.body["metadata"]["uid"]

        # a watch streams through the proxy, event by event
        async with api.session.get(LEASES, params={"watch": "true", "resourceVersion": created.body["metadata"]["resourceVersion"]}) as stream:
            assert stream.status == 200
            patched = await direct.patch(f"{LEASES}/l1", {"spec": {"holderIdentity": "you"}})
            assert patched.status == 200
            line = await asyncio.wait_for(stream.content.readline(), 5)
            event = json.loads(line)
            assert event["type"] == "MODIFIED" and event["object"]["spec"]["holderIdentity"] == "you"
            deleted = await api.delete(f"{LEASES}/l1")
            assert deleted.status == 200
            assert json.loads(await asyncio.wait_for(stream.content.readline(), 5))["type"] == "DELETED"

    listed = await api.get("/apis/coordination.k8s.io/v1/leases", headers={"Accept": TABLE})
    assert listed.status == 200 and listed.body["kind"] == "Table" and listed.body["rows"] == []
    assert (await api.post(LEASES, {**lease("bad"), "spec": {"leaseDurationSeconds": -1}})).status == 422

    # discovery: legacy, per group, per group-version (proxied), aggregated
    groups = (await api.get("/apis")).body["groups"]
    names = [g["name"] for g in groups]
    assert names[0] == "apiregistration.k8s.io" and "coordination.k8s.io" in names
    assert names.index("apps") < names.index("coordination.k8s.io")  # 17800 before 16500
    group = (await api.get("/apis/coordination.k8s.io")).body
    assert group["kind"] == "APIGroup" and group["preferredVersion"]["groupVersion"] == "coordination.k8s.io/v1"
    resources = (await api.get("/apis/coordination.k8s.io/v1")).body
    assert resources["kind"] == "APIResourceList" and [r["name"] for r in resources["resources"]] == ["leases"]
    aggregated = await api.get("/apis", headers={"Accept": AGGREGATED})
    assert aggregated.headers["Content-Type"] == AGGREGATED
    item = next(i for i in aggregated.body["items"] if i["metadata"]["name"] == "coordination.k8s.io")
    assert item["versions"][0]["version"] == "v1" and item["versions"][0]["freshness"] == "Current"
    leases = item["versions"][0]["resources"][0]
    assert leases["resource"] == "leases" and leases["scope"] == "Namespaced"
    assert leases["responseKind"] == {"group": "coordination.k8s.io", "version": "v1", "kind": "Lease"}

    # OpenAPI: the backend's URL in the index, the document proxied with its caching headers
    index = (await api.get("/openapi/v3")).body["paths"]
    url = index["apis/coordination.k8s.io/v1"]["serverRelativeURL"]
    async with aiohttp.ClientSession(base_url=backend.url) as session:
        assert (await Client(session).get("/openapi/v3")).body["paths"]["apis/coordination.k8s.io/v1"]["serverRelativeURL"] == url
    assert "apis/apps/v1" in index
    document = await api.get(url)
    assert document.status == 200 and "io.k8s.api.coordination.v1.Lease" in document.body["components"]["schemas"]
    assert document.headers["Cache-Control"] == "public, immutable"
    stale = await api.request("GET", "/openapi/v3/apis/coordination.k8s.io/v1?hash=0", headers={})
    assert stale.status == 200  # the redirect to the current hash was followed, through the proxy too

    # deleting the APIService stops the proxying
    assert (await api.delete(f"{APISERVICES}/v1.coordination.k8s.io")).status == 200
    await eventually(lambda: _status_is(api, LEASES, 404))
    assert "coordination.k8s.io" not in [g["name"] for g in (await api.get("/apis")).body["groups"]]


async def _status_is(api: Client, path: str, status: int) -> bool:
    return (await api.get(path)).status == status


async def test_backend_down_is_503_and_unavailable_until_it_is_back(tmp_path: Path) -> None:
    port = free_port()
    backend_dir = tmp_path / "backend"
    args = ("--plugins", "coordination", "--no-controllers")
    process = start(backend_dir, *args, port=port)
    url = f"http://127.0.0.1:{port}"
    try:
        wait_ready(url, process)
        with serving(tmp_path / "main", "--disable-plugin", "coordination", "--no-controllers",
                     "--apiservice-probe-interval", "1") as main:
            async with aiohttp.ClientSession(base_url=main.url) as session:
                api = Client(session)
                created = await api.post(APISERVICES, api_service("coordination.k8s.io", "v1", url))
                assert created.status == 201
                await wait_available(api, "v1.coordination.k8s.io")
                assert (await api.post(LEASES, lease("kept"))).status == 201

                process.kill()
                process.communicate()
                began = time.monotonic()
                reply = await api.get(f"{LEASES}/kept")
                assert time.monotonic() - began < 2
                assert reply.status == 503 and reply.body["kind"] == "Status", reply
                assert reply.body["reason"] == "ServiceUnavailable" and "v1.coordination.k8s.io" in reply.body["message"]
                cond = await wait_available(api, "v1.coordination.k8s.io", "False")
                assert cond["reason"] == "FailedDiscoveryCheck"
                assert cond["message"].startswith(f"failing or missing response from {url}/apis/coordination.k8s.io/v1: ")
                assert "connection refused" in cond["message"]

                async def refused_without_trying() -> bool:  # once this server's informer has the condition too
                    reply = await api.get(f"{LEASES}/kept")
                    assert reply.status == 503
                    return 'the APIService "v1.coordination.k8s.io" is not available: FailedDiscoveryCheck' in reply.body["message"]
                await eventually(refused_without_trying, 5)
                table = (await api.get(f"{APISERVICES}/v1.coordination.k8s.io", headers={"Accept": TABLE})).body
                assert table["rows"][0]["cells"][1:3] == [url, "False (FailedDiscoveryCheck)"]
                aggregated = (await api.get("/apis", headers={"Accept": AGGREGATED})).body
                item = next(i for i in aggregated["items"] if i["metadata"]["name"] == "coordination.k8s.io")
                assert item["versions"] == [{"version": "v1", "freshness": "Stale", "resources": []}]

                process = start(backend_dir, *args, port=port)
                wait_ready(url, process)
                back = await wait_available(api, "v1.coordination.k8s.io", "True", timeout=20)
                assert (back["reason"], back["message"]) == ("Passed", "all checks passed")
                assert (await api.get(f"{LEASES}/kept")).status == 200
    finally:
        if process.poll() is None:
            process.terminate()
            process.communicate(timeout=10)


# -- what a backend receives: a tiny aiohttp server of the test's own ---------------------------------
class RecordingBackend:
    """Serves any group/version: discovery, an echo of the request, a slow stream, and a request
    that never answers; it records the headers of every request."""

    GROUP = "probe.test.kplane.io"

    def __init__(self) -> None:
        self.seen: list[tuple[str, dict[str, list[str]]]] = []
        self.stream_closed = asyncio.Event()
        self.release = asyncio.Event()
        self.url = ""
        self._runner: web.AppRunner | None = None

    async def start(self, tls: ssl.SSLContext | None = None) -> None:
        app = web.Application(middlewares=[self.record])
        base = "/apis/{group}/{version}"
        app.router.add_get(base, self.discovery)
        app.router.add_route("*", base + "/echo", self.echo)
        app.router.add_get(base + "/stream", self.stream)
        app.router.add_get(base + "/hang", self.hang)
        self._runner = web.AppRunner(app, handler_cancellation=True)
        await self._runner.setup()
        site = web.TCPSite(self._runner, "127.0.0.1", 0, ssl_context=tls)
        await site.start()
        self.url = f"{'https' if tls else 'http'}://127.0.0.1:{self._runner.addresses[0][1]}"

    async def stop(self) -> None:
        if self._runner is not None:
            await self._runner.cleanup()

    @web.middleware
    async def record(self, request: web.Request, handler: Any) -> web.StreamResponse:
        headers: dict[str, list[str]] = {}
        for key, value in request.headers.items():
            headers.setdefault(key.lower(), []).append(value)
        self.seen.append((request.path, headers))
        return await handler(request)

    async def discovery(self, request: web.Request) -> web.Response:
        gv = f"{request.match_info['group']}/{request.match_info['version']}"
        return web.json_response({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": gv, "resources": [
            {"name": "echoes", "singularName": "echo", "namespaced": False, "kind": "Echo", "verbs": ["get", "create"]}]})

    async def echo(self, request: web.Request) -> web.Response:
        body = await request.read()
        return web.json_response({"method": request.method, "path": request.raw_path, "body": body.decode()},
                                 headers={"X-Backend": "yes", "Set-Cookie": "a=b"})

    async def stream(self, request: web.Request) -> web.StreamResponse:
        response = web.StreamResponse(headers={"Content-Type": "application/json"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        try:
            await response.write(b'{"chunk":1}\n')
            await self.release.wait()  # the client gets chunk 1 now, unbuffered
            await response.write(b'{"chunk":2}\n')
            await asyncio.sleep(3600)
        finally:
            self.stream_closed.set()
        return response

    async def hang(self, request: web.Request) -> web.Response:
        await asyncio.sleep(3600)
        return web.Response()


def _identity_headers(headers: dict[str, list[str]]) -> list[str]:
    return [h for h in headers if h.startswith(("x-remote-", "impersonate-")) or h == "authorization"]


@pytest.fixture
async def recording() -> AsyncIterator[RecordingBackend]:
    backend = RecordingBackend()
    await backend.start()
    try:
        yield backend
    finally:
        await backend.stop()


@pytest.fixture
async def aggregator(request: pytest.FixtureRequest, tmp_path: Path) -> AsyncIterator[APIServer]:
    settings = {"apiregistration": {"backends": True, "probe_interval": 1, "response_timeout": 1.5}}
    runtime = request.node.get_closest_marker("runtime_config")
    server = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=False, plugin_settings=settings,
                                     runtime_config=parse_runtime_config(runtime.args[0]) if runtime else {}))
    await server.start()
    try:
        yield server
    finally:
        await server.stop()


async def test_front_proxy_headers_streaming_and_timeouts(recording: RecordingBackend, aggregator: APIServer) -> None:
    async with aiohttp.ClientSession(base_url=aggregator.url) as session:
        api = Client(session)
        created = await api.post(APISERVICES, api_service(RecordingBackend.GROUP, "v1", recording.url))
        assert created.status == 201
        await wait_available(api, f"v1.{RecordingBackend.GROUP}")
        base = f"/apis/{RecordingBackend.GROUP}/v1"

        reply = await api.post(f"{base}/echo?x=1&y=a%26b", {"hello": "world"}, headers={
            "X-Remote-User": "mallory", "X-Remote-Group": "system:masters", "X-Remote-Extra-Scopes": "all",
            "X-Remote-Uid": "0", "Impersonate-User": "admin", "Impersonate-Group": "system:masters",
            "Impersonate-Extra-Scopes": "all", "Authorization": "Basic a3BsYW5lOnNlY3JldA==", "Connection": "keep-alive, X-Private",
            "X-Private": "hop", "X-Custom": "kept"})
        assert reply.status == 200 and reply.headers["X-Backend"] == "yes"
        assert reply.body == {"method": "POST", "path": f"{base}/echo?x=1&y=a%26b", "body": '{"hello": "world"}'}
        path, seen = recording.seen[-1]
        assert path == f"{base}/echo"
        # a plain-http backend gets no identity at all, neither the client's claims nor the server's own
        assert _identity_headers(seen) == [] and "x-private" not in seen
        assert seen["x-custom"] == ["kept"] and seen["content-type"] == ["application/json"]
        assert seen["x-forwarded-for"] == ["127.0.0.1"]
        probes = [h for p, h in recording.seen if p == base]  # the availability checks
        assert probes and all(_identity_headers(h) == [] for h in probes)
        assert (await api.get("/apis", headers={"Accept": AGGREGATED})).status == 200  # asks the backend for /apis
        asked = [h for p, h in recording.seen if p == "/apis"]
        assert asked and all(_identity_headers(h) == [] for h in asked)

        # no buffering: chunk 1 arrives while the backend still holds chunk 2; leaving closes the backend's side
        async with session.get(f"{base}/stream") as stream:
            assert stream.status == 200
            assert json.loads(await asyncio.wait_for(stream.content.readline(), 5)) == {"chunk": 1}
            recording.release.set()
            assert json.loads(await asyncio.wait_for(stream.content.readline(), 5)) == {"chunk": 2}
            stream.close()
        await asyncio.wait_for(recording.stream_closed.wait(), 5)

        began = time.monotonic()
        reply = await api.get(f"{base}/hang")
        assert reply.status == 503 and "did not answer within 1.5s" in reply.body["message"]
        assert time.monotonic() - began < 4


@pytest.mark.runtime_config("apps/v1beta2=true")
async def test_proxied_group_wins_over_a_local_one(recording: RecordingBackend, aggregator: APIServer) -> None:
    """apps is served here; an APIService with a backend for apps/v1beta2 takes it over, as a
    non-Local APIService replaces a built-in group/version in Kubernetes."""
    async with aiohttp.ClientSession(base_url=aggregator.url) as session:
        api = Client(session)
        patched = await api.patch(f"{APISERVICES}/v1beta2.apps", {"spec": {"url": recording.url, "versionPriority": 1}})
        assert patched.status == 200, patched
        await eventually(lambda: _status_is(api, "/apis/apps/v1beta2/echo", 200))
        assert (await api.get("/apis/apps/v1beta2/deployments")).status == 404  # the backend has none
        assert (await api.get("/apis/apps/v1/deployments")).status == 200  # still ours
        versions = (await api.get("/apis/apps")).body["versions"]
        assert [v["version"] for v in versions] == ["v1", "v1beta2"]

        # back to Local: served here again (a merge patch: the status may be written meanwhile)
        assert (await api.patch(f"{APISERVICES}/v1beta2.apps", {"spec": {"url": None}})).status == 200
        await eventually(lambda: _status_is(api, "/apis/apps/v1beta2/deployments", 200))
        assert (await wait_available(api, "v1beta2.apps", reason="Local"))["message"] == "Local APIServices are always available"


# -- with --no-enable-apiservice-backends: no backend at all -------------------------------------------
COORDINATION = f"{APISERVICES}/v1.coordination.k8s.io"
DEFAULT_LEASES = "/apis/coordination.k8s.io/v1/namespaces/default/leases"


def _refused(reply: Any, field: str) -> bool:
    causes = reply.body.get("details", {}).get("causes") or [{}]
    return (reply.status == 422 and reply.body["reason"] == "Invalid" and NO_BACKENDS_FLAG in reply.body["message"]
            and (causes[0].get("field"), causes[0].get("reason")) == (field, "FieldValueForbidden"))


@pytest.mark.no_apiservice_backends
async def test_without_the_flag_no_api_service_gets_a_backend(api: Client) -> None:
    """A server without backends: an APIService naming a URL or a Service is refused with nothing stored,
    and a group/version served here cannot be handed to another server."""
    metadata = api_service("meta.example.com", "v1", "http://169.254.169.254/latest")
    reply = await api.post(APISERVICES, metadata)
    assert _refused(reply, "spec.url"), reply
    assert reply.body["message"].startswith('APIService.apiregistration.k8s.io "v1.meta.example.com" is invalid: '
                                            "spec.url: Forbidden: APIService backends are off")
    assert (await api.post(APISERVICES, metadata, params={"dryRun": "All"})).status == 422
    by_service = api_service("svc.example.com", "v1", "", service={"namespace": "default", "name": "anywhere"})
    del by_service["spec"]["url"]
    assert _refused(await api.post(APISERVICES, by_service), "spec.service")
    assert (await api.get(f"{APISERVICES}/v1.meta.example.com")).status == 404
    assert (await api.get(f"{APISERVICES}/v1.svc.example.com")).status == 404

    before = (await api.get(COORDINATION)).body
    refused = await api.patch(COORDINATION, {"spec": {"url": "http://127.0.0.1:1"}})
    assert _refused(refused, "spec.url"), refused
    assert "coordination.k8s.io/v1 is served by this server itself" in refused.body["message"]
    assert _refused(await api.patch(COORDINATION, {"spec": {"service": {"namespace": "default", "name": "x"}}}), "spec.service")
    replaced = {**before, "spec": {**before["spec"], "url": "http://127.0.0.1:1"}}
    assert _refused(await api.put(COORDINATION, replaced), "spec.url")
    after = (await api.get(COORDINATION)).body
    assert after["spec"] == before["spec"] and after["metadata"]["resourceVersion"] == before["metadata"]["resourceVersion"]
    assert (available(after) or {}).get("reason") == "Local"
    assert (await api.post(DEFAULT_LEASES, lease("still-here"))).status == 201  # Leases are still served here
    assert (await api.get(f"{DEFAULT_LEASES}/still-here")).body["spec"]["holderIdentity"] == "me"
    # what stays allowed: Local APIServices, and changing one that has no backend
    local = api_service("local.example.com", "v1", "")
    del local["spec"]["url"]
    assert (await api.post(APISERVICES, local)).status == 201
    assert (await api.patch(COORDINATION, {"metadata": {"annotations": {"a": "b"}}})).status == 200


def test_kubectl_without_the_flag_is_told_which_flag(tmp_path: Path) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    with serving(tmp_path / "data", "--no-controllers", NO_BACKENDS_FLAG) as served:
        env = {**os.environ, "KUBECONFIG": str(served.kubeconfig), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
        _refused_by_kubectl(Kubectl(env, tmp_path))


def _refused_by_kubectl(kubectl: Kubectl) -> None:
    refused = kubectl.run("create", "-f", "-", stdin=APISERVICE_YAML.format(url="http://169.254.169.254"), check=False)
    assert refused.returncode == 1
    assert 'The APIService "v1.coordination.k8s.io" is invalid: spec.url: Forbidden: ' in refused.stderr
    assert NO_BACKENDS_FLAG in refused.stderr
    assert kubectl.json("get", "apiservice", "v1.coordination.k8s.io")["spec"].get("url") is None


async def test_backends_stored_before_a_restart_without_the_flag_are_not_proxied(
        recording: RecordingBackend, tmp_path: Path) -> None:
    name = f"v1.{RecordingBackend.GROUP}"
    base = f"/apis/{RecordingBackend.GROUP}/v1"

    async def run(backends: bool) -> APIServer:
        settings = {"apiregistration": {"backends": backends, "probe_interval": 1}}
        server = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=False, plugin_settings=settings))
        await server.start()
        return server

    server = await run(backends=True)
    try:
        async with aiohttp.ClientSession(base_url=server.url) as session:
            api = Client(session)
            assert (await api.post(APISERVICES, api_service(RecordingBackend.GROUP, "v1", recording.url))).status == 201
            assert (await api.patch(COORDINATION, {"spec": {"url": recording.url}})).status == 200
            await wait_available(api, name)
            await wait_available(api, "v1.coordination.k8s.io", reason="Passed")
    finally:
        await server.stop()
    asked = len(recording.seen)

    server = await run(backends=False)
    try:
        async with aiohttp.ClientSession(base_url=server.url) as session:
            api = Client(session)
            cond = await wait_available(api, name, "False", reason="BackendsDisabled")
            assert cond["message"] == f"APIService backends are off: the server was started with {NO_BACKENDS_FLAG}"

            async def refused() -> bool:  # once this server's informer has the condition too
                reply = await api.get(f"{base}/echo")
                assert reply.status == 503, reply
                return "is not available: BackendsDisabled" in reply.body["message"]
            await eventually(refused, 5)
            aggregated = (await api.get("/apis", headers={"Accept": AGGREGATED})).body
            item = next(i for i in aggregated["items"] if i["metadata"]["name"] == RecordingBackend.GROUP)
            assert item["versions"] == [{"version": "v1", "freshness": "Stale", "resources": []}]
            # the built-in group/version that was pointed away is Local again, as on every start
            coordination = (await api.get(COORDINATION)).body
            assert "url" not in coordination["spec"] and (available(coordination) or {}).get("reason") == "Local"
            assert (await api.post(DEFAULT_LEASES, lease("served-here"))).status == 201
            # the stored one may be changed as long as its backend is not; a new backend is refused
            assert (await api.patch(f"{APISERVICES}/{name}", {"metadata": {"labels": {"x": "y"}}})).status == 200
            assert _refused(await api.patch(f"{APISERVICES}/{name}", {"spec": {"url": "http://127.0.0.1:1"}}), "spec.url")
    finally:
        await server.stop()
    assert len(recording.seen) == asked  # nothing reached the backend after the restart


# -- redirects are never followed -----------------------------------------------------------------------
@contextlib.asynccontextmanager
async def loopback_server(handler: Any) -> AsyncIterator[str]:
    """An aiohttp server on a free loopback port answering every request with ``handler``."""
    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", handler)
    runner = web.AppRunner(app)
    await runner.setup()
    await web.TCPSite(runner, "127.0.0.1", 0).start()
    try:
        yield "http://127.0.0.1:%d" % runner.addresses[0][1]
    finally:
        await runner.cleanup()


async def test_redirects_from_a_backend_are_not_followed(aggregator: APIServer) -> None:
    """A backend that answers its v1 discovery and redirects everything else to another address (a
    loopback stand-in for 169.254.169.254): proxied requests get kube-aggregator's 502, discovery
    and OpenAPI do without what it redirected, its v2 fails the availability check, and the other
    address is never asked (the test's client follows redirects: a relayed one would reach it)."""
    group = "redirect.test.kplane.io"
    hits: list[str] = []

    async def metadata(request: web.Request) -> web.Response:
        hits.append(request.path)
        return web.json_response({"secret": "credentials"})

    async with loopback_server(metadata) as target:
        async def redirecting(request: web.Request) -> web.Response:
            if request.path == f"/apis/{group}/v1":
                return web.json_response({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": f"{group}/v1",
                                          "resources": [{"name": "things", "singularName": "thing", "namespaced": False,
                                                         "kind": "Thing", "verbs": ["get", "create"]}]})
            raise web.HTTPFound(f"{target}/latest/meta-data{request.path}")

        async with loopback_server(redirecting) as backend, aiohttp.ClientSession(base_url=aggregator.url) as session:
            api = Client(session)
            assert (await api.post(APISERVICES, api_service(group, "v1", backend))).status == 201
            assert (await api.post(APISERVICES, api_service(group, "v2", backend))).status == 201
            await wait_available(api, f"v1.{group}")
            cond = await wait_available(api, f"v2.{group}", "False")
            assert (cond["reason"], cond["message"]) == ("FailedDiscoveryCheck", f"bad status from {backend}/apis/{group}/v2: 302")

            for method in ("GET", "POST", "DELETE"):
                reply = await api.request(method, f"/apis/{group}/v1/things", {} if method == "POST" else None)
                assert (reply.status, reply.body) == (502, REDIRECT_REFUSED), reply
                assert "Location" not in reply.headers
            reply = await api.request("GET", f"/openapi/v3/apis/{group}/v1", headers={})
            assert (reply.status, reply.body) == (502, REDIRECT_REFUSED)
            aggregated = (await api.get("/apis", headers={"Accept": AGGREGATED})).body  # its /apis redirects
            item = next(i for i in aggregated["items"] if i["metadata"]["name"] == group)
            versions = {v["version"]: v for v in item["versions"]}
            assert (versions["v1"]["freshness"], versions["v2"]["freshness"]) == ("Current", "Stale")
            assert [r["resource"] for r in versions["v1"]["resources"]] == ["things"]  # from its legacy list
            assert f"apis/{group}/v1" not in (await api.get("/openapi/v3")).body["paths"]
    assert hits == []


# -- kplane serve --plugins --------------------------------------------------------------------------
def test_unknown_plugin_names_are_a_clear_error(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "kplane.core.cli", "serve", "--plugins", "coordination,nope", "--port", "0",
                           "--data-dir", str(tmp_path)], capture_output=True, text=True, timeout=30)
    assert done.returncode == 1
    assert "kplane: unknown plugin(s) 'nope'; installed: " in done.stderr and "coordination" in done.stderr


async def test_a_server_of_one_group_needs_no_namespaces(backend: Served) -> None:
    async with aiohttp.ClientSession(base_url=backend.url) as session:
        api = Client(session)
        assert [g["name"] for g in (await api.get("/apis")).body["groups"]] == ["coordination.k8s.io"]
        assert (await api.get("/api/v1/namespaces")).status == 404
        assert (await api.post("/apis/coordination.k8s.io/v1/namespaces/nowhere/leases", lease("x"))).status == 201


# -- kubectl through the aggregator --------------------------------------------------------------------
@pytest.fixture
def kubectl_main(main: Served, tmp_path: Path) -> Kubectl:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    env = {**os.environ, "KUBECONFIG": str(main.kubeconfig), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    return Kubectl(env, tmp_path)


APISERVICE_YAML = """
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1.coordination.k8s.io
spec:
  group: coordination.k8s.io
  version: v1
  url: {url}
  groupPriorityMinimum: 16500
  versionPriority: 15
"""
LEASE_YAML = """
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: lock, namespace: default}
spec: {holderIdentity: me, leaseDurationSeconds: 15}
"""


def test_kubectl_through_the_aggregator(backend: Served, kubectl_main: Kubectl) -> None:
    kubectl = kubectl_main
    assert kubectl.run("create", "-f", "-", stdin=APISERVICE_YAML.format(url=backend.url)).stdout.strip() == \
        "apiservice.apiregistration.k8s.io/v1.coordination.k8s.io created"
    kubectl.run("wait", "--for=condition=Available", "apiservice/v1.coordination.k8s.io", "--timeout=20s")
    table = kubectl.run("get", "apiservices").stdout.splitlines()
    assert table[0].split() == ["NAME", "SERVICE", "AVAILABLE", "AGE"]
    row = next(line.split() for line in table if line.startswith("v1.coordination.k8s.io "))
    assert row[1:3] == [backend.url, "True"]
    assert next(line.split() for line in table if line.startswith("v1.apps "))[1:3] == ["Local", "True"]
    assert "leases" in kubectl.run("api-resources", "--api-group=coordination.k8s.io").stdout
    assert kubectl.run("create", "-f", "-", stdin=LEASE_YAML).stdout.strip() == "lease.coordination.k8s.io/lock created"
    rows = kubectl.run("get", "leases").stdout.splitlines()
    assert rows[0].split() == ["NAME", "HOLDER", "AGE"] and rows[1].split()[:2] == ["lock", "me"]
    assert kubectl.json("get", "lease", "lock")["spec"]["leaseDurationSeconds"] == 15
    assert "holderIdentity" in kubectl.run("explain", "lease.spec").stdout
    invalid = kubectl.run("create", "-f", "-", stdin=LEASE_YAML.replace("lock", "other").replace("15}", "-1}"), check=False)
    assert invalid.returncode == 1 and "spec.leaseDurationSeconds: Invalid value: -1" in invalid.stderr
    assert kubectl.run("delete", "lease", "lock").stdout.strip() == 'lease.coordination.k8s.io "lock" deleted'
    assert "No resources found" in kubectl.run("get", "leases").stderr
    bad = kubectl.run("create", "-f", "-", stdin=APISERVICE_YAML.format(url=backend.url).replace(
        "name: v1.coordination.k8s.io", "name: v2.coordination.k8s.io"), check=False)
    assert bad.returncode == 1
    assert 'metadata.name: Invalid value: "v2.coordination.k8s.io": must be `spec.version+"."+spec.group`: ' \
           '"v1.coordination.k8s.io"' in bad.stderr


# -- sample-apiserver's wardle group as a server of its own, behind the aggregator ----------------------
WARDLE_APISERVICES = """
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1alpha1.wardle.example.com
spec:
  group: wardle.example.com
  version: v1alpha1
  url: {url}
  groupPriorityMinimum: 1000
  versionPriority: 15
---
apiVersion: apiregistration.k8s.io/v1
kind: APIService
metadata:
  name: v1beta1.wardle.example.com
spec:
  group: wardle.example.com
  version: v1beta1
  url: {url}
  groupPriorityMinimum: 1000
  versionPriority: 20
"""
FISCHER = """
apiVersion: wardle.example.com/v1alpha1
kind: Fischer
metadata: {name: my-first-fischer}
disallowedFlunders: [my-banned-flunder]
"""
FLUNDERS = """
apiVersion: wardle.example.com/v1alpha1
kind: Flunder
metadata:
  name: my-first-flunder
  labels: {sample-label: "true"}
---
apiVersion: wardle.example.com/v1beta1
kind: Flunder
metadata: {name: my-second-flunder}
spec: {referenceType: Flunder, flunderReference: my-first-flunder}
"""


def _wardle_installed() -> bool:
    from importlib.metadata import entry_points

    return any(ep.name == "sample_api" for ep in entry_points(group="kplane.plugins"))


@pytest.mark.skipif(not _wardle_installed(), reason="the sample_api (wardle.example.com) plugin is not installed")
def test_wardle_served_by_its_own_server_through_the_aggregator(tmp_path: Path) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    with serving(tmp_path / "wardle", "--plugins", "sample_api", "--no-controllers") as wardle, \
            serving(tmp_path / "main", "--disable-plugin", "sample_api", "--no-controllers",
                    "--apiservice-probe-interval", "1") as main:
        env = {**os.environ, "KUBECONFIG": str(main.kubeconfig), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
        kubectl = Kubectl(env, tmp_path)
        assert kubectl.run("create", "-f", "-", stdin=WARDLE_APISERVICES.format(url=wardle.url)).stdout.split() == [
            "apiservice.apiregistration.k8s.io/v1alpha1.wardle.example.com", "created",
            "apiservice.apiregistration.k8s.io/v1beta1.wardle.example.com", "created"]
        kubectl.run("wait", "--for=condition=Available", "apiservice/v1alpha1.wardle.example.com",
                    "apiservice/v1beta1.wardle.example.com", "--timeout=20s")
        resources = kubectl.run("api-resources", "--api-group=wardle.example.com").stdout
        assert "flunders" in resources and "fischers" in resources
        assert "wardle.example.com/v1beta1" in resources  # the preferred version: versionPriority 20

        assert kubectl.run("create", "-f", "-", stdin=FISCHER).stdout.strip() == \
            "fischer.wardle.example.com/my-first-fischer created"
        assert kubectl.run("create", "-f", "-", stdin=FLUNDERS).stdout.split() == [
            "flunder.wardle.example.com/my-first-flunder", "created", "flunder.wardle.example.com/my-second-flunder", "created"]
        rows = kubectl.run("get", "flunders").stdout.splitlines()
        assert rows[0].split() == ["NAME", "AGE"] and [r.split()[0] for r in rows[1:]] == ["my-first-flunder", "my-second-flunder"]
        assert kubectl.run("get", "fischers", "-o", "name").stdout.split() == ["fischer.wardle.example.com/my-first-fischer"]
        assert kubectl.run("get", "flunders", "-l", "sample-label=true", "-o", "name").stdout.split() == [
            "flunder.wardle.example.com/my-first-flunder"]

        # conversion across versions, over HTTP through the proxy: written as v1beta1, read as v1alpha1
        alpha = kubectl.json("get", "flunders.v1alpha1.wardle.example.com", "my-second-flunder")
        assert alpha["apiVersion"] == "wardle.example.com/v1alpha1"
        assert alpha["spec"] == {"reference": "my-first-flunder", "referenceType": "Flunder"}
        beta = kubectl.json("get", "flunders.v1beta1.wardle.example.com", "my-second-flunder")
        assert beta["spec"]["flunderReference"] == "my-first-flunder"

        # BanFlunder refuses, through the proxy (its Fischer informer may need a moment)
        banned = FLUNDERS.split("---")[0].replace("my-first-flunder", "my-banned-flunder")
        deadline = time.monotonic() + 10
        while True:
            refused = kubectl.run("create", "-f", "-", stdin=banned, check=False)
            if refused.returncode != 0 or time.monotonic() > deadline:
                break
            kubectl.run("delete", "flunder", "my-banned-flunder")
            time.sleep(0.2)
        assert refused.returncode == 1
        assert 'Error from server (Forbidden): error when creating "STDIN": flunders.wardle.example.com "my-banned-flunder" ' \
               "is forbidden: this name may not be used, please change the resource name" in refused.stderr

        # the objects live in the wardle server, not in the aggregator
        with urllib_get(f"{wardle.url}/apis/wardle.example.com/v1alpha1/namespaces/default/flunders") as listed:
            assert {f["metadata"]["name"] for f in listed["items"]} == {"my-first-flunder", "my-second-flunder"}
        assert kubectl.run("delete", "flunders", "--all").stdout.split().count("deleted") == 2
        assert kubectl.run("delete", "fischer", "my-first-fischer").stdout.strip() == \
            'fischer.wardle.example.com "my-first-fischer" deleted'
        assert "No resources found" in kubectl.run("get", "flunders").stderr


@contextlib.contextmanager
def urllib_get(url: str) -> Iterator[Any]:
    with urllib.request.urlopen(url, timeout=5) as reply:
        yield json.loads(reply.read())


@pytest.fixture
async def recording_tls() -> AsyncIterator[tuple[RecordingBackend, str]]:
    """A recording backend over https, its certificate valid for ``rec.default.svc`` only, and
    the caBundle (base64) of the CA that signed it."""
    ca = new_ca("test-ca")
    served = issue(ca, "rec", sans=SubjectAltNames.parse(["rec.default.svc"]), server=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    load_cert_chain(context, served.cert_pem(), served.key_pem())
    backend = RecordingBackend()
    await backend.start(context)
    try:
        yield backend, base64.b64encode(ca.cert_pem()).decode()
    finally:
        await backend.stop()


async def test_backend_behind_a_service(recording_tls: tuple[RecordingBackend, str], aggregator: APIServer) -> None:
    """``spec.service`` resolves through a core/v1 Service: ExternalName to externalName:port,
    others to clusterIP:port when the port is one of the Service's; always over https, the
    certificate verified with caBundle for ``<name>.<namespace>.svc``."""
    recording, ca_bundle = recording_tls
    port = int(recording.url.rsplit(":", 1)[1])
    services = "/api/v1/namespaces/default/services"
    async with aiohttp.ClientSession(base_url=aggregator.url) as session:
        api = Client(session)
        registered = api_service("svc.test.kplane.io", "v1", "", service={"namespace": "default", "name": "rec", "port": port})
        del registered["spec"]["url"]
        registered["spec"]["caBundle"] = ca_bundle
        assert (await api.post(APISERVICES, registered)).status == 201
        missing = await wait_available(api, "v1.svc.test.kplane.io", "False")
        assert (missing["reason"], missing["message"]) == ("ServiceNotFound", 'service/rec in "default" is not present')
        reply = await api.get("/apis/svc.test.kplane.io/v1/echo")
        assert reply.status == 503 and 'service/rec in \\"default\\" is not present' in json.dumps(reply.body)

        external = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "rec"},
                    "spec": {"type": "ExternalName", "externalName": "127.0.0.1"}}
        assert (await api.post(services, external)).status == 201
        await wait_available(api, "v1.svc.test.kplane.io")
        assert (await api.get("/apis/svc.test.kplane.io/v1/echo")).body["path"] == "/apis/svc.test.kplane.io/v1/echo"
        table = (await api.get(f"{APISERVICES}/v1.svc.test.kplane.io", headers={"Accept": TABLE})).body
        assert table["rows"][0]["cells"][1:3] == ["default/rec", "True"]

        assert (await api.delete(f"{services}/rec")).status == 200
        cluster = {"apiVersion": "v1", "kind": "Service", "metadata": {"name": "rec"},
                   "spec": {"clusterIP": "127.0.0.1", "ports": [{"port": port + 1}]}}
        assert (await api.post(services, cluster)).status == 201
        wrong = await wait_available(api, "v1.svc.test.kplane.io", "False", reason="ServicePortError")
        assert (wrong["reason"], wrong["message"]) == ("ServicePortError", f'service/rec in "default" is not listening on port {port}')
        svc = (await api.get(f"{services}/rec")).body
        svc["spec"]["ports"] = [{"port": port}]
        assert (await api.put(f"{services}/rec", svc)).status == 200
        await wait_available(api, "v1.svc.test.kplane.io")

        # without the CA the certificate is not believed
        registered = (await api.get(f"{APISERVICES}/v1.svc.test.kplane.io")).body
        del registered["spec"]["caBundle"]
        assert (await api.put(f"{APISERVICES}/v1.svc.test.kplane.io", registered)).status == 200
        untrusted = await wait_available(api, "v1.svc.test.kplane.io", "False")
        assert untrusted["message"].endswith("tls: failed to verify certificate: x509: certificate signed by unknown authority")


# -- TLS failures are told in plain words -------------------------------------------------------------
@pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl makes the certificate")
async def test_tls_failures_are_plain_text(aggregator: APIServer, tmp_path: Path) -> None:
    """A backend whose certificate nobody signed we trust, and a plain-HTTP backend named with an
    https URL: the Available condition and the proxy's 503 say what Go's TLS stack would say, with
    no Python text (``_ssl.c``, ``[SSL: ...]``, exception names or argument tuples)."""
    key, cert = tmp_path / "key.pem", tmp_path / "cert.pem"
    subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes",
                    "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                    "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(cert, key)

    async def answer(request: web.Request) -> web.Response:
        return web.json_response({"kind": "APIResourceList", "apiVersion": "v1", "groupVersion": request.path, "resources": []})

    app = web.Application()
    app.router.add_route("*", "/{tail:.*}", answer)
    runner = web.AppRunner(app)
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0, ssl_context=context)
    await site.start()
    tls_url = "https://127.0.0.1:%d" % runner.addresses[0][1]
    try:
        async with loopback_server(answer) as plain, aiohttp.ClientSession(base_url=aggregator.url) as session:
            api = Client(session)
            cases = {
                "untrusted.test.kplane.io": (tls_url, "tls: failed to verify certificate: x509: certificate signed by unknown authority"),
                "plain.test.kplane.io": (plain.replace("http://", "https://"), "tls: first record does not look like a TLS handshake"),
            }
            for group, (url, why) in cases.items():
                assert (await api.post(APISERVICES, api_service(group, "v1", url))).status == 201
                cond = await wait_available(api, f"v1.{group}", "False")
                assert cond["message"] == f"failing or missing response from {url}/apis/{group}/v1: {why}"
                reply = await api.get(f"/apis/{group}/v1/things")
                assert reply.status == 503, reply
                message = reply.body["message"]
                assert why in message, message
                for python_text in ("_ssl.c", "[SSL", "Error", "(", "Errno", "ssl:"):
                    assert python_text not in message and python_text not in cond["message"], message
    finally:
        await runner.cleanup()


def test_each_service_name_gets_its_own_tls_context() -> None:
    """Two APIServices with one caBundle: contexts (and so pooled connections) per name checked,
    so that a connection verified for one Service's name never carries the other's requests."""
    services = {f"ns/{name}": {"spec": {"clusterIP": "10.0.0.1", "ports": [{"port": 443}]}} for name in ("a", "b")}
    backends = Backends(True, SimpleNamespace(indexer=services))  # an informer's indexer, as a dict
    bundle = base64.b64encode(new_ca("ca").cert_pem()).decode()

    def backend(name: str):
        return backends.backend({"spec": {"service": {"namespace": "ns", "name": name, "port": 443}, "caBundle": bundle}})
    a, b, a_again = backend("a"), backend("b"), backend("a")
    assert (a.server_hostname, b.server_hostname) == ("a.ns.svc", "b.ns.svc")
    assert a.ssl is not b.ssl and a.ssl is a_again.ssl
