"""One API server: storage, plugins, registry and HTTP assembled, started and stopped in order."""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import ipaddress
import logging
import os
import socket
import ssl
from pathlib import Path

from aiohttp import web

from kplane.core.client.informer import SharedInformerFactory
from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.config import ServerConfig
from kplane.core.controllers.clients import InProcessAccounts
from kplane.core.controllers.leading import run_controllers, stand_for_election
from kplane.core.controllers.manager import ClusterSigning, ControllerManager
from kplane.core.controllers.standard import build_controller_manager
from kplane.core.metrics.server import ServerMetrics
from kplane.core.pki.certificates import KeyPair
from kplane.core.plugins import PluginManager
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.registry import Registry
from kplane.core.runtime.scheme import Scheme
from kplane.core.server.apisources import APISources
from kplane.core.server.app import LIFECYCLE, build_app
from kplane.core.server.connections import GuardedRunner
from kplane.core.server.filterchain import FilterChain
from kplane.core.serving import authconfigmap
from kplane.core.serving.frontproxy import resolve_front_proxy
from kplane.core.serving.datadir import prepare_data_dir, write_kubeconfig
from kplane.core.serving.security import Security, warn_if_open
from kplane.core.serving.storage import open_server_storage
from kplane.core.serving.tls import (
    SecureServing, check_serving, loopback_certificate, loopback_client_tls, prepare_secure_serving)
from kplane.core.storage.interface import Storage

log = logging.getLogger(__name__)


