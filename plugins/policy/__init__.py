"""The policy API group: PodDisruptionBudget at policy/v1, and the disruption controller that
keeps each budget's status. The ``pods/eviction`` subresource honouring budgets is the core
plugin's (pods are its resource), as Eviction is served with pods in Kubernetes.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import ControllerManager, Registry, Scheme, hookimpl
from kplane.plugins.policy import strategy, types
from kplane.plugins.policy.controllers.disruption import DisruptionController
from kplane.plugins.policy.v1 import protobuf, schemas

GROUP = "policy"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="PodDisruptionBudget", plural="poddisruptionbudgets", internal=types.PodDisruptionBudget,
                    versions={"v1": schemas.PodDisruptionBudgetSchema}, storage_version="v1", short_names=["pdb"],
                    plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_protobuf(GROUP, "v1", "PodDisruptionBudget", protobuf.POD_DISRUPTION_BUDGET)  # `kubectl create pdb`


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "poddisruptionbudgets", strategy.PodDisruptionBudgetStrategy())
    registry.add_strategy(GROUP, "poddisruptionbudgets", strategy.PodDisruptionBudgetStatusStrategy(), subresource="status")


@hookimpl
def kplane_register_controllers(manager: ControllerManager) -> None:
    manager.add("disruption", DisruptionController(manager.client_for("disruption-controller"), manager.informers))
