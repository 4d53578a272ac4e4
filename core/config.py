"""``ServerConfig``: what a server is told to be, from ``kplane serve``'s flags or an embedder.

Its own module, so that naming it (every hook's ``config``, ``kplane.api``) imports neither the
server's assembly (:mod:`kplane.core.serving`), storage nor the aiohttp application.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from kplane.core.audit.options import AuditOptions
from kplane.core.authn.options import AuthenticationOptions
from kplane.core.authz.options import AuthorizationOptions
from kplane.core.serving.delegation import DelegationOptions
from kplane.core.serving.frontproxy import FrontProxyOptions
from kplane.core.client.leaderelection import LeaderElectionConfig
from kplane.core.controllers.leading import LEASE_NAME, LEASE_NAMESPACE, default_identity
from kplane.core.controllers.manager import ALL, ControllerSelection
from kplane.core.controllers.manager import SIGNING_DURATION
from kplane.core.server.connections import ConnectionLimits
from kplane.core.server.filters import RequestLimits

BOOKMARK_INTERVAL = 60.0  # seconds of quiet before a watch gets a BOOKMARK (kube-apiserver's)


@dataclass
class ServerConfig:
    """One server's settings: the flags of ``kplane serve``, or what an embedder or test sets."""

    data_dir: Path = Path(".kplane")
    storage_url: str = ""  # default: sqlite in data_dir
    address: str = "127.0.0.1"
    port: int = 6443
    # HTTPS, as kube-apiserver's secure serving (kplane.core.serving.tls): a CA and a serving
    # certificate made in data_dir/pki unless tls_cert_file and tls_private_key_file are given;
    # client certificates verified against authentication.client_ca_file (None: that CA).
    # tls=False (--http): plain HTTP, on a loopback address only.
    tls: bool = True
    tls_cert_file: Path | None = None
    tls_private_key_file: Path | None = None
    tls_sans: tuple[str, ...] = ()  # more names for the made serving certificate (--tls-san)
    disabled_plugins: frozenset[str] = frozenset()
    plugins: frozenset[str] | None = None  # only these entry-point plugins (None: every installed one)
    skip_broken_plugins: bool = False  # start without a plugin that breaks (logged) instead of failing
    write_kubeconfig: bool = True
    # This server is worker INDEX of several sharing address:port (kplane serve --workers,
    # kplane.core.serving.workers): it binds with SO_REUSEPORT and its in-process clients reach it
    # on a private loopback port. None: the only process.
    worker: int | None = None
    bookmark_interval: float = BOOKMARK_INTERVAL  # seconds of quiet before a watch gets a BOOKMARK
    run_controllers: bool = True  # the controller-manager in-process, talking to us over loopback
    simulated_nodes: int = 3  # kwok-like nodes that schedule and "run" pods (the core plugin's controller); 0: none
    system_pods: bool = False  # CoreDNS and kube-proxy made in kube-system at start (the apps plugin); kplane serve: on
    controllers: ControllerSelection = ALL  # which of them run, as kube-controller-manager's --controllers
    # The longest validity of a certificate the in-process signers issue (they sign with the CA in
    # data_dir/pki when the server made it), as kube-controller-manager's --cluster-signing-duration
    cluster_signing_duration: float = SIGNING_DURATION
    # The Lease the in-process controllers hold while they run (None: run them unconditionally).
    # Several servers on one storage then run one set of controllers between them.
    leader_election: LeaderElectionConfig | None = field(default_factory=lambda: LeaderElectionConfig(
        LEASE_NAMESPACE, LEASE_NAME, default_identity(), release_on_cancel=True))
    watch_cache: bool = True  # lists and watches from an in-memory cache fed by one storage watch
    # --encryption-provider-config: an EncryptionConfiguration file; the resources it names are
    # stored encrypted (None: every value is stored as it is)
    encryption_provider_config: Path | None = None
    share_watch_encoding: bool = True  # False: encode each watch event per watcher (benchmarks only)
    extra_plugins: list[tuple[str, object]] = field(default_factory=list)  # (name, module) for tests
    # Settings of single plugins, by plugin name, as plain values (the flags a plugin reads, and
    # tuning for tests); each plugin documents what it reads from its entry.
    plugin_settings: dict[str, dict[str, Any]] = field(default_factory=dict)
    # --runtime-config: group/versions (or api/all, api/beta...) served or not, over the plugins'
    # defaults (kplane.core.runtime.scheme.parse_runtime_config), e.g. {"apps/v1beta2": True}
    runtime_config: dict[str, bool] = field(default_factory=dict)
    authentication: AuthenticationOptions = field(default_factory=AuthenticationOptions)
    authorization: AuthorizationOptions = field(default_factory=AuthorizationOptions)
    delegation: DelegationOptions = field(default_factory=DelegationOptions)  # as an extension API server
    front_proxy: FrontProxyOptions = field(default_factory=FrontProxyOptions)  # the aggregator's client certificate
    audit: AuditOptions = field(default_factory=AuditOptions)  # --audit-policy-file, --audit-log-*
    limits: RequestLimits = field(default_factory=RequestLimits)  # max in-flight, request timeout
    connections: ConnectionLimits = field(default_factory=ConnectionLimits)  # read deadlines, connection cap

    @property
    def storage(self) -> str:
        url = self.storage_url or f"sqlite://{(self.data_dir / 'state.db').resolve()}"  # an absolute path
        if self.worker is not None and url.startswith("sqlite://") and "?" not in url:
            url += "?shared=true"  # every worker opens the one database (kplane.core.serving.workers)
        return url
