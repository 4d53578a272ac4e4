"""kplane for your tests: a real API server for each test, started in-process in well under a
second, for controllers and operators written with any client.

Installed with kplane (the ``pytest11`` entry point), so a test only asks for a fixture::

    def test_my_operator(kplane):
        kplane.apply('''
            apiVersion: v1
            kind: ConfigMap
            metadata: {name: settings}
            data: {mode: fast}
        ''')
        assert kplane.get("v1", "ConfigMap", "settings")["data"] == {"mode": "fast"}

    @pytest.mark.kplane(controllers=True)            # Deployments roll out, pods become Ready
    def test_rollout(kplane):
        kplane.apply(Path("manifests/web.yaml"))
        kplane.wait_for("apps/v1", "Deployment", "web", condition="Available")

Fixtures: ``kplane`` (a :class:`Cluster`), ``kplane_kubeconfig`` (its kubeconfig file, for
``kubectl``, kopf or any client), ``kplane_client`` (an official ``kubernetes`` ApiClient).
The marker ``@pytest.mark.kplane(controllers=False, simulated_nodes=3, disable_plugins=(),
runtime_config="", plugin_settings={}, secure=False, **flags)`` chooses what runs: ``secure=True``
serves as ``kplane serve`` does, over HTTPS with a CA of the test's own, the kubeconfig verifying
the server and presenting the admin's client certificate (the default, plain HTTP on loopback,
is quicker; ``pytest --kplane-secure`` makes every test's server secure); ``runtime_config`` is
``kplane serve``'s ``--runtime-config``, ``plugin_settings`` is ``ServerConfig.plugin_settings``
(by plugin name; a plugin named there gets those in place of its flags' defaults, which the others
get as ``kplane serve`` gives them), and any other keyword is a ``kplane serve`` flag a plugin adds, named by its
``dest`` (``apiservice_backends=False`` is ``--no-enable-apiservice-backends``, for tests of
a server that refuses backends);
``system_pods=True`` makes the system pods of kube-system (CoreDNS, kube-proxy) at start, as ``kplane serve`` does. The server runs in a thread of its own with its own event loop, so blocking
clients (the official client, kopf's runner) and asyncio tests both work against it; storage is
SQLite in the test's ``tmp_path``.
"""

from __future__ import annotations

import asyncio
import json
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml

from kplane.core.authz.authorizers import ALWAYS_ALLOW
from kplane.core.authz.options import RBAC, AuthorizationOptions
from kplane.core.client.kubeconfig import load_kubeconfig
from kplane.core.config import ServerConfig
from kplane.core.patching.mediatypes import APPLY_PATCH
from kplane.core.pluginoptions import PluginOptions
from kplane.core.privatefiles import write_private
from kplane.core.plugins import PluginManager
from kplane.core.runtime.scheme import parse_runtime_config
from kplane.core.serving.apiserver import APIServer

Obj = dict[str, Any]
FIELD_MANAGER = "kplane-pytest"


@dataclass(frozen=True)
class Protection:
    """How a test server guards itself: the one switch between the quick default and serving as
    ``kplane serve`` does, as settings of :class:`ServerConfig` and flags of ``kplane serve``."""

    tls: bool = False  # HTTPS, with a CA in the data dir and the admin's client certificate
    rbac: bool = False  # --authorization-mode RBAC (else AlwaysAllow): the bootstrap policy and your Roles decide

    def server_config(self) -> dict[str, Any]:
        return {"tls": self.tls, "authorization": AuthorizationOptions(modes=(RBAC if self.rbac else ALWAYS_ALLOW,))}

    def serve_flags(self) -> list[str]:
        return [*([] if self.tls else ["--http"]), "--authorization-mode", RBAC if self.rbac else ALWAYS_ALLOW]


QUICK = Protection()  # plain HTTP on loopback, everything allowed
SECURE = Protection(tls=True, rbac=True)  # as kplane serve runs: HTTPS, RBAC


def protection(secure: bool) -> Protection:
    return SECURE if secure else QUICK