class APIServer:
    """One running server. ``await start()``, then ``await stop()``.

    ``plugins``: loaded already, by a caller that asked them for their flags first (``kplane
    serve``, the pytest plugin); by default the server loads the installed ones ``config`` names.
    """

    def __init__(self, config: ServerConfig, plugins: PluginManager | None = None) -> None:
        self.config = config
        self.scheme = Scheme()
        self.admission = AdmissionChain()
        self._load_plugins = plugins is None
        self.plugins = plugins if plugins is not None else PluginManager(skip_broken=config.skip_broken_plugins)
        self.plugins.config = config  # every hook's ``config`` from now on
        self.storage: Storage | None = None
        self.metrics = ServerMetrics()  # this server's own registry: /metrics
        self.registry: Registry | None = None
        self.runner: web.AppRunner | None = None
        self.controllers: ControllerManager | None = None
        self._controller_client: RESTClient | None = None  # the controller-manager's own (its informers')
        self._controller_accounts: InProcessAccounts | None = None  # each controller's
        self._controller_task: asyncio.Task[None] | None = None
        self._loopback: RESTClient | None = None
        self.informers: SharedInformerFactory | None = None  # loopback informers of admission plugins
        # Authentication, authorization, audit; and the in-process clients' tokens (the loopback
        # one, one per controller added by _start_controllers), which the server's limits let through.
        self.security = Security(config)
        self.authenticators, self.authorizers = self.security.authenticators, self.security.authorizers
        self._loopback_ssl: ssl.SSLContext | None = None  # how they verify us over HTTPS
        self.secure_serving: SecureServing | None = None  # None: plain HTTP (--http)
        self.url = ""
        self._inprocess_url = ""  # where the in-process clients reach this process: self.url unless a worker

    async def start(self) -> None:
        cfg = self.config
        check_serving(cfg)
        prepare_data_dir(cfg.data_dir)
        warn_if_open(cfg)
        self.security.open_audit_log(cfg)
        loopback: KeyPair | None = None
        if cfg.tls:  # key generation: not on the event loop
            loopback = await asyncio.to_thread(loopback_certificate)
            self._loopback_ssl = loopback_client_tls(loopback).context()
        if self._load_plugins:
            self.plugins.load_entry_points(cfg.disabled_plugins, cfg.plugins)
        for name, module in cfg.extra_plugins:
            self.plugins.register(module, name)
        self.storage = await open_server_storage(cfg.storage, cfg.watch_cache, cfg.encryption_provider_config,
                                                 self.metrics.storage)
        # What start-up fills in (the host's CAs, the front proxy's certificate), once the storage
        # is known to work, goes into the config every hook sees from now on.
        cfg = dataclasses.replace(cfg, authentication=await authconfigmap.look_up(
            cfg.authentication, cfg.delegation, cfg.data_dir, cfg.tls))
        cfg = await asyncio.to_thread(resolve_front_proxy, cfg)
        self.config = self.plugins.config = cfg
        self.security.configure(cfg)
        self.registry = Registry(self.scheme, self.storage, self.admission)
        # Admission plugins get informers on our own loopback client, which learns the address below.
        self._loopback = RESTClient("", token=self.security.loopback_token, ssl=self._loopback_ssl)
        self.informers = SharedInformerFactory(self._loopback)
        self.scheme.set_runtime_config(cfg.runtime_config)
        await self.plugins.setup(self.scheme, self.registry, self.admission, self.informers,
                                 self.authenticators, self.authorizers)
        self.security.check_modes()
        unknown = self.scheme.unknown_runtime_config()
        if unknown:
            raise ValueError(f"--runtime-config names group/versions no plugin registers: {', '.join(unknown)}")
        filters, sources = FilterChain(), APISources()
        self.security.install(filters)
        await self.plugins.register_http(filters, sources, self.registry, self.informers)
        app = build_app(self.scheme, self.registry, bookmark_interval=cfg.bookmark_interval,
                        share_watch_encoding=cfg.share_watch_encoding, filters=filters, sources=sources,
                        limits=cfg.limits, loopback_tokens=self.security.own_tokens.tokens.keys(),
                        metrics=self.metrics)
        app.router.add_get("/debug/plugins", self._debug_plugins)
        if cfg.worker is not None:
            app.router.add_get("/debug/worker", self._debug_worker)
        self.security.attach(app)
        self.runner = GuardedRunner(app, limits=cfg.connections, access_log=None, handle_signals=False, shutdown_timeout=1.0)
        await self.runner.setup()
        if loopback is not None:  # the files in DATA_DIR/pki, once all else is ready
            self.secure_serving = await asyncio.to_thread(prepare_secure_serving, cfg, loopback)
            if self.secure_serving.client_ca is not None:  # kplane's own CA signs the users' certificates
                self.security.trust_client_ca(self.secure_serving.client_ca)
        listener = self.secure_serving.listener if self.secure_serving is not None else None
        # The kernel's own cap on the accept queue (as Go's net.Listen asks for), not aiohttp's 128:
        # a burst of a few thousand clients otherwise loses SYNs, which wait a 1 s retransmit.
        site = web.TCPSite(self.runner, cfg.address, cfg.port, reuse_address=True, backlog=socket.SOMAXCONN,
                           ssl_context=listener, reuse_port=cfg.worker is not None)
        await site.start()
        scheme = "https" if listener is not None else "http"
        self.url = _url(scheme, *self.runner.addresses[0][:2])
        if cfg.worker is not None:
            # A connection to the shared port lands on any worker, which knows none of the tokens
            # minted here: the in-process clients come in through a port of this process alone.
            await web.TCPSite(self.runner, "127.0.0.1", 0, ssl_context=listener).start()
            self._inprocess_url = _url(scheme, *self.runner.addresses[-1][:2])
        else:
            self._inprocess_url = self.url
        if listener is None:
            log.warning("serving plain HTTP on %s (--http): no TLS, so clients cannot check the server "
                        "nor present certificates", self.url)
        self._loopback.server = self._inprocess_url
        await self.plugins.post_start(self.registry, self.url)
        await self._publish_authentication_trust()
        self.informers.start()  # kube-apiserver's "start-informers" post-start hook
        if cfg.write_kubeconfig:
            serving = self.secure_serving
            write_kubeconfig(self.kubeconfig_path, self.url, serving.ca_data if serving else None,
                             serving.admin if serving else None)
        app[LIFECYCLE].started = True
        if cfg.run_controllers:
            await self._start_controllers()

    async def _publish_authentication_trust(self) -> None:
        """kube-system/extension-apiserver-authentication, for the extension servers of a host
        that serves ConfigMaps over HTTPS (:mod:`kplane.core.serving.authconfigmap`)."""
        cfg, serving = self.config, self.secure_serving
        if serving is None or cfg.delegation.authentication_kubeconfig is not None \
                or self.scheme.resource("", "v1", "configmaps") is None:
            return
        own = cfg.data_dir / "pki" / "ca.crt" if serving.client_ca is not None else None
        assert self._loopback is not None
        try:
            await authconfigmap.publish(self._loopback, authconfigmap.host_trust(cfg.authentication, own))
        except (ApiError, OSError, ValueError) as err:  # the host serves on; its extensions are told nothing new
            log.warning("could not publish the authentication trust: %s", err)

    async def _start_controllers(self) -> None:
        """The controller-manager in-process, over a loopback client (its informers, the Lease);
        each controller acts as its own ServiceAccount in kube-system through a token minted here.
        Under leader election it runs only while this server holds the Lease and stands again
        after losing it."""
        cfg = self.config
        client = self._controller_client = RESTClient(self._inprocess_url, token=self.security.loopback_token, ssl=self._loopback_ssl)
        accounts = self._controller_accounts = InProcessAccounts(client, self.security.own_tokens.tokens)

        async def build() -> ControllerManager:
            self.controllers = await build_controller_manager(client, self.plugins, controllers=cfg.controllers,
                                                              clients=accounts, root_ca=self._root_ca(),
                                                              signing=self._signing(),
                                                              metrics=self.metrics.workqueues)
            return self.controllers

        manager = await build()  # a bad --controllers selection fails the start, before anything runs
        election = cfg.leader_election
        if election is not None and self.scheme.resource(*election.lock) is None:
            log.info("no %s served here: the controllers run without leader election", "/".join(election.lock))
            election = None
        work = run_controllers(manager) if election is None else stand_for_election(client, election, manager, build)
        self._controller_task = asyncio.create_task(work, name="controller-manager")

    def _root_ca(self) -> bytes | None:
        """The CA pods verify this server with: kplane's own, which signs the serving certificate it
        made (with --tls-cert-file it is not known here: None)."""
        return self.secure_serving.ca_data if self.secure_serving is not None else None

    def _signing(self) -> ClusterSigning:
        """The CA the in-process certificate signers sign with: kplane's own in DATA_DIR/pki, whose
        certificates authenticate users here (none when another CA does: --client-ca-file)."""
        cfg, serving = self.config, self.secure_serving
        if serving is None or serving.client_ca is None:
            return ClusterSigning(duration=cfg.cluster_signing_duration)
        pki = cfg.data_dir / "pki"
        return ClusterSigning(pki / "ca.crt", pki / "ca.key", cfg.cluster_signing_duration)

    async def _debug_plugins(self, request: web.Request) -> web.Response:
        """Every plugin tried, loaded or skipped, with what it registered (as ``kplane plugins -o json``)."""
        return web.json_response(self.plugins.describe())

    async def _debug_worker(self, request: web.Request) -> web.Response:
        """Which of ``kplane serve --workers``' processes answered: its index and process id."""
        return web.json_response({"worker": self.config.worker, "pid": os.getpid()})

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
        if self._controller_accounts is not None:
            await self._controller_accounts.close()
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
        await self.security.close()


def _url(scheme: str, host: str, port: int) -> str:
    """The server's URL; listening on every address, it is reached on loopback."""
    if ipaddress.ip_address(host).is_unspecified:
        host = "::1" if ":" in host else "127.0.0.1"
    return f"{scheme}://[{host}]:{port}" if ":" in host else f"{scheme}://{host}:{port}"
