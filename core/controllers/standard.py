"""The standard controller set, assembled in one place so that the in-process controller-manager
of ``kplane serve`` and the stand-alone ``kplane controller-manager`` run the same controllers."""

from __future__ import annotations

from collections.abc import Callable

from kplane.core.client.rest import RESTClient
from kplane.core.controllers.garbage import GarbageCollector
from kplane.core.controllers.manager import ALL, ControllerManager, ControllerSelection
from kplane.core.controllers.namespace import NamespaceController
from kplane.core.controllers.nodes import SimulatedNodes
from kplane.core.plugins import PluginManager


async def build_controller_manager(client: RESTClient, plugins: PluginManager, *, controllers: ControllerSelection = ALL,
                                   simulated_nodes: int = 3,
                                   serves: Callable[[str, str], bool] | None = None) -> ControllerManager:
    """A manager holding the selected controllers, not started yet: core's ``namespace``,
    ``garbagecollector`` and ``simulated-nodes``, and those plugins add (``replicaset``, ...).

    ``serves(group, plural)``, when given, says which resources the server has: a core controller
    whose resources are missing (a server of one group, ``kplane serve --plugins sample_api``, has
    no namespaces, nodes or pods) stays a known name with nothing to run.

    Raises ValueError if the selection names a controller nobody registers, before anything
    runs: a misspelt ``-garbagecollector`` must not quietly leave the collector on.
    """
    def served(*plurals: str) -> bool:
        return serves is None or all(serves("", plural) for plural in plurals)

    manager = ControllerManager(client, controllers)
    if served("namespaces"):
        manager.add("namespace", NamespaceController(client))
    else:
        manager.known.add("namespace")
    manager.add("garbagecollector", GarbageCollector(client, manager.informers))
    if simulated_nodes and served("nodes", "pods"):
        manager.add("simulated-nodes", SimulatedNodes(client, manager.informers, count=simulated_nodes))
    else:
        manager.known.add("simulated-nodes")  # a known name, with nothing to run
    await plugins.register_controllers(manager)
    unknown = controllers.unknown(manager.known)
    if unknown:
        raise ValueError(f"--controllers: unknown controller(s) {', '.join(unknown)}; known: {', '.join(sorted(manager.known))}")
    return manager
