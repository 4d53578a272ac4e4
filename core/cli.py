"""``kplane serve | controller-manager | plugins | new-plugin | version``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import gc
import json
import logging
import signal
import sys
import traceback
from pathlib import Path

from kplane.core import scaffold
from kplane.core.audit import options as audit_options
from kplane.core.authn import options as authn_options
from kplane.core.authz import options as authz_options
from kplane.core.client.kubeconfig import KubeconfigError, load_kubeconfig
from kplane.core.client.leaderelection import LeaderElectionConfig
from kplane.core.client.rest import RESTClient
from kplane.core.controllers.clients import ClientBuilder, SharedClient, TokenRequestAccounts
from kplane.core.controllers.leading import LEASE_NAME, LEASE_NAMESPACE, default_identity, elector, run_controllers
from kplane.core.controllers.manager import ControllerManager, ControllerSelection
from kplane.core.controllers.manager import SIGNING_DURATION, ClusterSigning
from kplane.core.controllers.standard import build_controller_manager
from kplane.core.metrics.endpoint import check_address, serve_metrics
from kplane.core.metrics.families import new_registry
from kplane.core.metrics.workqueue import WorkqueueMetrics
from kplane.core.pki.certificates import SubjectAltNames
from kplane.core.pluginoptions import PluginOptions
from kplane.core.plugins import PluginError, PluginManager
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.registry import Registry
from kplane.core.runtime.scheme import Scheme, parse_runtime_config
from kplane.core.config import ServerConfig
from kplane.core.serving import delegation, frontproxy, workers
from kplane.core.serving.apiserver import APIServer
from kplane.core.serving.datadir import StartupError
from kplane.core.server.app import VERSION
from kplane.core.server.connections import ConnectionLimits
from kplane.core.server.filters import RequestLimits, parse_duration
from kplane.core.storage.interface import StorageError

log = logging.getLogger(__name__)


def _selection(text: str) -> ControllerSelection:
    try:
        return ControllerSelection.parse(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def _duration(text: str) -> float:
    """A Go duration flag value (``60s``, ``1m30s``) in seconds."""
    try:
        seconds = parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err
    if seconds <= 0:
        raise argparse.ArgumentTypeError(f"must be positive: {text}")
    return seconds


def _count(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a whole number: {text}") from None
    if value < 0:
        raise argparse.ArgumentTypeError(f"must not be negative: {text}")
    return value


def _add_limit_flags(parser: argparse.ArgumentParser) -> None:
    defaults, connections = RequestLimits(), ConnectionLimits()
    parser.add_argument("--max-requests-inflight", type=_count, default=defaults.max_requests_inflight, metavar="N",
                        help="read-only requests served at once; more are answered 429 (default "
                             f"{defaults.max_requests_inflight}; 0: no limit)")
    parser.add_argument("--max-mutating-requests-inflight", type=_count, metavar="N",
                        default=defaults.max_mutating_requests_inflight,
                        help="mutating requests served at once; more are answered 429 (default "
                             f"{defaults.max_mutating_requests_inflight}; 0: no limit)")
    parser.add_argument("--request-timeout", type=_duration, default=defaults.request_timeout, metavar="DURATION",
                        help="how long a request other than a watch may take before a 504 (default 1m0s; "
                             "?timeout= may ask for less)")
    parser.add_argument("--read-header-timeout", type=_duration, default=connections.header_timeout,
                        metavar="DURATION", help="time a client has to send a request's headers, from their "
                                                 "first byte; then the connection is closed (default 32s)")
    parser.add_argument("--read-body-timeout", type=_duration, default=connections.body_timeout, metavar="DURATION",
                        help="time a client has to send a request's body after its headers; then 408 and the "
                             "connection is closed (default 1m0s)")
    parser.add_argument("--max-connections", type=_count, default=connections.max_connections, metavar="N",
                        help="open client connections; past them only health probes are served on "
                             f"{connections.probe_connections} more, and further ones are closed at once "
                             "(default: the open-file limit less a margin, at most 4096; 0: no cap)")


def _sans(text: str) -> list[str]:
    names = [name.strip() for name in text.split(",") if name.strip()]
    try:
        SubjectAltNames.parse(names)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None
    return names


def _add_tls_flags(parser: argparse.ArgumentParser) -> None:
    """kube-apiserver's secure serving flags, and --http for plain HTTP on loopback."""
    parser.add_argument("--tls-cert-file", type=Path, default=None, metavar="FILE",
                        help="the serving certificate (PEM, intermediates after it); with --tls-private-key-file. "
                             "Default: one signed by kplane's CA in DATA_DIR/pki, made on first start")
    parser.add_argument("--tls-private-key-file", type=Path, default=None, metavar="FILE",
                        help="the key of --tls-cert-file (PEM)")
    parser.add_argument("--tls-san", type=_sans, action="append", default=[], metavar="NAME[,NAME...]",
                        help="more IP addresses or DNS names for the made serving certificate (besides 127.0.0.1, "
                             "::1, localhost, this host's name and --address); may be repeated")
    parser.add_argument("--http", action="store_true",
                        help="serve plain HTTP on --port instead of HTTPS; only on a loopback --address")


