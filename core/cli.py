"""``kplane serve | plugins | version``."""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import logging
import signal
import sys
from pathlib import Path

from core.plugins import PluginError, PluginManager
from core.registry.admission import AdmissionChain
from core.registry.registry import Registry
from core.runtime.scheme import Scheme
from core.server.apiserver import APIServer, ServerConfig
from core.server.app import VERSION
from core.storage.interface import StorageError


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="kplane", description="The Kubernetes API machinery in Python.")
    sub = parser.add_subparsers(dest="command", required=True)
    serve = sub.add_parser("serve", help="run the API server")
    serve.add_argument("--data-dir", type=Path, default=Path(".kplane"), help="state and kubeconfig folder (default ./.kplane)")
    serve.add_argument("--storage", default="", help="storage URL (default sqlite:///DATA_DIR/state.db)")
    serve.add_argument("--address", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    serve.add_argument("--port", type=int, default=6443, help="port to listen on (default 6443; 0 picks a free one)")
    serve.add_argument("--disable-plugin", action="append", default=[], metavar="NAME", help="do not load this plugin")
    serve.add_argument("--no-controllers", action="store_true", help="do not run the controller-manager in-process")
    serve.add_argument("--simulated-nodes", type=int, default=3, metavar="N",
                       help="simulated nodes that schedule and run pods on paper (default 3; 0: none)")
    serve.add_argument("-v", "--verbose", action="store_true", help="log requests and debug details")
    plugins = sub.add_parser("plugins", help="list the plugins and what each registers")
    plugins.add_argument("--disable-plugin", action="append", default=[], metavar="NAME")
    sub.add_parser("version", help="print the Kubernetes version kplane serves")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.command == "serve":
        logging.basicConfig(level=logging.DEBUG if args.verbose else logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
        config = ServerConfig(
            data_dir=args.data_dir,
            storage_url=args.storage,
            address=args.address,
            port=args.port,
            disabled_plugins=frozenset(args.disable_plugin),
            run_controllers=not args.no_controllers,
            simulated_nodes=args.simulated_nodes,
        )
        try:
            return asyncio.run(_serve(config))
        except (PluginError, StorageError, ValueError, OSError) as err:
            print(f"kplane: {err}", file=sys.stderr)
            return 1
    if args.command == "plugins":
        return asyncio.run(_plugins(frozenset(args.disable_plugin)))
    print(f"kplane serves Kubernetes API {VERSION['major']}.{VERSION['minor']} ({VERSION['gitVersion']})")
    return 0


async def _serve(config: ServerConfig) -> int:
    server = APIServer(config)
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, stop.set)
    try:
        await server.start()
        print(f"kplane is serving on {server.url}", flush=True)
        print(f"  export KUBECONFIG={server.kubeconfig_path.resolve()}", flush=True)
        print("  kubectl get namespaces", flush=True)
        await stop.wait()
    finally:
        await server.stop()
    return 0


async def _plugins(disabled: frozenset[str]) -> int:
    """Register every plugin against a scratch scheme and report what each one added."""
    manager = PluginManager()
    try:
        manager.load_entry_points(disabled)
        scheme = Scheme()
        admission = AdmissionChain()
        registry = Registry(scheme, None, admission)  # type: ignore[arg-type]  # nothing is stored
        await manager.setup(scheme, registry, admission)
    except PluginError as err:
        print(f"kplane: {err}", file=sys.stderr)
        return 1
    for info in manager.infos.values():
        origin = f"{info.distribution} {info.version}".strip() or "registered in-process"
        print(f"{info.name}  ({info.module}, {origin})")
        print(f"  hooks: {', '.join(info.hooks)}")
        for rt in scheme.types():
            if rt.plugin == info.name:
                versions = ", ".join(v for v in scheme.groups()[rt.group] if v in rt.versions)
                scope = "namespaced" if rt.namespaced else "cluster"
                subs = registry.subresources(rt.group, rt.plural)
                extra = f", subresources: {', '.join(subs)}" if subs else ""
                print(f"  {rt.kind} ({rt.plural}.{rt.group or 'core'}): {versions}; stored as {rt.storage_version}; {scope}{extra}")
    return 0


if __name__ == "__main__":
    with contextlib.suppress(KeyboardInterrupt):
        sys.exit(main())
