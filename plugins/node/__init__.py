"""The node.k8s.io API group: RuntimeClass at v1, with the RuntimeClass admission that gives a
pod its class's overhead and scheduling (:mod:`.admission`).

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import AdmissionChain, Registry, Scheme, SharedInformerFactory, hookimpl
from kplane.plugins.node import admission, strategy, types
from kplane.plugins.node.v1 import schemas as v1_schemas

GROUP = "node.k8s.io"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="RuntimeClass", plural="runtimeclasses", internal=types.RuntimeClass,
                    versions={"v1": v1_schemas.RuntimeClassSchema}, storage_version="v1", namespaced=False,
                    plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "runtimeclasses", strategy.RuntimeClassStrategy())


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry, informers: SharedInformerFactory | None) -> None:
    runtime_classes = admission.RuntimeClassAdmission(registry, informers.informer(GROUP, "v1", "runtimeclasses") if informers else None)
    chain.add_mutating("RuntimeClass", runtime_classes.mutate)
    chain.add_validating("RuntimeClass", runtime_classes.validate)
