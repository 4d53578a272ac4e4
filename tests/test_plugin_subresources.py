"""A plugin's own subresources (``registry.add_subresource``), served through real HTTP and kubectl:
a streaming GET (``log``), a connecter of GET and POST (``echo``), a create of a kind of its own
(``retire``); discovery verbs and OpenAPI operations from their capabilities; 404 and 405 for
what they do not serve; conflicts and ``--skip-broken-plugins`` as for strategies.

The plugin is :mod:`tests.plugin_subresources`.
"""

from __future__ import annotations

import asyncio
import json
import logging
import os
import re
import shutil
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import yarl

import kplane.api
from kplane.api import Connecter, Creater, Exchange, Served, Strategy, errors, hookimpl
from kplane.core.registry import rest
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.registry import Registry
from kplane.core.runtime.scheme import Scheme
from kplane.core.server.handlers import ResourceEndpoints
from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client
from tests.kubectl_cli import Kubectl
from tests.plugin_subresources import GROUP, JournalEcho, JournalLog, JournalRetire, JournalsPlugin, add_kind
from tests.waiting import eventually
from tests.servers import server_config

GV = f"/apis/{GROUP}/v1"
JOURNALS = f"{GV}/namespaces/default/journals"
LINES = ["one", "two", "three"]


def journal(name: str, lines: list[str] = LINES, interval: float = 0.0) -> dict[str, Any]:
    return {"apiVersion": f"{GROUP}/v1", "kind": "Journal", "metadata": {"name": name},
            "spec": {"lines": lines, "interval": interval}}


class Rival:
    """Serves a subresource of core's pods, which it does not own."""

    @hookimpl
    def kplane_register_strategies(self, registry: Registry) -> None:
        registry.add_subresource("", "pods", "log", JournalLog(registry))


class HalfDone:
    """Adds a subresource to its own kind, then breaks in the same hook."""

    @hookimpl
    def kplane_register_types(self, scheme: Scheme, plugin_name: str) -> None:
        add_kind(scheme, plugin_name)

    @hookimpl
    def kplane_register_strategies(self, registry: Registry) -> None:
        registry.add_subresource(GROUP, "journals", "log", JournalLog(registry))
        raise RuntimeError("half done")


async def started(tmp_path: Path, *plugins: tuple[str, object], skip_broken: bool = False) -> APIServer:
    server = APIServer(server_config(data_dir=tmp_path, port=0, run_controllers=False, skip_broken_plugins=skip_broken,
                                     extra_plugins=list(plugins)))
    await server.start()
    return server


@pytest.fixture
async def journals(tmp_path: Path) -> AsyncIterator[tuple[APIServer, JournalsPlugin]]:
    plugin = JournalsPlugin()
    server = await started(tmp_path / "state", ("journals", plugin))
    try:
        yield server, plugin
    finally:
        await server.stop()


@pytest.fixture
async def japi(journals: tuple[APIServer, JournalsPlugin]) -> AsyncIterator[Client]:
    async with aiohttp.ClientSession(base_url=journals[0].url) as session:
        yield Client(session)


# -- discovery and OpenAPI ------------------------------------------------------------------------
async def test_discovery_lists_the_verbs_of_each_capability(japi: Client) -> None:
    resources = {r["name"]: r for r in (await japi.get(GV)).body["resources"]}
    assert list(resources) == ["journals", "journals/echo", "journals/log", "journals/retire"]
    assert resources["journals/log"] == {"name": "journals/log", "singularName": "", "namespaced": True, "kind": "Journal",
                                         "verbs": ["get"]}
    assert resources["journals/echo"]["verbs"] == ["create", "get"]  # as pods/exec: POST is create
    assert resources["journals/retire"] == {"name": "journals/retire", "singularName": "", "namespaced": True,
                                            "kind": "JournalRetirement", "verbs": ["create"]}
    aggregated = await japi.get("/apis", headers={"Accept": "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"})
    [group] = [g for g in aggregated.body["items"] if g["metadata"]["name"] == GROUP]
    [entry] = group["versions"][0]["resources"]
    journal_kind = {"group": GROUP, "version": "v1", "kind": "Journal"}
    assert entry["subresources"] == [
        {"subresource": "echo", "responseKind": journal_kind, "verbs": ["create", "get"]},
        {"subresource": "log", "responseKind": journal_kind, "verbs": ["get"]},
        {"subresource": "retire", "responseKind": {"group": GROUP, "version": "v1", "kind": "JournalRetirement"},
         "verbs": ["create"]},
    ]


