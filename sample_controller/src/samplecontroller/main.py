"""``sample-controller``: the controller as a program (the original's ``main.go`` and ``pkg/signals``).

    sample-controller --kubeconfig .kplane/kubeconfig

It connects with a kubeconfig (``--master`` overrides its server), shares one informer per
resource through two SharedInformerFactory instances (Kubernetes' own resources and the sample's
group) that hand every object to the handlers again each 30 seconds, and runs the controller with
two workers until SIGINT or SIGTERM; a second signal exits at once.
"""

from __future__ import annotations

import argparse
import asyncio
import dataclasses
import logging
import os
import signal
import sys

from kplane.api import ClientConfig, KubeconfigError, RESTClient, SharedInformerFactory, load_kubeconfig
from samplecontroller import GROUP, PLURAL, VERSION
from samplecontroller.controller import CacheSyncError, Controller

log = logging.getLogger("samplecontroller")

RESYNC = 30.0  # seconds
WORKERS = 2


def setup_signal_handler() -> asyncio.Event:
    """An event set on SIGINT or SIGTERM; a second one of these signals exits with code 1."""
    stop = asyncio.Event()

    def on_signal() -> None:
        if stop.is_set():
            os._exit(1)  # asked twice: do not wait for a clean stop
        stop.set()

    loop = asyncio.get_running_loop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        loop.add_signal_handler(sig, on_signal)
    return stop


def build_config_from_flags(master: str, kubeconfig: str) -> ClientConfig:
    """clientcmd.BuildConfigFromFlags: the kubeconfig's current context, its server replaced by
    ``master`` when given; with neither, the kubeconfig kubectl would use (``KUBECONFIG`` or
    ``~/.kube/config``; there is no in-cluster configuration to try first)."""
    if master and not kubeconfig:
        return ClientConfig(server=master)
    config = load_kubeconfig(kubeconfig or None)
    return dataclasses.replace(config, server=master) if master else config


async def run(master: str, kubeconfig: str) -> int:
    stop = setup_signal_handler()
    config = build_config_from_flags(master, kubeconfig)
    kube_client = RESTClient.from_config(config)
    example_client = RESTClient.from_config(config)
    kube_informer_factory = SharedInformerFactory(kube_client, resync=RESYNC)
    example_informer_factory = SharedInformerFactory(example_client, resync=RESYNC)
    try:
        controller = Controller(kube_client, example_client,
                                kube_informer_factory.informer("apps", "v1", "deployments"),
                                example_informer_factory.informer(GROUP, VERSION, PLURAL))
        # start() returns at once: the informers run as tasks of their own.
        kube_informer_factory.start()
        example_informer_factory.start()
        await controller.run(stop, WORKERS)
        return 0
    finally:
        await kube_informer_factory.stop()
        await example_informer_factory.stop()
        await kube_client.close()
        await example_client.close()


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="sample-controller", description="Keeps one Deployment per Foo (samplecontroller.k8s.io/v1alpha1).")
    parser.add_argument("--kubeconfig", "-kubeconfig", default="", metavar="FILE",
                        help="Path to a kubeconfig. Only required if out-of-cluster.")
    parser.add_argument("--master", "-master", default="", metavar="URL",
                        help="The address of the Kubernetes API server. Overrides any value in kubeconfig. Only required if out-of-cluster.")
    parser.add_argument("-v", "--v", type=int, default=0, metavar="LEVEL", help="log verbosity; 4 and above log debug details")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    logging.basicConfig(level=logging.DEBUG if args.v >= 4 else logging.INFO, format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        return asyncio.run(run(args.master, args.kubeconfig))
    except KubeconfigError as err:
        log.error("Error building kubeconfig: %s", err)
        return 1
    except CacheSyncError as err:
        log.error("Error running controller: %s", err)
        return 1


if __name__ == "__main__":
    sys.exit(main())