def _names(text: str) -> frozenset[str]:
    names = frozenset(n.strip() for n in text.split(",") if n.strip())
    if not names:
        raise argparse.ArgumentTypeError("name at least one plugin")
    return names


def _runtime_config(text: str) -> dict[str, bool]:
    try:
        return parse_runtime_config(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from err


def _add_skip_flag(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--skip-broken-plugins", action="store_true",
                        help="go on without a plugin that fails to load or register (logged as a warning, all it "
                             "added taken out again) instead of stopping")


def _report(err: Exception, verbose: bool = False, can_disable: bool = True) -> None:
    """One line naming the problem (and, for a broken plugin, how to go on without it)."""
    print(f"kplane: {err}", file=sys.stderr)
    if isinstance(err, PluginError) and err.plugin:
        if verbose and err.__cause__ is not None:
            traceback.print_exception(err.__cause__, file=sys.stderr)
        ways = f"--disable-plugin {err.plugin}, or --skip-broken-plugins" if can_disable else "--skip-broken-plugins"
        print(f"kplane: to go on without it: {ways}{'' if verbose else ' (-v shows the traceback)'}", file=sys.stderr)


def _add_controller_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--controllers", type=_selection, default=ControllerSelection(), metavar="LIST",
                        help="controllers to run: '*' all, 'name' enables, '-name' disables (default '*'); "
                             "garbagecollector and those of plugins (namespace, simulated-nodes, replicaset, ...)")
    parser.add_argument("--simulated-nodes", type=int, default=3, metavar="N",
                        help="simulated nodes that schedule and run pods on paper (default 3; 0: none)")
    parser.add_argument("--cluster-signing-duration", type=_duration, default=SIGNING_DURATION, metavar="DURATION",
                        help="the longest validity of a certificate the signers issue for a CertificateSigningRequest "
                             "(a Go duration; default 8760h)")


def _add_election_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--leader-elect", action=argparse.BooleanOptionalAction, default=True,
                        help="run the controllers only while holding the Lease, so that one process of several "
                             "runs them (default on)")
    parser.add_argument("--leader-elect-lease-namespace", default=LEASE_NAMESPACE, metavar="NS",
                        help=f"(default {LEASE_NAMESPACE})")
    parser.add_argument("--leader-elect-lease-name", default=LEASE_NAME, metavar="NAME", help=f"(default {LEASE_NAME})")
    parser.add_argument("--leader-elect-lease-duration", type=float, default=15.0, metavar="SECONDS",
                        help="how long others wait before taking over an unrenewed Lease (default 15)")
    parser.add_argument("--leader-elect-renew-deadline", type=float, default=10.0, metavar="SECONDS",
                        help="how long the leader retries renewing before it gives up (default 10)")
    parser.add_argument("--leader-elect-retry-period", type=float, default=2.0, metavar="SECONDS",
                        help="pause between attempts to acquire or renew (default 2)")
    parser.add_argument("--identity", default="", help="holder identity on the Lease (default HOSTNAME_UUID)")


