"""The scheduling.k8s.io API group: PriorityClass at v1, and the two built-in classes
(``system-node-critical``, ``system-cluster-critical``) made at every start, as kube-apiserver's
``scheduling/bootstrap-system-priority-classes`` post-start hook makes them. Pods take their
priority from these classes in the core group's Priority admission.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import APIError, Registry, RequestContext, Scheme, hookimpl
from kplane.plugins.scheduling import strategy, types
from kplane.plugins.scheduling.v1 import protobuf as v1_protobuf, schemas as v1_schemas

GROUP = "scheduling.k8s.io"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="PriorityClass", plural="priorityclasses", internal=types.PriorityClass,
                    versions={"v1": v1_schemas.PriorityClassSchema}, storage_version="v1", namespaced=False,
                    short_names=["pc"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "PriorityClass", v1_schemas.default_priority_class)
    scheme.add_protobuf(GROUP, "v1", "PriorityClass", v1_protobuf.PRIORITY_CLASS)  # `kubectl create priorityclass`


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "priorityclasses", strategy.PriorityClassStrategy())


@hookimpl
async def kplane_post_start(registry: Registry) -> None:
    """The built-in classes exist from the first start on (left as they are when they do)."""
    store = registry.store(GROUP, "priorityclasses")
    for name, (value, description) in strategy.SYSTEM_CLASSES.items():
        if await store.get_internal("", name) is not None:
            continue
        pc = types.PriorityClass(value=value, description=description, preemption_policy=v1_schemas.DEFAULT_PREEMPTION_POLICY)
        pc.metadata.name = name
        try:
            await store.create(RequestContext(group=GROUP, resource="priorityclasses", name=name), pc)
        except APIError as err:  # another server on the same storage was quicker
            if err.code != 409:
                raise
