"""The standard controller set, assembled in one place so that the in-process controller-manager
of ``kplane serve`` and the stand-alone ``kplane controller-manager`` run the same controllers."""

from __future__ import annotations

from core.client.rest import RESTClient
from core.controllers.garbage import GarbageCollector
from core.controllers.manager import ALL, ControllerManager, ControllerSelection
from core.controllers.namespace import NamespaceController
from core.controllers.nodes import SimulatedNodes
from core.plugins import PluginManager


async def build_controller_manager(client: RESTClient, plugins: PluginManager, *, controllers: ControllerSelection = ALL,
                                   simulated_nodes: int = 3) -> ControllerManager:
    """A manager holding the selected controllers, not started yet: core's ``namespace``,
    ``garbagecollector`` and ``simulated-nodes``, and those plugins add (``replicaset``, ...).

    Raises ValueError if the selection names a controller nobody registers, before anything
    runs: a misspelt ``-garbagecollector`` must not quietly leave the collector on.
    """
    manager = ControllerManager(client, controllers)
    manager.add("namespace", NamespaceController(client))
    manager.add("garbagecollector", GarbageCollector(client, manager.informers))
    if simulated_nodes:
        manager.add("simulated-nodes", SimulatedNodes(client, manager.informers, count=simulated_nodes))
    else:
        manager.known.add("simulated-nodes")  # a known name, with nothing to run
    await plugins.register_controllers(manager)
    unknown = controllers.unknown(manager.known)
    if unknown:
        raise ValueError(f"--controllers: unknown controller(s) {', '.join(unknown)}; known: {', '.join(sorted(manager.known))}")
    return manager
