"""The discovery.k8s.io API group: EndpointSlice at v1, and the EndpointSlice controller that
keeps them for Services (``Endpoints`` of the core group say the same in one object).

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import ControllerManager, Registry, Scheme, hookimpl
from kplane.plugins.discovery import strategy, types
from kplane.plugins.discovery.controllers.endpointslice import EndpointSliceController
from kplane.plugins.discovery.v1 import schemas as v1_schemas

GROUP = "discovery.k8s.io"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="EndpointSlice", plural="endpointslices", internal=types.EndpointSlice,
                    versions={"v1": v1_schemas.EndpointSliceSchema}, storage_version="v1", plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "EndpointSlice", v1_schemas.default_endpoint_slice)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "endpointslices", strategy.EndpointSliceStrategy())


@hookimpl
def kplane_register_controllers(manager: ControllerManager) -> None:
    manager.add("endpointslice", EndpointSliceController(manager.client_for("endpointslice-controller"), manager.informers))
