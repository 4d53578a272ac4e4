"""The coordination.k8s.io API group: Lease, served and stored at v1.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import Registry, Scheme, hookimpl
from kplane.plugins.coordination import strategy, types
from kplane.plugins.coordination.v1 import protobuf as v1_protobuf
from kplane.plugins.coordination.v1 import schemas as v1_schemas

GROUP = "coordination.k8s.io"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="Lease", plural="leases", internal=types.Lease,
                    versions={"v1": v1_schemas.LeaseSchema}, storage_version="v1", plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_protobuf(GROUP, "v1", "Lease", v1_protobuf.LEASE)  # client-go's leader election


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "leases", strategy.LeaseStrategy())
