"""Assemble and run the API server: storage, plugins, registry, HTTP."""

from __future__ import annotations

import asyncio
import contextlib
import ipaddress
import logging
import os
import secrets
import socket
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml
from aiohttp import web

from kplane.core.client.informer import SharedInformerFactory
from kplane.core.client.leaderelection import LeaderElectionConfig
from kplane.core.client.rest import RESTClient
from kplane.core.controllers.leading import LEASE_NAME, LEASE_NAMESPACE, default_identity, run_controllers, stand_for_election
from kplane.core.controllers.manager import ALL, ControllerManager, ControllerSelection
from kplane.core.controllers.standard import build_controller_manager
from kplane.core.plugins import PluginManager
from kplane.core.privatefiles import private_dir, write_private
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.registry import Registry
from kplane.core.runtime.scheme import Scheme
from kplane.core.server.apisources import APISources
from kplane.core.server.app import LIFECYCLE, build_app
from kplane.core.server.connections import ConnectionLimits, GuardedRunner
from kplane.core.server.filterchain import FilterChain
from kplane.core.server.filters import RequestLimits
from kplane.core.server.handlers import BOOKMARK_INTERVAL
from kplane.core.storage.cacher import CachedStorage
from kplane.core.storage.factory import open_storage
from kplane.core.storage.interface import Storage

log = logging.getLogger(__name__)


class StartupError(Exception):
    """The server cannot start for a reason its operator can fix; the message says which."""


@dataclass
class ServerConfig:
    data_dir: Path = Path(".kplane")
    storage_url: str = ""  # default: sqlite in data_dir
    address: str = "127.0.0.1"
    port: int = 6443
    disabled_plugins: frozenset[str] = frozenset()
    plugins: frozenset[str] | None = None  # only these entry-point plugins (None: every installed one)
    skip_broken_plugins: bool = False  # start without a plugin that breaks (logged) instead of failing
    write_kubeconfig: bool = True
    bookmark_interval: float = BOOKMARK_INTERVAL  # seconds of quiet before a watch gets a BOOKMARK
    run_controllers: bool = True  # the controller-manager in-process, talking to us over loopback
    simulated_nodes: int = 3  # kwok-like nodes that schedule and "run" pods (the core plugin's controller); 0: none
    controllers: ControllerSelection = ALL  # which of them run, as kube-controller-manager's --controllers
    # The Lease the in-process controllers hold while they run (None: run them unconditionally).
    # Several servers on one storage then run one set of controllers between them.
    leader_election: LeaderElectionConfig | None = field(default_factory=lambda: LeaderElectionConfig(
        LEASE_NAMESPACE, LEASE_NAME, default_identity(), release_on_cancel=True))
    watch_cache: bool = True  # lists and watches from an in-memory cache fed by one storage watch
    share_watch_encoding: bool = True  # False: encode each watch event per watcher (benchmarks only)
    extra_plugins: list[tuple[str, object]] = field(default_factory=list)  # (name, module) for tests
    # Settings of single plugins, by plugin name, as plain values (the flags a plugin reads, and
    # tuning for tests); each plugin documents what it reads from its entry.
    plugin_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    # --runtime-config: group/versions (or api/all, api/beta...) served or not, over the plugins'
    # defaults (kplane.core.runtime.scheme.parse_runtime_config), e.g. {"apps/v1beta2": True}
    runtime_config: dict[str, bool] = field(default_factory=dict)
    limits: RequestLimits = field(default_factory=RequestLimits)  # max in-flight, request timeout
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)  # read deadlines, connection cap

    @property
    def storage(self) -> str:
        return self.storage_url or f"sqlite://{(self.data_dir / 'state.db').resolve()}"  # an absolute path