def _election(args: argparse.Namespace) -> LeaderElectionConfig | None:
    """The Lease settings from the flags (None with --no-leader-elect); bad timings fail here,
    before anything connects."""
    if not args.leader_elect:
        return None
    return LeaderElectionConfig(
        args.leader_elect_lease_namespace, args.leader_elect_lease_name, args.identity or default_identity(),
        lease_duration=args.leader_elect_lease_duration, renew_deadline=args.leader_elect_renew_deadline,
        retry_period=args.leader_elect_retry_period, release_on_cancel=True)


def _parser() -> tuple[argparse.ArgumentParser, argparse.ArgumentParser]:
    """kplane's parser, and that of ``kplane serve``, which the plugins' flags join."""
    parser = argparse.ArgumentParser(prog="kplane", description="The Kubernetes API machinery in Python.")
    sub = parser.add_subparsers(dest="command", required=True)
    # no abbreviations (as kube's flags): a plugin's --plugin must not be read as --plugins first
    serve = sub.add_parser("serve", allow_abbrev=False, help="run the API server")
    serve.add_argument("--data-dir", type=Path, default=Path(".kplane"), help="state and kubeconfig folder (default ./.kplane)")
    serve.add_argument("--storage", default="", help="storage URL (default sqlite:///DATA_DIR/state.db)")
    serve.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=6443, help="port to listen on (default 6443; 0 picks a free one)")
    serve.add_argument("--workers", type=_count, default=1, metavar="N",
                       help="server processes sharing the port (SO_REUSEPORT), one per core; above 1 on "
                            "SQLite (the default) or etcd (default 1)")
    serve.add_argument(workers.WORKER_FLAG, type=int, default=None, help=argparse.SUPPRESS)
    _add_tls_flags(serve)
    serve.add_argument("--disable-plugin", action="append", default=[], metavar="NAME", help="do not load this plugin")
    serve.add_argument("--plugins", type=_names, default=None, metavar="NAME[,NAME...]",
                       help="load only these plugins (e.g. 'sample_api' to serve one group as its own server, "
                            "for the aggregator of another); default: every installed plugin")
    _add_skip_flag(serve)
    serve.add_argument("--runtime-config", type=_runtime_config, action="append", default=[], metavar="GROUP/VERSION=true|false[,...]",
                       help="serve or stop serving group/versions, as kube-apiserver's flag: e.g. apps/v1beta2=true "
                            "(registered but off by default), api/beta=false, api/all=false,v1=true; may be repeated")
    serve.add_argument("--watch-cache", action=argparse.BooleanOptionalAction, default=True,
                       help="serve lists and watches from an in-memory cache fed by one storage watch (default on)")
    serve.add_argument("--encryption-provider-config", type=Path, default=None, metavar="FILE",
                       help="EncryptionConfiguration file: the resources it names (e.g. secrets) are stored "
                            "encrypted with aesgcm, aescbc or secretbox keys, as kube-apiserver's flag")
    serve.add_argument("--no-controllers", action="store_true", help="do not run the controller-manager in-process")
    serve.add_argument("--system-pods", action=argparse.BooleanOptionalAction, default=True,
                       help="create the system pods of kube-system at start when they are missing: a CoreDNS "
                            "Deployment with its kube-dns Service, a kube-proxy DaemonSet (default on)")
    _add_limit_flags(serve)
    authn_options.add_flags(serve)
    authz_options.add_flags(serve)
    delegation.add_flags(serve)
    frontproxy.add_flags(serve)
    audit_options.add_flags(serve)
    _add_controller_flags(serve)
    _add_election_flags(serve)
    serve.add_argument("-v", "--verbose", action="store_true", help="log requests and debug details")
    cm = sub.add_parser("controller-manager", help="run the controllers against a server, one leader at a time")
    cm.add_argument("--kubeconfig", required=True, help="kubeconfig of the server to control")
    cm.add_argument("--context", default=None, help="kubeconfig context (default: its current-context)")
    cm.add_argument("--root-ca-file", type=Path, default=None, metavar="FILE",
                    help="the CA bundle that verifies the server, published to every namespace as the "
                         "kube-root-ca.crt ConfigMap (default: the kubeconfig's certificate authority)")
    cm.add_argument("--use-service-account-credentials", action="store_true",
                    help="each controller acts as its own ServiceAccount in kube-system, with tokens from the "
                         "TokenRequest API (the kubeconfig's user creates them); without it, all act as that user")
    cm.add_argument("--cluster-signing-cert-file", type=Path, default=None, metavar="FILE",
                    help="PEM CA certificate the kubernetes.io signers sign CertificateSigningRequests with "
                         "(with --cluster-signing-key-file; without both, nothing is signed)")
    cm.add_argument("--cluster-signing-key-file", type=Path, default=None, metavar="FILE",
                    help="PEM private key of --cluster-signing-cert-file")
    _add_skip_flag(cm)
    _add_controller_flags(cm)
    _add_election_flags(cm)
    cm.add_argument("--metrics-port", type=int, default=None, metavar="PORT",
                    help="serve the controllers' workqueue metrics on http://ADDRESS:PORT/metrics (default: not served)")
    cm.add_argument("--metrics-address", default="127.0.0.1", metavar="ADDRESS",
                    help="the loopback address --metrics-port listens on (plain HTTP: loopback only; default 127.0.0.1)")
    cm.add_argument("-v", "--verbose", action="store_true", help="log debug details")
    plugins = sub.add_parser("plugins", help="list the plugins and what each registers")
    plugins.add_argument("--disable-plugin", action="append", default=[], metavar="NAME")
    plugins.add_argument("--plugins", type=_names, default=None, metavar="NAME[,NAME...]", help="only these plugins")
    _add_skip_flag(plugins)
    plugins.add_argument("-o", "--output", choices=("text", "json"), default="text",
                         help="json: the document GET /debug/plugins serves")
    plugins.add_argument("-v", "--verbose", action="store_true", help="print the traceback of a broken plugin")
    new_plugin = sub.add_parser("new-plugin", help="write a new plugin package (an API group with one kind) "
                                                   "that passes its own tests once installed")
    scaffold.add_arguments(new_plugin)
    sub.add_parser("version", help="print the Kubernetes version kplane serves")
    return parser, serve


