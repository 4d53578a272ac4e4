"""``GET /metrics`` through a real server and real HTTP, parsed as Prometheus parses it: the
request counters and histograms with kube-apiserver's labels, long-running watches, the storage
and watch cache series, the in-process controllers' workqueues, bounded labels, authorization
by the ``system:monitoring`` role, and the real ``kubectl get --raw /metrics``."""

from __future__ import annotations

import asyncio
import shutil
import uuid
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import aiohttp
import pytest
import pytest_asyncio
from prometheus_client.parser import text_string_to_metric_families

from kplane.api import Authenticated, hookimpl
from kplane.core import cli
from kplane.core.authn.user import UserInfo
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.client.kubeconfig import load_kubeconfig
from kplane.core.serving.apiserver import APIServer
from tests.conftest import Client, Reply
from tests.etcd_process import EtcdProcess
from tests.kubectl_cli import kubectl_async
from tests.servers import server_config
from tests.waiting import eventually

SHARED = pytest.mark.asyncio(loop_scope="module")
pytestmark = SHARED
CONFIGMAPS = "/api/v1/namespaces/default/configmaps"
TEMPLATES = "/api/v1/namespaces/default/podtemplates"
USERS = {
    "admin": UserInfo("admin", groups=("system:masters",)),
    "prometheus": UserInfo("prometheus", groups=("system:monitoring",)),
    "bob": UserInfo("bob"),
}
Samples = dict[tuple[str, frozenset[tuple[str, str]]], float]


class Tokens:
    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        return Authenticated(USERS[token]) if token in USERS else None


class TokensPlugin:
    @hookimpl
    def kplane_register_authenticators(self, authenticators: Any) -> None:
        authenticators.add_token("MetricsTestTokens", Tokens())


class Scraper:
    """The server, and requests to it as a user (by token)."""

    def __init__(self, server: APIServer, session: aiohttp.ClientSession) -> None:
        self.server, self.session = server, session

    def client(self, token: str) -> Client:
        return As(self.session, token)

    async def scrape(self, token: str = "prometheus") -> Samples:
        async with self.session.get("/metrics", headers={"Authorization": f"Bearer {token}"}) as response:
            assert response.status == 200, await response.text()
            assert response.content_type == "text/plain"
            return parse(await response.text())


class As(Client):
    """Requests as the user of ``token``."""

    def __init__(self, session: aiohttp.ClientSession, token: str) -> None:
        super().__init__(session)
        self.token = token

    async def request(self, method: str, path: str, body: Any = None, **kw: Any) -> Reply:
        kw["headers"] = {**(kw.get("headers") or {}), "Authorization": f"Bearer {self.token}"}
        return await super().request(method, path, body, **kw)


def parse(text: str) -> Samples:
    return {(sample.name, frozenset(sample.labels.items())): sample.value
            for family in text_string_to_metric_families(text) for sample in family.samples}


def value(samples: Samples, metric: str, **labels: str) -> float:
    """The sum of ``metric``'s samples having ``labels`` (0 when none has them)."""
    wanted = set(labels.items())
    return sum(v for (n, have), v in samples.items() if n == metric and wanted <= have)


def template(name: str) -> dict[str, Any]:
    return {"apiVersion": "v1", "kind": "PodTemplate", "metadata": {"name": name},
            "template": {"spec": {"containers": [{"name": "main", "image": "busybox"}]}}}


def request_labels(verb: str, resource: str = "podtemplates", **more: str) -> dict[str, str]:
    return {"verb": verb, "group": "", "version": "v1", "resource": resource, "component": "apiserver", **more}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def metrics(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Scraper]:
    """One RBAC server over HTTPS for the module (kubectl sends no token over plain HTTP), its
    controllers running (their workqueues are scraped)."""
    srv = APIServer(server_config(data_dir=tmp_path_factory.mktemp("metrics") / "state", port=0, run_controllers=True,
                                  secure=True, extra_plugins=[("tokens", TokensPlugin())],
                                  authorization=AuthorizationOptions(modes=("RBAC",))))
    await srv.start()
    try:
        tls = load_kubeconfig(srv.kubeconfig_path, credentials=False).ssl  # users by token, not the admin's certificate
        async with aiohttp.ClientSession(base_url=srv.url, connector=aiohttp.TCPConnector(ssl=tls)) as session:
            yield Scraper(srv, session)
    finally:
        await srv.stop()


