"""What the RBAC plugin keeps for one server between its hooks: the server's authorizers (handed
to ``kplane_register_strategies``, needed by the escalation check) and the policy cache on its
loopback informers (made by whichever of the admission and authorizer hooks comes first).

A plugin module is shared by every server of a process, so each server's state is kept by that
server's Registry, which all those hooks receive.
"""

from __future__ import annotations

from dataclasses import dataclass
from weakref import WeakKeyDictionary

from kplane.api import Authorizers, Registry, SharedInformerFactory
from kplane.plugins.rbac.resolver import PolicyCache
from kplane.plugins.rbac.types import GROUP


@dataclass
class ServerState:
    authorizers: Authorizers | None = None
    cache: PolicyCache | None = None


_servers: WeakKeyDictionary[Registry, ServerState] = WeakKeyDictionary()


def of(registry: Registry) -> ServerState:
    return _servers.setdefault(registry, ServerState())


def cache(registry: Registry, informers: SharedInformerFactory) -> PolicyCache | None:
    """The server's policy cache; None when it does not serve the RBAC group (``--runtime-config``)."""
    state = of(registry)
    if state.cache is None and registry.store(GROUP, "clusterrolebindings") is not None:
        state.cache = PolicyCache(informers)
    return state.cache
