"""``componentstatuses`` (v1, deprecated since 1.19 and still served): ``kubectl get cs`` lists
``scheduler``, ``controller-manager`` and ``etcd-0``, each Healthy or not, as this server knows
them. Never stored: each read asks afresh (kube-apiserver probes the components' ports).

* ``etcd-0``: the storage answers a read (whatever the backend: the name is kube's).
* ``controller-manager`` and ``scheduler`` (kplane's scheduler is the simulated nodes'
  controller, run by the controller-manager): healthy while a controller-manager holds its
  leader Lease and renews it within the lease's duration, or when this server runs its
  controllers without an election.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, datetime

from kplane.api import (
    NAME, APIError, Column, ListOptions, ListPage, ObjectMeta, Registry, RequestContext, Served, ServerConfig, Strategy,
    clock, errors,
)

DEPRECATION = "v1 ComponentStatus is deprecated in v1.19+"
COMPONENTS = ("scheduler", "controller-manager", "etcd-0")
HEALTHY = "Healthy"


@dataclass(slots=True)
class ComponentCondition:
    type: str = ""
    status: str = ""
    message: str | None = None
    error: str | None = None


@dataclass(slots=True)
class ComponentStatus:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    conditions: list[ComponentCondition] | None = None


def _status(obj: dict) -> str:
    """``printComponentStatus``: Healthy, Unhealthy, or Unknown without a Healthy condition."""
    for condition in obj.get("conditions") or []:
        if condition.get("type") == HEALTHY:
            return {"True": "Healthy", "False": "Unhealthy"}.get(condition.get("status", ""), "Unknown")
    return "Unknown"


def _first(obj: dict, key: str) -> str:
    return str(((obj.get("conditions") or [{}])[0]).get(key) or "")


COLUMNS = (
    NAME,
    Column("Status", "string", _status, description="Status of the component conditions"),
    Column("Message", "string", lambda o: _first(o, "message"), description="Message of the component conditions"),
    Column("Error", "string", lambda o: _first(o, "error"), description="Error of the component conditions"),
)


class ComponentStatusColumns(Strategy):
    """What the Tables show, and the deprecation warning every answer carries."""

    columns = COLUMNS
    version_warnings = (DEPRECATION,)


class ComponentStatusREST(Served):
    def __init__(self, registry: Registry, config: ServerConfig | None) -> None:
        self.registry = registry
        self.config = config or ServerConfig()

    async def get(self, ctx: RequestContext, name: str) -> ComponentStatus:
        if name not in COMPONENTS:
            raise errors.not_found("componentstatuses", "", name)
        return await self._probe(name)

    async def list(self, ctx: RequestContext, opts: ListOptions) -> ListPage:
        return ListPage([await self._probe(name) for name in COMPONENTS], "")

    async def _probe(self, name: str) -> ComponentStatus:
        healthy, message = await (self._storage() if name == "etcd-0" else self._controllers())
        condition = ComponentCondition(type=HEALTHY, status="True" if healthy else "False",
                                       message=message if healthy else None, error=None if healthy else message)
        return ComponentStatus(metadata=ObjectMeta(name=name), conditions=[condition])

    async def _storage(self) -> tuple[bool, str]:
        store = self.registry.store("", "namespaces")
        if store is None:
            return False, "no storage is served"
        try:
            await store.get_internal("", "default")
        except APIError as err:
            return False, err.message
        return True, "ok"

    async def _controllers(self) -> tuple[bool, str]:
        election = self.config.leader_election
        if election is None:
            return (True, "ok") if self.config.run_controllers else (False, "no controller-manager runs in this server")
        store = self.registry.store("coordination.k8s.io", "leases")
        lease = await store.get_internal(election.lease_namespace, election.lease_name) if store is not None else None
        renewed = getattr(getattr(lease, "spec", None), "renew_time", None)
        if lease is None or not lease.spec.holder_identity or renewed is None:
            return False, f"no controller-manager holds the Lease {election.lease_namespace}/{election.lease_name}"
        age = (datetime.now(UTC) - clock.parse(renewed)).total_seconds()
        duration = lease.spec.lease_duration_seconds or election.lease_duration
        if age > duration:
            return False, f"the controller-manager last renewed its Lease {int(age)}s ago"
        return True, "ok"