async def test_requests_are_counted_with_their_verb_resource_scope_and_code(metrics: Scraper) -> None:
    api = metrics.client("admin")  # PodTemplates: no controller here reads or writes them meanwhile
    before = await metrics.scrape()
    assert (await api.post(TEMPLATES, template("counted"))).status == 201
    assert (await api.get(f"{TEMPLATES}/counted")).status == 200
    assert (await api.get(TEMPLATES)).status == 200
    assert (await api.get(f"{TEMPLATES}/missing")).status == 404
    assert (await api.post(TEMPLATES, template("Not_A_Name"))).status == 422
    assert (await api.post(f"{TEMPLATES}?dryRun=All", template("dry"))).status == 201
    after = await metrics.scrape()

    def moved(metric: str, **labels: str) -> float:
        return value(after, metric, **labels) - value(before, metric, **labels)

    total = "apiserver_request_total"
    assert moved(total, **request_labels("POST", scope="resource", code="201", dry_run="")) == 1
    assert moved(total, **request_labels("POST", scope="resource", code="201", dry_run="All")) == 1
    assert moved(total, **request_labels("GET", scope="resource", code="200")) == 1
    assert moved(total, **request_labels("LIST", scope="namespace", code="200")) == 1
    assert moved(total, **request_labels("GET", scope="resource", code="404")) == 1
    assert moved(total, **request_labels("POST", scope="resource", code="422")) == 1
    histogram = "apiserver_request_duration_seconds_count"
    assert moved(histogram, **request_labels("POST", scope="resource", dry_run="")) == 2  # the 201 and the 422
    assert moved("apiserver_request_duration_seconds_bucket", le="+Inf", **request_labels("LIST")) == 1
    assert moved("etcd_request_duration_seconds_count", operation="create", type="podtemplates") == 1  # not the dry run
    assert value(after, "apiserver_storage_size_bytes") > 0
    assert ("apiserver_current_inflight_requests", frozenset({("request_kind", "mutating")})) in after


async def test_labels_come_only_from_what_the_server_serves(metrics: Scraper) -> None:
    api = metrics.client("admin")
    for path in ("/api/v1/namespaces/default/madeup-things", "/apis/made.up/v1/widgets/x", "/nowhere-at-all"):
        assert (await api.get(path)).status == 404
    samples = await metrics.scrape()
    values = {v for (_, labels) in samples for _, v in labels}
    assert not {v for v in values if "madeup" in v or "made.up" in v or "widgets" in v or "nowhere" in v}
    unserved = {"group": "", "version": "", "resource": "", "subresource": "", "scope": "", "code": "404"}
    assert value(samples, "apiserver_request_total", verb="GET", **unserved) >= 3


async def test_a_running_watch_is_long_running_and_its_events_counted(metrics: Scraper) -> None:
    headers = {"Authorization": "Bearer admin"}
    watch_labels = request_labels("WATCH", resource="configmaps", scope="namespace", subresource="")
    async with metrics.session.get(f"{CONFIGMAPS}?watch=true&fieldSelector=metadata.name%3Dwatched",
                                   headers=headers) as watch:
        assert watch.status == 200
        running = await metrics.scrape()
        assert value(running, "apiserver_longrunning_requests", **watch_labels) == 1
        api = metrics.client("admin")
        assert (await api.post(CONFIGMAPS, {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "watched"}})).status == 201
        line = await asyncio.wait_for(watch.content.readline(), 10)
        assert b'"ADDED"' in line
        samples = await metrics.scrape()
        assert value(samples, "apiserver_watch_events_total", group="", version="v1", kind="ConfigMap") >= 1
        assert value(samples, "apiserver_watch_cache_events_dispatched_total", group="", resource="configmaps") >= 1