async def test_openapi_has_connect_and_create_operations(japi: Client) -> None:
    document = (await japi.get(f"/openapi/v3{GV}")).body
    item = "/apis/journals.test.kplane.io/v1/namespaces/{namespace}/journals/{name}"
    log = document["paths"][item + "/log"]
    assert sorted(log) == ["get", "parameters"]
    assert {k: log["get"][k] for k in ("operationId", "x-kubernetes-action", "x-kubernetes-group-version-kind", "parameters")} == {
        "operationId": "connectJournalsTestKplaneIoV1GetNamespacedJournalLog",
        "x-kubernetes-action": "connect",
        "x-kubernetes-group-version-kind": {"group": GROUP, "kind": "Journal", "version": "v1"},
        "parameters": [],
    }
    assert log["get"]["responses"] == {"200": {"description": "OK", "content": {"*/*": {"schema": {"type": "string"}}}}}
    echo = document["paths"][item + "/echo"]
    assert sorted(echo) == ["get", "parameters", "post"]
    assert [echo[m]["operationId"] for m in ("get", "post")] == [
        "connectJournalsTestKplaneIoV1GetNamespacedJournalEcho", "connectJournalsTestKplaneIoV1PostNamespacedJournalEcho"]
    retire = document["paths"][item + "/retire"]
    assert sorted(retire) == ["parameters", "post"]
    post = retire["post"]
    assert (post["operationId"], post["x-kubernetes-action"]) == ("createJournalsTestKplaneIoV1NamespacedJournalRetire", "post")
    ref = post["requestBody"]["content"]["application/json"]["schema"]["$ref"]
    component = document["components"]["schemas"][ref.rsplit("/", 1)[1]]
    assert component["x-kubernetes-group-version-kind"] == [{"group": GROUP, "kind": "JournalRetirement", "version": "v1"}]


async def test_other_resources_are_described_as_before(journals: tuple[APIServer, JournalsPlugin], japi: Client,
                                                       tmp_path: Path) -> None:
    plain = await started(tmp_path / "plain")
    try:
        async with aiohttp.ClientSession(base_url=plain.url) as session:
            before = Client(session)
            for path in ("/api/v1", "/apis/apps/v1", "/openapi/v3/api/v1", "/openapi/v3/apis/apps/v1"):
                assert (await japi.get(path)).body == (await before.get(path)).body, path
    finally:
        await plain.stop()


# -- serving --------------------------------------------------------------------------------------
async def test_a_streaming_get_arrives_line_by_line(japi: Client) -> None:
    await japi.post(JOURNALS, journal("slow", interval=0.5))
    async with japi.session.get(f"{JOURNALS}/slow/log") as response:
        assert response.status == 200 and response.headers["Content-Type"].startswith("text/plain")
        assert response.headers.get("Transfer-Encoding") == "chunked"
        first = await response.content.readline()
        arrived = time.monotonic()
        rest = await response.read()
    assert first == b"one\n" and rest == b"two\nthree\n"
    assert time.monotonic() - arrived > 0.5  # the first line came while two were still to be written
    assert (await japi.get(f"{JOURNALS}/slow/log", params={"tailLines": "2"})).body == "two\nthree\n"