class KplaneError(Exception):
    """A request the server refused; ``status`` is the metav1.Status it sent."""

    def __init__(self, code: int, status: Obj) -> None:
        super().__init__(f"{code} {status.get('reason', '')}: {status.get('message', '')}")
        self.code, self.status = code, status


class Cluster:
    """A running kplane server and blocking helpers to drive it from a test."""

    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.url = server.url
        self.kubeconfig: Path = server.kubeconfig_path
        # Over HTTPS, requests verify the server and present the admin's certificate, as the kubeconfig says.
        self._ssl = load_kubeconfig(self.kubeconfig).ssl if self.url.startswith("https://") else None

    # -- requests ---------------------------------------------------------------------------
    def request(self, method: str, path: str, body: Any = None, *, content_type: str = "application/json",
                params: dict[str, str] | None = None) -> Obj:
        """One JSON request; raises KplaneError for an error status."""
        query = "?" + urllib.parse.urlencode(params) if params else ""
        data = None if body is None else json.dumps(body).encode()
        request = urllib.request.Request(f"{self.url}{path}{query}", data=data, method=method,
                                         headers={"Content-Type": content_type, "Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=30, context=self._ssl) as reply:
                return json.loads(reply.read())
        except urllib.error.HTTPError as err:
            raise KplaneError(err.code, json.loads(err.read() or b"{}")) from None

    def path(self, api_version: str, kind: str, name: str = "", namespace: str = "default") -> str:
        """The URL path of a kind (and object), resolved through the server's own scheme."""
        group, _, version = api_version.rpartition("/")
        rt = self.server.scheme.by_kind(group, kind)
        if rt is None or self.server.scheme.resource(group, version, rt.plural) is None:
            raise LookupError(f"the server does not serve {kind} in {api_version}")
        base = f"/apis/{group}/{version}" if group else f"/api/{version}"
        scope = f"/namespaces/{namespace}" if rt.namespaced else ""
        return f"{base}{scope}/{rt.plural}" + (f"/{name}" if name else "")

    # -- identities -------------------------------------------------------------------------
    def service_account_kubeconfig(self, name: str, namespace: str = "default", *, duration: int = 3600) -> Path:
        """A kubeconfig acting as the ServiceAccount ``namespace/name`` (made if missing) with a
        token good for ``duration`` seconds: run your operator with it to test its RBAC, on a
        ``@pytest.mark.kplane(secure=True)`` server (RBAC decides there; clients send tokens over
        HTTPS only). Everything else in it is the admin kubeconfig's (server, CA)."""
        try:
            self.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts",
                         {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": name}})
        except KplaneError as err:
            if err.code != 409:
                raise
        answer = self.request("POST", f"/api/v1/namespaces/{namespace}/serviceaccounts/{name}/token",
                              {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                               "spec": {"expirationSeconds": duration}})
        config = yaml.safe_load(self.kubeconfig.read_text())
        user = f"system:serviceaccount:{namespace}:{name}"
        config["users"] = [{"name": user, "user": {"token": answer["status"]["token"]}}]
        for context in config["contexts"]:
            context["context"]["user"] = user
            context["context"]["namespace"] = namespace
        path = self.kubeconfig.with_name(f"kubeconfig-{namespace}-{name}")
        write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
        return path

    # -- objects ----------------------------------------------------------------------------
    def apply(self, manifests: str | Path | Obj | Iterable[Obj], namespace: str = "default") -> list[Obj]:
        """Create or update every object (server-side apply, forced), in order; YAML text, a
        YAML file, one object or several. Returns the objects as the server stored them."""
        applied = []
        for obj in load_manifests(manifests):
            meta = obj.get("metadata") or {}
            path = self.path(obj["apiVersion"], obj["kind"], meta["name"], meta.get("namespace", namespace))
            applied.append(self.request("PATCH", path, obj, content_type=APPLY_PATCH,
                                        params={"fieldManager": FIELD_MANAGER, "force": "true"}))
        return applied

    def get(self, api_version: str, kind: str, name: str, namespace: str = "default") -> Obj | None:
        """The object, or None if there is none."""
        try:
            return self.request("GET", self.path(api_version, kind, name, namespace))
        except KplaneError as err:
            if err.code == 404:
                return None
            raise

    def list(self, api_version: str, kind: str, namespace: str = "default", **params: str) -> list[Obj]:
        return self.request("GET", self.path(api_version, kind, namespace=namespace), params=params)["items"]

    def delete(self, api_version: str, kind: str, name: str, namespace: str = "default") -> None:
        self.request("DELETE", self.path(api_version, kind, name, namespace))

    # -- waiting ----------------------------------------------------------------------------
    def wait_for(self, api_version: str, kind: str, name: str, *, namespace: str = "default",
                 condition: str | None = None, status: str = "True", until: Callable[[Obj], bool] | None = None,
                 deleted: bool = False, timeout: float = 30.0) -> Obj | None:
        """Poll until the object has ``condition`` at ``status`` (``kubectl wait --for=condition``),
        satisfies ``until``, exists (neither given), or is gone (``deleted``); returns its last state.

        Blocks the calling thread: from an ``async def`` test whose event loop runs the code
        under test, use :meth:`wait_for_async`.
        """
        def reached(obj: Obj | None) -> bool:
            if deleted or obj is None:
                return deleted and obj is None
            if condition is not None and not has_condition(obj, condition, status):
                return False
            return until is None or until(obj)

        deadline = time.monotonic() + timeout
        while True:
            obj = self.get(api_version, kind, name, namespace)
            if reached(obj):
                return obj
            if time.monotonic() > deadline:
                raise TimeoutError(_timeout_message(kind, name, condition, status, deleted, obj, timeout))
            time.sleep(0.05)

    async def wait_for_async(self, api_version: str, kind: str, name: str, *, namespace: str = "default",
                             condition: str | None = None, status: str = "True", until: Callable[[Obj], bool] | None = None,
                             deleted: bool = False, timeout: float = 30.0) -> Obj | None:
        """:meth:`wait_for` for ``async def`` tests: it polls in a worker thread, so the event loop
        keeps running the code under test while it waits."""
        return await asyncio.to_thread(self.wait_for, api_version, kind, name, namespace=namespace, condition=condition,
                                       status=status, until=until, deleted=deleted, timeout=timeout)


def has_condition(obj: Obj, condition: str, status: str = "True") -> bool:
    """Whether ``status.conditions`` holds ``condition`` with ``status``."""
    conditions = (obj.get("status") or {}).get("conditions") or []
    return any(c.get("type") == condition and c.get("status") == status for c in conditions)


def load_manifests(manifests: str | Path | Obj | Iterable[Obj]) -> list[Obj]:
    """Objects from YAML text (several documents allowed), a YAML file, or objects as they are;
    ``kind: List`` documents are unpacked."""
    if isinstance(manifests, Path):
        manifests = manifests.read_text()
    if isinstance(manifests, str):
        documents = [d for d in yaml.safe_load_all(manifests) if d]
    elif isinstance(manifests, dict):
        documents = [manifests]
    else:
        documents = list(manifests)
    objects: list[Obj] = []
    for document in documents:
        objects.extend(document.get("items") or [] if document.get("kind") == "List" else [document])
    return objects


def _timeout_message(kind: str, name: str, condition: str | None, status: str, deleted: bool, obj: Obj | None,
                     timeout: float) -> str:
    wanted = "to be deleted" if deleted else f"condition {condition}={status}" if condition else "the expected state"
    return f"{kind} {name!r} did not reach {wanted} within {timeout}s; last seen: {json.dumps(obj)[:2000]}"


class ServerThread:
    """An APIServer on its own event loop in a daemon thread: blocking test code and asyncio
    tests alike can talk to it, and it keeps serving while a test blocks."""

    def __init__(self, config: ServerConfig, plugins: PluginManager | None = None) -> None:
        self.server = APIServer(config, plugins)
        self._ready = threading.Event()
        self._failure: BaseException | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._stop: asyncio.Event | None = None
        self._thread = threading.Thread(target=asyncio.run, args=(self._main(),), name="kplane-server", daemon=True)

    def start(self, timeout: float = 30.0) -> APIServer:
        self._thread.start()
        if not self._ready.wait(timeout):
            raise TimeoutError(f"kplane did not start within {timeout}s")
        if self._failure is not None:
            raise RuntimeError("kplane failed to start") from self._failure
        return self.server

    def stop(self) -> None:
        if self._loop is not None and self._stop is not None:
            self._loop.call_soon_threadsafe(self._stop.set)
        self._thread.join(30)

    async def _main(self) -> None:
        self._loop, self._stop = asyncio.get_running_loop(), asyncio.Event()
        try:
            await self.server.start()
        except BaseException as err:  # reported to the test thread, which raises it
            self._failure = err
            self._ready.set()
            await self.server.stop()
            return
        self._ready.set()
        try:
            await self._stop.wait()
        finally:
            await self.server.stop()


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption("--kplane-secure", action="store_true",
                     help="the kplane fixture's servers serve HTTPS as kplane serve does (default: plain HTTP on loopback)")


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "kplane(controllers=False, simulated_nodes=3, disable_plugins=(), runtime_config='', plugin_settings={}, "
        "secure=False, **flags): how the `kplane` fixture's server runs (flags: those plugins add to kplane serve, by dest, "
        "e.g. apiservice_backends=False)",
    )


@pytest.fixture
def kplane(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Cluster]:
    """A fresh kplane API server for this test (SQLite in ``tmp_path``, a free loopback port)."""
    marker = request.node.get_closest_marker("kplane")
    options = dict(marker.kwargs) if marker else {}
    disabled = frozenset(options.pop("disable_plugins", ()))
    secure = bool(options.pop("secure", False)) or bool(request.config.getoption("kplane_secure", False))
    plugins = PluginManager()
    plugins.load_entry_points(disabled)
    config = ServerConfig(
        data_dir=tmp_path / "kplane",
        port=0,
        run_controllers=bool(options.pop("controllers", False)),
        simulated_nodes=int(options.pop("simulated_nodes", 3)),
        system_pods=bool(options.pop("system_pods", False)),
        disabled_plugins=disabled,
        runtime_config=parse_runtime_config(options.pop("runtime_config", "")),
        plugin_settings=_plugin_settings(plugins, options.pop("plugin_settings", {}), options),
        leader_election=None,  # one server per test: nothing to elect
        **protection(secure).server_config(),
    )
    thread = ServerThread(config, plugins)
    server = thread.start()
    try:
        yield Cluster(server)
    finally:
        thread.stop()


def _plugin_settings(plugins: PluginManager, given: dict[str, dict[str, Any]], flags: dict[str, Any]) -> dict[str, dict[str, Any]]:
    """What ``kplane serve`` would give with no plugin flag (each flag's default, by plugin),
    a plugin's ``given`` settings in place of its defaults (as an embedder gives them), then the
    marker's ``flags`` (plugins' flags by dest) on top for their plugins."""
    known = PluginOptions()
    plugins.add_options(known)
    found = {dest: option for dest in flags if (option := known.find(dest)) is not None}
    if len(found) < len(flags):
        raise pytest.UsageError(f"@pytest.mark.kplane: unknown options {sorted(set(flags) - set(found))}")
    settings = {**known.settings(known.defaults()), **{name: dict(values) for name, values in given.items()}}
    for dest, option in found.items():
        settings.setdefault(option.plugin, {})[dest] = flags[dest]
    return settings


@pytest.fixture
def kplane_kubeconfig(kplane: Cluster) -> Path:
    """The kubeconfig of the test's server: ``KUBECONFIG`` for kubectl, kopf or any client."""
    return kplane.kubeconfig


@pytest.fixture
def kplane_client(kplane: Cluster) -> Iterator[Any]:
    """An official ``kubernetes`` client ApiClient configured for the test's server."""
    kubernetes = pytest.importorskip("kubernetes")
    client = kubernetes.config.new_client_from_config(config_file=str(kplane.kubeconfig))
    try:
        yield client
    finally:
        client.close()