def _serve_plugins(serve: argparse.ArgumentParser, argv: list[str]) -> tuple[PluginManager, PluginOptions] | None:
    """The plugins ``kplane serve``'s arguments select, loaded, and their flags on ``serve``
    (None: a plugin broke, reported). A first reading of the arguments, without ``--help``
    (which must list the plugins' flags too), says which plugins to load, how verbosely, and
    whether to skip a broken one."""
    known, _ = serve.parse_known_args([arg for arg in argv if arg not in ("-h", "--help")])
    _log_to_stderr(known.verbose)
    plugins, options = PluginManager(skip_broken=known.skip_broken_plugins), PluginOptions(serve)
    try:
        plugins.load_entry_points(frozenset(known.disable_plugin), known.plugins)
        plugins.add_options(options)
    except PluginError as err:
        _report(err, known.verbose)
        return None
    options.attach()
    return plugins, options


def _log_to_stderr(verbose: bool) -> None:
    logging.basicConfig(level=logging.DEBUG if verbose else logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser, serve = _parser()
    if argv[:1] == ["serve"]:
        selected = _serve_plugins(serve, argv[1:])
        return 1 if selected is None else _serve_command(parser.parse_args(argv), *selected, argv=argv)
    args = parser.parse_args(argv)
    if args.command == "controller-manager":
        _log_to_stderr(args.verbose)
        try:
            return asyncio.run(_controller_manager(args))
        except (PluginError, KubeconfigError, ValueError) as err:
            _report(err, args.verbose, can_disable=False)
            return 2 if isinstance(err, ValueError) else 1
    if args.command == "new-plugin":
        return scaffold.run(args)
    if args.command == "plugins":
        return asyncio.run(_plugins(args))
    print(f"kplane serves Kubernetes API {VERSION['major']}.{VERSION['minor']} ({VERSION['gitVersion']})")
    return 0


def _serve_command(args: argparse.Namespace, plugins: PluginManager, options: PluginOptions, argv: list[str]) -> int:
    try:
        election = _election(args)
        if args.workers < 1:
            raise ValueError("--workers must be 1 or more")
        if args.workers > 1:
            workers.check_storage(args.storage)
    except ValueError as err:
        print(f"kplane: {err}", file=sys.stderr)
        return 2
    config = ServerConfig(
        data_dir=args.data_dir,
        storage_url=args.storage,
        address=args.address,
        port=args.port,
        tls=not args.http,
        tls_cert_file=args.tls_cert_file,
        tls_private_key_file=args.tls_private_key_file,
        tls_sans=tuple(name for given in args.tls_san for name in given),
        disabled_plugins=frozenset(args.disable_plugin),
        plugins=args.plugins,
        skip_broken_plugins=args.skip_broken_plugins,
        run_controllers=not args.no_controllers,
        simulated_nodes=args.simulated_nodes,
        system_pods=args.system_pods,
        controllers=args.controllers,
        cluster_signing_duration=args.cluster_signing_duration,
        watch_cache=args.watch_cache,
        encryption_provider_config=args.encryption_provider_config,
        leader_election=election,
        plugin_settings=options.settings(args),
        runtime_config={key: on for given in args.runtime_config for key, on in given.items()},
        authentication=authn_options.from_args(args),
        authorization=authz_options.from_args(args, delegated=args.authorization_kubeconfig is not None,
                                              plain_http=args.http),
        delegation=delegation.from_args(args),
        front_proxy=frontproxy.from_args(args),
        audit=audit_options.from_args(args),
        limits=RequestLimits(args.max_requests_inflight, args.max_mutating_requests_inflight, args.request_timeout),
        connections=ConnectionLimits(header_timeout=args.read_header_timeout, body_timeout=args.read_body_timeout,
                                     max_connections=args.max_connections),
        worker=args.serve_as_worker,
        write_kubeconfig=args.serve_as_worker in (None, 0),  # one writer of the shared file
    )
    try:
        if args.workers > 1 and args.serve_as_worker is None:
            workers.prepare_once(config)
            return asyncio.run(workers.supervise(argv, args.workers, args.address, args.port, config.data_dir / "kubeconfig"))
        return asyncio.run(_serve(APIServer(config, plugins)))
    except (PluginError, StorageError, StartupError, ValueError, OSError) as err:
        _report(err, args.verbose)
        return 1


async def _serve(server: APIServer) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await server.start()
        # What start-up built (schemas, OpenAPI documents, plugins: some 60,000 objects) lives as
        # long as the process; frozen, it is not traversed by every full collection that a flood of
        # requests in flight sets off (in bench/overload_bench.py, 1.6 s of 8 s went to them).
        gc.freeze()
        if server.config.worker is not None:  # the parent tells the user, once every worker serves
            print(f"{workers.READY} {server.url}", flush=True)
            await stop.wait()
            return 0
        print(f"kplane is serving on {server.url}", flush=True)
        print(f"  export KUBECONFIG={server.kubeconfig_path.resolve()}", flush=True)
        print("  kubectl get namespaces", flush=True)
        await stop.wait()
    finally:
        await server.stop()
    return 0


def _read_root_ca(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise KubeconfigError(f"cannot read --root-ca-file {path}: {err.strerror}") from None


async def _controller_manager(args: argparse.Namespace) -> int:
    """Run the controllers out of the server's process: 0 once stopped by a signal, 1 once
    leadership is lost (as kube-controller-manager, which exits rather than risk acting twice)."""
    election = _election(args)
    if args.metrics_port is not None:
        check_address(args.metrics_address)
    plugins = PluginManager(skip_broken=args.skip_broken_plugins,
                            config=ServerConfig(simulated_nodes=args.simulated_nodes, controllers=args.controllers))
    plugins.load_entry_points()
    loaded = load_kubeconfig(args.kubeconfig, args.context)
    root_ca = _read_root_ca(args.root_ca_file) if args.root_ca_file is not None else loaded.ca_data
    client = RESTClient.from_config(loaded)
    clients: ClientBuilder = SharedClient(client)
    if args.use_service_account_credentials:
        bare = RESTClient.from_config(load_kubeconfig(args.kubeconfig, args.context, credentials=False))
        clients = TokenRequestAccounts(client, bare)
    registry = new_registry()
    endpoint = None
    try:
        signing = ClusterSigning(args.cluster_signing_cert_file, args.cluster_signing_key_file, args.cluster_signing_duration)
        manager = await build_controller_manager(client, plugins, controllers=args.controllers, clients=clients,
                                                 root_ca=root_ca, signing=signing, metrics=WorkqueueMetrics(registry))
        if args.metrics_port is not None:
            endpoint = await serve_metrics(registry, args.metrics_address, args.metrics_port)
        return await _run_controllers(client, manager, election)
    finally:
        if endpoint is not None:
            await endpoint.cleanup()
        await clients.close()
        await client.close()


async def _run_controllers(client: RESTClient, manager: ControllerManager, election: LeaderElectionConfig | None) -> int:
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)

    # Without an election the controllers run until the signal; with one, only while leading.
    work = run_controllers(manager) if election is None else elector(client, election, manager).run()
    electing = asyncio.create_task(work)
    stopping = asyncio.create_task(stop.wait())
    await asyncio.wait([electing, stopping], return_when=asyncio.FIRST_COMPLETED)
    if electing.done():
        stopping.cancel()
        electing.result()  # a crash of the leader's work surfaces here
        assert election is not None  # run_controllers only ends by cancellation
        print(f"kplane: {election.identity} lost the lease {election.lease_namespace}/{election.lease_name}", file=sys.stderr, flush=True)
        return 1
    electing.cancel()  # stops the controllers, then hands the Lease back
    with contextlib.suppress(asyncio.CancelledError):
        await electing
    return 0


async def _plugins(args: argparse.Namespace) -> int:
    """Register every plugin against a scratch scheme (no storage, nothing served, controllers
    built but never started) and report what each one added."""
    manager = PluginManager(skip_broken=args.skip_broken_plugins)
    client = RESTClient("")  # the controllers' client: never contacted
    try:
        manager.load_entry_points(frozenset(args.disable_plugin), args.plugins)
        scheme = Scheme()
        admission = AdmissionChain()
        registry = Registry(scheme, None, admission)  # type: ignore[arg-type]  # nothing is stored
        await manager.setup(scheme, registry, admission)
        await manager.register_controllers(ControllerManager(client))
    except PluginError as err:
        _report(err, args.verbose)
        return 1
    finally:
        await client.close()
    described = manager.describe()
    if args.output == "json":
        print(json.dumps(described, indent=2))
        return 0
    for plugin in described:
        print(_plugin_text(plugin))
    return 0


def _plugin_text(plugin: dict) -> str:
    """``kplane plugins``: the header, the hooks, one line per kind, then groups, admission and
    controllers; a skipped plugin with its problem."""
    origin = f"{plugin['distribution']} {plugin['version']}".strip() or "registered in-process"
    lines = [f"{plugin['name']}  ({plugin['module']}, {origin})" + ("  SKIPPED" if plugin["status"] != "loaded" else "")]
    if plugin["problem"]:
        lines.append(f"  problem: {plugin['problem']}")
    lines.append(f"  hooks: {', '.join(plugin['hooks'])}")
    kinds: dict[tuple[str, str], tuple[dict, list[str]]] = {}  # (group, resource) -> (resource, versions)
    for group in plugin["groups"]:
        for version in group["versions"]:
            for resource in version["resources"]:
                kinds.setdefault((group["name"], resource["resource"]), (resource, []))[1].append(version["version"])
    for (group, _), (resource, versions) in kinds.items():
        scope = "namespaced" if resource["scope"] == "Namespaced" else "cluster"
        subs = resource["subresources"]
        extra = f", subresources: {', '.join(subs)}" if subs else ""
        lines.append(f"  {resource['kind']} ({resource['resource']}.{group or 'core'}): {', '.join(versions)}; "
                     f"stored as {resource['storageVersion']}; {scope}{extra}")
    for group in plugin["groups"]:
        versions = ", ".join(v["version"] + (" (preferred)" if v["version"] == group["preferredVersion"] else "")
                             for v in group["versions"])
        lines.append(f"  group {group['name'] or 'core'}: {versions}")
    admission = [f"{phase} {', '.join(names)}" for phase, names in plugin["admission"].items() if names]
    if admission:
        lines.append(f"  admission: {'; '.join(admission)}")
    if plugin["controllers"]:
        lines.append(f"  controllers: {', '.join(plugin['controllers'])}")
    return "\n".join(lines)


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