async def test_a_client_ends_a_followed_stream(journals: tuple[APIServer, JournalsPlugin], japi: Client) -> None:
    plugin = journals[1]
    assert plugin.log is not None
    await japi.post(JOURNALS, journal("followed"))
    async with japi.session.get(f"{JOURNALS}/followed/log", params={"follow": "true"}) as response:
        got = [await response.content.readline() for _ in range(6)]
        assert got == [b"one\n", b"two\n", b"three\n", b"tick 1\n", b"tick 2\n", b"tick 3\n"]
        assert plugin.log.ended == []
        response.close()  # hang up mid-stream
    await eventually(lambda: plugin.log.ended == ["followed"], what="the stream to notice the client left")
    assert (await japi.get(f"{JOURNALS}/followed")).status == 200  # the server goes on serving


async def test_a_connecter_reads_the_query_and_the_body(japi: Client) -> None:
    await japi.post(JOURNALS, journal("j"))
    got = await japi.get(f"{JOURNALS}/j/echo", params=[("text", "hello"), ("text", "there")])  # type: ignore[arg-type]
    assert (got.status, got.body, got.headers["Content-Type"]) == (200, "HELLO THERE", "application/octet-stream")
    posted = await japi.post(f"{JOURNALS}/j/echo", raw=b"shout", content_type="text/plain")
    assert (posted.status, posted.body) == (200, "SHOUT")


async def test_a_connecter_talks_over_a_websocket(japi: Client) -> None:
    await japi.post(JOURNALS, journal("j"))
    async with japi.session.ws_connect(f"{JOURNALS}/j/echo", protocols=("other", "echo.v1")) as ws:
        assert ws.protocol == "echo.v1"
        await ws.send_bytes(b"abc")
        assert await ws.receive_bytes() == b"ABC"
        await ws.send_str("text too")
        assert await ws.receive_bytes() == b"TEXT TOO"
    async with japi.session.ws_connect(f"{JOURNALS}/j/echo") as bare:  # no subprotocol offered: none agreed
        assert bare.protocol is None
        await bare.send_bytes(b"x")
        assert await bare.receive_bytes() == b"X"
    missing = await japi.get(f"{JOURNALS}/nope/echo", headers={"Upgrade": "websocket", "Connection": "Upgrade"})
    assert missing.status == 404 and missing.body["reason"] == "NotFound"  # refused before the upgrade: a Status
    assert (await japi.get(f"{JOURNALS}/j")).status == 200


async def test_errors_before_the_stream_are_statuses(japi: Client) -> None:
    await japi.post(JOURNALS, journal("j"))
    missing = await japi.get(f"{JOURNALS}/nope/log")
    assert missing.status == 404 and missing.body["kind"] == "Status" and missing.body["reason"] == "NotFound"
    assert missing.body["message"] == f'journals.{GROUP} "nope" not found'
    bad = await japi.get(f"{JOURNALS}/j/log", params={"tailLines": "x"})
    assert bad.status == 400 and bad.body["message"] == "tailLines must be a number, not 'x'"


async def test_verbs_and_subresources_not_served(japi: Client) -> None:
    await japi.post(JOURNALS, journal("j"))
    for method in ("PUT", "PATCH", "DELETE", "POST"):
        reply = await japi.request(method, f"{JOURNALS}/j/log", {})
        assert reply.status == 405 and reply.body["reason"] == "MethodNotAllowed", (method, reply)
    for method in ("GET", "PUT", "DELETE"):
        assert (await japi.request(method, f"{JOURNALS}/j/retire", {})).status == 405, method
    assert (await japi.put(f"{JOURNALS}/j/echo", {})).status == 405
    assert (await japi.get(f"{JOURNALS}/j/nothing")).status == 404
    assert (await japi.get(f"{GV}/journals/j/log")).status == 404  # a namespaced kind's, named without its namespace
    assert (await japi.get("/api/v1/namespaces/default/configmaps/j/log")).status == 404  # only journals have one