async def test_storage_objects_follow_creates(metrics: Scraper) -> None:
    api = metrics.client("admin")
    before = value(await metrics.scrape(), "apiserver_storage_objects", resource="secrets")
    for n in range(3):
        body = {"apiVersion": "v1", "kind": "Secret", "metadata": {"name": f"counted-{n}"}}
        assert (await api.post("/api/v1/namespaces/default/secrets", body)).status == 201

    async def counted() -> Samples | None:
        samples = await metrics.scrape()
        return samples if value(samples, "apiserver_storage_objects", resource="secrets") == before + 3 else None

    samples = await eventually(counted, what="three more secrets in apiserver_storage_objects")
    assert value(samples, "apiserver_watch_cache_events_received_total", group="", resource="secrets") >= 3
    assert value(samples, "apiserver_watch_cache_initializations_total") == 1
    assert value(samples, "apiserver_watch_cache_resource_version", group="", resource="secrets") > 0


async def test_controllers_workqueues_are_in_the_servers_metrics(metrics: Scraper) -> None:
    api = metrics.client("admin")
    before = value(await metrics.scrape(), "workqueue_adds_total", name="serviceaccount")
    assert (await api.post("/api/v1/namespaces", {"apiVersion": "v1", "kind": "Namespace",
                                                  "metadata": {"name": "queued"}})).status == 201

    async def added() -> Samples | None:
        samples = await metrics.scrape()
        return samples if value(samples, "workqueue_adds_total", name="serviceaccount") > before else None

    samples = await eventually(added, what="the serviceaccount controller's queue to take the new namespace")
    for family in ("workqueue_depth", "workqueue_retries_total", "workqueue_unfinished_work_seconds",
                   "workqueue_longest_running_processor_seconds"):
        assert (family, frozenset({("name", "serviceaccount")})) in samples, family
    assert value(samples, "workqueue_queue_duration_seconds_count", name="serviceaccount") >= 1
    assert value(samples, "workqueue_work_duration_seconds_count", name="serviceaccount") >= 1


async def test_only_monitoring_may_read_metrics(metrics: Scraper) -> None:
    async with metrics.session.get("/metrics", headers={"Authorization": "Bearer bob"}) as response:
        assert response.status == 403
        assert "cannot get path \"/metrics\"" in (await response.json())["message"]
    async with metrics.session.get("/metrics") as response:  # anonymous
        assert response.status in (401, 403)
    assert (await metrics.scrape("admin"))  # cluster-admin may, as system:monitoring does
    role = await metrics.client("admin").get("/apis/rbac.authorization.k8s.io/v1/clusterroles/system:monitoring")
    assert role.status == 200 and "/metrics" in role.body["rules"][0]["nonResourceURLs"]


async def test_kubectl_get_raw_metrics(metrics: Scraper, tmp_path: Path) -> None:
    kubectl = shutil.which("kubectl")
    if kubectl is None:
        pytest.skip("kubectl is not on PATH")
    env = {"KUBECONFIG": str(metrics.server.kubeconfig_path), "HOME": str(tmp_path), "PATH": str(Path(kubectl).parent)}
    code, out, err = await kubectl_async(env, "get", "--raw", "/metrics")  # as the kubeconfig's admin
    assert code == 0, err
    assert value(parse(out), "apiserver_request_total", component="apiserver") > 0


async def test_controller_manager_metrics_only_on_loopback(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["controller-manager", "--kubeconfig", str(tmp_path / "none"), "--metrics-port", "0",
            "--metrics-address", "0.0.0.0"]
    assert await asyncio.to_thread(cli.main, argv) == 2  # refused before anything is contacted
    assert "only a loopback address" in capsys.readouterr().err


async def test_etcd_storage_is_timed_and_sized(etcd_server: EtcdProcess, tmp_path: Path) -> None:
    storage = f"etcd://127.0.0.1:{etcd_server.client_port}/kplane-{uuid.uuid4().hex[:8]}"
    srv = APIServer(server_config(data_dir=tmp_path / "state", port=0, run_controllers=False, storage_url=storage))
    await srv.start()
    try:
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            api = Client(session)
            body = {"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "on-etcd"}}
            assert (await api.post(CONFIGMAPS, body)).status == 201
            async with session.get("/metrics") as response:  # plain HTTP here: anyone may (AlwaysAllow)
                samples = parse(await response.text())
    finally:
        await srv.stop()
    assert value(samples, "etcd_request_duration_seconds_count", operation="create", type="configmaps") == 1
    assert value(samples, "apiserver_storage_size_bytes") > 0  # etcd's dbSize
