"""The standard controller set, assembled in one place so that the in-process controller-manager
of ``kplane serve`` and the stand-alone ``kplane controller-manager`` run the same controllers."""

from __future__ import annotations

from kplane.core.client.rest import RESTClient
from kplane.core.controllers.clients import ClientBuilder
from kplane.core.controllers.garbage import GarbageCollector
from kplane.core.controllers.manager import ALL, ClusterSigning, ControllerManager, ControllerSelection
from kplane.core.metrics.workqueue import WorkqueueMetrics
from kplane.core.plugins import PluginManager


async def build_controller_manager(client: RESTClient, plugins: PluginManager, *,
                                   controllers: ControllerSelection = ALL,
                                   clients: ClientBuilder | None = None,
                                   root_ca: bytes | None = None,
                                   signing: ClusterSigning = ClusterSigning(),
                                   metrics: WorkqueueMetrics | None = None) -> ControllerManager:
    """A manager holding the selected controllers, not started yet: core's generic
    ``garbagecollector``, which works on whatever the server serves, and those the plugins add
    (``namespace``, ``simulated-nodes``, ``replicaset``, ...). ``client`` is the manager's own
    (the informers'); ``clients`` gives each controller its own (by default ``client`` too);
    ``root_ca`` is the CA bundle that verifies the server, for the pods (``manager.root_ca``);
    ``signing`` the CA certificate requests are signed with (``manager.signing``).

    Raises ValueError if the selection names a controller nobody registers, before anything
    runs: a misspelt ``-garbagecollector`` must not quietly leave the collector on.
    """
    manager = ControllerManager(client, controllers, clients=clients, root_ca=root_ca,
                                 signing=signing, metrics=metrics)
    manager.add("garbagecollector", GarbageCollector(manager.client_for("generic-garbage-collector"), manager.informers))
    await plugins.register_controllers(manager)
    unknown = controllers.unknown(manager.known)
    if unknown:
        raise ValueError(f"--controllers: unknown controller(s) {', '.join(unknown)}; known: {', '.join(sorted(manager.known))}")
    return manager