class APIServer:
    """One running server. ``await start()``, then ``await stop()``."""

    def __init__(self, config: ServerConfig) -> None:
        self.config = config
        self.scheme = Scheme()
        self.admission = AdmissionChain()
        self.plugins = PluginManager(skip_broken=config.skip_broken_plugins, config=config)
        self.storage: Storage | None = None
        self.registry: Registry | None = None
        self.runner: web.AppRunner | None = None
        self.controllers: ControllerManager | None = None
        self._controller_client: RESTClient | None = None
        self._controller_task: asyncio.Task[None] | None = None
        self._loopback: RESTClient | None = None
        self.informers: SharedInformerFactory | None = None  # loopback informers of admission plugins
        # The in-process clients' bearer token: their requests pass the in-flight limits and the
        # connection cap, as kube-apiserver's loopback client (in system:masters) does.
        self._loopback_token = secrets.token_urlsafe(32)
        self.url = ""

    async def start(self) -> None:
        cfg = self.config
        _prepare_data_dir(cfg.data_dir)
        _warn_if_exposed(cfg.address)
        self.plugins.load_entry_points(cfg.disabled_plugins, cfg.plugins)
        for name, module in cfg.extra_plugins:
            self.plugins.register(module, name)
        self.storage = await open_storage(cfg.storage)
        if cfg.watch_cache:
            self.storage = await CachedStorage.open(self.storage)
        self.registry = Registry(self.scheme, self.storage, self.admission)
        # Admission plugins get informers on our own loopback client, which learns the address below.
        self._loopback = RESTClient("", token=self._loopback_token)
        self.informers = SharedInformerFactory(self._loopback)
        self.scheme.set_runtime_config(cfg.runtime_config)
        await self.plugins.setup(self.scheme, self.registry, self.admission, self.informers)
        unknown = self.scheme.unknown_runtime_config()
        if unknown:
            raise ValueError(f"--runtime-config names group/versions no plugin registers: {', '.join(unknown)}")
        filters, sources = FilterChain(), APISources()
        await self.plugins.register_http(filters, sources, self.registry, self.informers)
        app = build_app(self.scheme, self.registry, bookmark_interval=cfg.bookmark_interval,
                        share_watch_encoding=cfg.share_watch_encoding, filters=filters, sources=sources,
                        limits=cfg.limits, loopback_token=self._loopback_token)
        app.router.add_get("/debug/plugins", self._debug_plugins)
        self.runner = GuardedRunner(app, limits=cfg.connections, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self.runner.setup()
        # The kernel's own cap on the accept queue (as Go's net.Listen asks for), not aiohttp's 128:
        # a burst of a few thousand clients otherwise loses SYNs, which wait a 1 s retransmit.
        site = web.TCPSite(self.runner, cfg.address, cfg.port, reuse_address=True, backlog=socket.SOMAXCONN)
        await site.start()
        host, port = self.runner.addresses[0][:2]
        self.url = f"http://[{host}]:{port}" if ":" in host else f"http://{host}:{port}"
        self._loopback.server = self.url
        await self.plugins.post_start(self.registry, self.url)
        self.informers.start()  # kube-apiserver's "start-informers" post-start hook
        if cfg.write_kubeconfig:
            write_kubeconfig(self.kubeconfig_path, self.url)
        app[LIFECYCLE].started = True
        if cfg.run_controllers:
            await self._start_controllers()

    async def _start_controllers(self) -> None:
        """The controller-manager in-process, over a loopback client; under leader election it
        runs only while this server holds the Lease and stands again after losing it."""
        cfg = self.config
        client = self._controller_client = RESTClient(self.url, token=self._loopback_token)

        async def build() -> ControllerManager:
            self.controllers = await build_controller_manager(client, self.plugins, controllers=cfg.controllers)
            return self.controllers

        manager = await build()  # a bad --controllers selection fails the start, before anything runs
        election = cfg.leader_election
        if election is not None and self.scheme.resource(*election.lock) is None:
            log.info("no %s served here: the controllers run without leader election", "/".join(election.lock))
            election = None
        work = run_controllers(manager) if election is None else stand_for_election(client, election, manager, build)
        self._controller_task = asyncio.create_task(work, name="controller-manager")

    async def _debug_plugins(self, request: web.Request) -> web.Response:
        """Every plugin tried, loaded or skipped, with what it registered (as ``kplane plugins -o json``)."""
        return web.json_response(self.plugins.describe())

    @property
    def kubeconfig_path(self) -> Path:
        return self.config.data_dir / "kubeconfig"

    async def stop(self) -> None:
        if self.runner is not None:
            self.runner.app[LIFECYCLE].stopping = True  # /readyz fails from now on
        if self._controller_task is not None:  # stops the controllers and hands the Lease back
            self._controller_task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self._controller_task
        if self._controller_client is not None:
            await self._controller_client.close()
        if self.registry is not None:
            await self.plugins.shutdown(self.registry)
        if self.informers is not None:
            await self.informers.stop()
        if self._loopback is not None:
            await self._loopback.close()
        if self.runner is not None:
            await self.runner.cleanup()
        if self.storage is not None:
            await self.storage.close()


def write_kubeconfig(path: Path, server: str) -> None:
    """A kubeconfig pointing at this server (plain HTTP on loopback, no credentials yet)."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kplane", "cluster": {"server": server}}],
        "users": [{"name": "kplane-admin", "user": {}}],
        "contexts": [{"name": "kplane", "context": {"cluster": "kplane", "user": "kplane-admin", "namespace": "default"}}],
        "current-context": "kplane",
        "preferences": {},
    }
    try:
        write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
    except OSError as err:
        raise StartupError(f"cannot write the kubeconfig {path}: {err.strerror}") from None


def _prepare_data_dir(path: Path) -> None:
    """The data dir, private and writable by us, or an error saying why it is not."""
    try:
        private_dir(path)
    except OSError as err:
        raise StartupError(f"cannot use the data dir {path}: {err.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise StartupError(f"the data dir {path} is not writable")


def _warn_if_exposed(address: str) -> None:
    """Anyone who reaches a non-loopback address may do anything: say so until authentication exists."""
    try:
        loopback = address == "localhost" or ipaddress.ip_address(address).is_loopback
    except ValueError:  # a host name: it may well resolve to a public address
        loopback = False
    if not loopback:
        log.warning("listening on %s, beyond this machine: kplane has no authentication or authorization yet, "
                    "so anyone who can reach this port can read and change everything, Secrets included",
                    address or "every address")