async def test_a_create_of_a_kind_of_its_own(japi: Client) -> None:
    await japi.post(JOURNALS, journal("j"))
    retirement = {"apiVersion": f"{GROUP}/v1", "kind": "JournalRetirement", "metadata": {"name": "j"}, "reason": "done"}
    wrong = await japi.post(f"{JOURNALS}/j/retire", {**retirement, "metadata": {"name": "k"}})
    assert wrong.status == 400 and wrong.body["message"] == "name in URL does not match name in JournalRetirement object"
    assert (await japi.post(f"{JOURNALS}/j/retire", {"kind": "Journal"})).status == 400
    dry = await japi.post(f"{JOURNALS}/j/retire", retirement, params={"dryRun": "All"})
    assert dry.status == 201 and (await japi.get(f"{JOURNALS}/j")).status == 200
    done = await japi.post(f"{JOURNALS}/j/retire", retirement)
    assert done.status == 201 and done.body == {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
    assert (await japi.get(f"{JOURNALS}/j")).status == 404
    assert (await japi.post(f"{JOURNALS}/j/retire", retirement)).status == 404


async def test_kubectl_reads_a_stream(journals: tuple[APIServer, JournalsPlugin], japi: Client, tmp_path: Path) -> None:
    if shutil.which("kubectl") is None:
        pytest.skip("kubectl is not on PATH")
    server = journals[0]
    await japi.post(JOURNALS, journal("k", interval=0.05))
    env = {**os.environ, "KUBECONFIG": str(server.kubeconfig_path), "KUBECACHEDIR": str(tmp_path / "cache"), "HOME": str(tmp_path)}
    kubectl = Kubectl(env, tmp_path)
    done = await asyncio.to_thread(kubectl.run, "get", "--raw", f"{JOURNALS}/k/log")
    assert done.stdout == "one\ntwo\nthree\n"
    body = tmp_path / "retirement.json"
    body.write_text(json.dumps({"apiVersion": f"{GROUP}/v1", "kind": "JournalRetirement", "metadata": {"name": "k"}}))
    retired = await asyncio.to_thread(kubectl.run, "create", "--raw", f"{JOURNALS}/k/retire", "-f", str(body))
    assert json.loads(retired.stdout)["status"] == "Success"
    missing = await asyncio.to_thread(kubectl.run, "get", "--raw", f"{JOURNALS}/gone/log", check=False)
    assert missing.returncode != 0 and f'journals.{GROUP} "gone" not found' in missing.stderr


class Misbehaving(Served):
    """A connecter doing what ``?how=`` says, each a mistake the HTTP layer must contain."""

    connect_methods = frozenset({"GET", "HEAD", "POST"})

    async def connect(self, ctx: Any, name: str, exchange: Exchange) -> None:
        how = exchange.query("how")
        if how == ["status"]:
            await exchange.start(status=99)
        elif how == ["header"]:
            await exchange.start("text/plain\r\nX-Injected: yes")
        elif how == ["late"]:
            await exchange.write(b"partial\n")
            raise errors.bad_request("too late for a Status")
        elif exchange.method == "POST":
            await exchange.write(await exchange.read() + b"|" + await exchange.read())
        else:
            await exchange.write(b"a body\n")


class JournalsMisbehaving(JournalsPlugin):
    @hookimpl
    def kplane_register_strategies(self, registry: Registry) -> None:
        super().kplane_register_strategies(registry)
        registry.add_subresource(GROUP, "journals", "odd", Misbehaving())


@pytest.fixture
async def odd(tmp_path: Path) -> AsyncIterator[tuple[APIServer, Client]]:
    server = await started(tmp_path / "state", ("journals", JournalsMisbehaving()))
    try:
        async with aiohttp.ClientSession(base_url=server.url) as session:
            yield server, Client(session)
    finally:
        await server.stop()


async def test_a_bad_start_is_a_status(odd: tuple[APIServer, Client]) -> None:
    for how in ("status", "header"):
        reply = await odd[1].get(f"{JOURNALS}/j/odd", params={"how": how})
        assert reply.status == 500 and reply.body["kind"] == "Status", (how, reply)
        assert "X-Injected" not in reply.headers and "Traceback" not in reply.body["message"]


async def test_a_head_answer_has_no_body(odd: tuple[APIServer, Client]) -> None:
    url = yarl.URL(odd[0].url)
    reader, writer = await asyncio.open_connection(url.host, url.port)
    try:
        writer.write(f"HEAD {JOURNALS}/j/odd HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n".encode())
        answer = await asyncio.wait_for(reader.read(), 10)
    finally:
        writer.close()
    assert answer.startswith(b"HTTP/1.1 200 ") and answer.endswith(b"\r\n\r\n"), answer
    assert (await odd[1].get(f"{JOURNALS}/j/odd")).body == "a body\n"


async def test_the_body_is_read_whole_each_time(odd: tuple[APIServer, Client]) -> None:
    reply = await odd[1].post(f"{JOURNALS}/j/odd", raw=b"same", content_type="text/plain")
    assert (reply.status, reply.body) == (200, "same|same")


async def test_an_api_error_once_streaming_is_a_warning(odd: tuple[APIServer, Client], caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kplane.core.server.connecting"):
        reply = await odd[1].get(f"{JOURNALS}/j/odd", params={"how": "late"})
    assert (reply.status, reply.body) == (200, "partial\n")
    [record] = [r for r in caplog.records if r.name == "kplane.core.server.connecting"]
    assert record.levelno == logging.WARNING and record.exc_info is None
    assert record.getMessage() == f"GET {JOURNALS}/j/odd ended its started answer with 400: too late for a Status"


# -- registering ------------------------------------------------------------------------------------
class Nothing(Served):
    pass


class Declares(Served):
    verbs = frozenset({"update"})

    async def get(self, ctx: Any, name: str) -> Any: ...


class Twice(JournalEcho):
    async def get(self, ctx: Any, name: str) -> Any: ...


class Deletes(JournalRetire):
    async def delete(self, ctx: Any, name: str, opts: Any) -> Any: ...


class Lists(Served):
    async def get(self, ctx: Any, name: str) -> Any: ...

    async def list(self, ctx: Any, opts: Any) -> Any: ...

    async def watch(self, ctx: Any, opts: Any) -> Any: ...


class ListsNot(Lists):
    verbs = frozenset({"get"})


class Undeclared(Served):
    async def connect(self, ctx: Any, name: str, exchange: Any) -> None: ...


class Unknown(Undeclared):
    connect_methods = frozenset({"BREW"})


@pytest.fixture
def registry() -> Registry:
    scheme = Scheme()
    add_kind(scheme, "journals")
    return Registry(scheme, None, AdmissionChain())  # type: ignore[arg-type]  # nothing reaches storage


@pytest.mark.parametrize(("served", "problem"), [
    (Nothing(), "journals/x: it has no capability (see kplane.core.registry.rest)"),
    (Declares(), "journals/x: verbs ['update'] must be some of ['get']"),
    (Twice(None), "journals/x: verbs ['get'] are served both by a capability and by connect"),  # type: ignore[arg-type]
    (Undeclared(), "journals/x: a Connecter names its connect_methods, and only a Connecter does"),
    (Unknown(), "journals/x: connect_methods ['BREW'] must be some of ['GET', 'POST', 'PUT', 'PATCH', 'DELETE', 'HEAD', 'OPTIONS']"),
    (object(), "journals/x: object must derive from Served (kplane.api)"),
    (Deletes(None), "journals/x: verbs ['delete'] cannot be served by an object of a kind of its own"  # type: ignore[arg-type]
                    " (only ['create', 'get', 'patch', 'update']; narrow them with verbs)"),
    (Lists(), "journals/x: verbs ['list', 'watch'] cannot be served by a subresource"
              " (only ['create', 'delete', 'get', 'patch', 'update']; narrow them with verbs)"),
])
def test_unfit_objects_are_refused(registry: Registry, served: Any, problem: str) -> None:
    with pytest.raises(ValueError) as refused:
        registry.add_subresource(GROUP, "journals", "x", served)
    assert str(refused.value) == problem
    assert registry.subresources(GROUP, "journals") == []


def test_only_verbs_on_one_object_are_served(registry: Registry) -> None:
    """What registering accepts is what the router has a handler for."""
    registry.add_subresource(GROUP, "journals", "x", ListsNot())
    assert rest.verbs_of(ListsNot()) == ("get",)
    endpoints = ResourceEndpoints(registry.scheme, registry)
    assert set(endpoints._own_kind) == rest.OWN_KIND_VERBS
    assert rest.NAMED_VERBS == {"create", "delete", "get", "patch", "update"} < set(endpoints._objects)


def test_connect_verbs_stay_internal() -> None:
    """A plugin names HTTP methods (``connect_methods``); what they stand for is the server's."""
    assert "CONNECT_VERBS" not in kplane.api.__all__ and hasattr(rest, "CONNECT_VERBS")


def test_one_way_to_serve_each_subresource(registry: Registry) -> None:
    assert isinstance(JournalLog(registry), Connecter) and isinstance(JournalRetire(registry), Creater)
    registry.add_strategy(GROUP, "journals", Strategy(), subresource="status")
    with pytest.raises(ValueError, match=r"^journals/status is served by a strategy already$"):
        registry.add_subresource(GROUP, "journals", "status", JournalLog(registry))
    registry.add_subresource(GROUP, "journals", "log", JournalLog(registry))
    replaced = JournalLog(registry)
    registry.add_subresource(GROUP, "journals", "log", replaced)  # again: replaced, as add_strategy does
    assert registry.rest(GROUP, "journals", "log") is replaced
    with pytest.raises(ValueError, match=r"^journals/log is served by add_subresource already$"):
        registry.add_strategy(GROUP, "journals", Strategy(), subresource="log")
    with pytest.raises(ValueError, match=r"^journals/: a subresource is one path segment$"):
        registry.add_subresource(GROUP, "journals", "", replaced)
    assert registry.subresources(GROUP, "journals") == ["log", "status"]


async def test_broken_plugins_take_their_subresources_with_them(tmp_path: Path) -> None:
    server = await started(tmp_path, ("rival", Rival()), ("half", HalfDone()), skip_broken=True)
    try:
        described = {p["name"]: p for p in server.plugins.describe()}
        assert described["rival"]["status"] == "skipped"
        assert re.fullmatch(r"plugin 'rival' conflicts with plugin 'core' \(kplane [^)]+\): it registers a subresource "
                            r"for pods.core, which 'core' registers", described["rival"]["problem"])
        assert described["half"]["status"] == "skipped"
        assert described["half"]["problem"].startswith("plugin 'half' failed in kplane_register_strategies: RuntimeError: half done")
        assert server.registry is not None
        assert server.registry.subresources("", "pods") == ["attach", "binding", "eviction", "exec", "log", "portforward", "proxy", "status"]
        # only resources without storage, and core's own (pods' streams, proxies and eviction, serviceaccounts/token): no broken plugin's
        assert {key for key in server.registry._subresources if key[2]} == {
            ("", "serviceaccounts", "token"), ("", "pods", "eviction"), ("", "pods", "log"), ("", "pods", "exec"), ("", "pods", "attach"),
            ("", "pods", "portforward"), ("", "pods", "proxy"), ("", "services", "proxy"), ("", "nodes", "proxy")}
        assert type(server.registry.rest("", "pods", "log")).__module__ == "kplane.plugins.core.containers.logs"
        async with aiohttp.ClientSession(base_url=server.url) as session:
            api = Client(session)
            assert (await api.get("/api/v1/namespaces/default/pods/p/log")).status == 404
            pods = next(r for r in (await api.get("/api/v1")).body["resources"] if r["name"] == "pods/binding")
            assert pods["verbs"] == ["create"]
            assert (await api.get(GV)).status == 404
    finally:
        await server.stop()
