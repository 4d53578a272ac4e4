"""The apps API group: Deployment, ReplicaSet, StatefulSet, DaemonSet and ControllerRevision at apps/v1, and
their controllers (and the ReplicationController's, the ReplicaSet controller kept for core/v1).

apps/v1beta2 is registered too, as the example of a second version converting through the
internal form, but it is off by default, as in Kubernetes (not served since 1.16): serve it with
``kplane serve --runtime-config apps/v1beta2=true``.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import ControllerManager, Registry, ScaleAdapter, Scheme, ServerConfig, hookimpl
from kplane.plugins.apps import strategy, systempods, types
from kplane.plugins.apps.controllers.daemonset import DaemonSetController
from kplane.plugins.apps.controllers.deployment import DeploymentController
from kplane.plugins.apps.controllers.replicaset import REPLICATION_CONTROLLER, ReplicaSetController
from kplane.plugins.apps.controllers.statefulset import StatefulSetController
from kplane.plugins.apps.v1 import conversion, defaults, protobuf, schemas as v1_schemas
from kplane.plugins.apps.v1beta2 import schemas as v1beta2_schemas

GROUP = "apps"
VERSIONS = ["v1", "v1beta2"]


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="Deployment", plural="deployments", internal=types.Deployment,
                    versions={"v1": v1_schemas.DeploymentSchema, "v1beta2": v1beta2_schemas.DeploymentSchema},
                    storage_version="v1", short_names=["deploy"], categories=["all"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="ReplicaSet", plural="replicasets", internal=types.ReplicaSet,
                    versions={"v1": v1_schemas.ReplicaSetSchema, "v1beta2": v1beta2_schemas.ReplicaSetSchema},
                    storage_version="v1", short_names=["rs"], categories=["all"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="StatefulSet", plural="statefulsets", internal=types.StatefulSet,
                    versions={"v1": v1_schemas.StatefulSetSchema}, storage_version="v1", short_names=["sts"],
                    categories=["all"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="ControllerRevision", plural="controllerrevisions", internal=types.ControllerRevision,
                    versions={"v1": v1_schemas.ControllerRevisionSchema}, storage_version="v1", plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="DaemonSet", plural="daemonsets", internal=types.DaemonSet,
                    versions={"v1": v1_schemas.DaemonSetSchema}, storage_version="v1", short_names=["ds"],
                    categories=["all"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, VERSIONS)
    scheme.set_served_by_default(GROUP, "v1beta2", False)


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    for version in VERSIONS:  # v1beta2 shares v1's shape, defaults and conversions
        scheme.add_defaulter(GROUP, version, "Deployment", defaults.default_deployment)
        scheme.add_defaulter(GROUP, version, "ReplicaSet", defaults.default_replica_set)
        for kind in ("Deployment", "ReplicaSet"):
            scheme.add_conversion(GROUP, version, kind, to_internal=conversion.to_internal,
                                  from_internal=conversion.from_internal)
    scheme.add_defaulter(GROUP, "v1", "DaemonSet", defaults.default_daemon_set)
    scheme.add_conversion(GROUP, "v1", "DaemonSet", to_internal=conversion.to_internal, from_internal=conversion.from_internal)
    scheme.add_defaulter(GROUP, "v1", "StatefulSet", defaults.default_stateful_set)
    scheme.add_conversion(GROUP, "v1", "StatefulSet", to_internal=conversion.to_internal, from_internal=conversion.from_internal)
    scheme.add_protobuf(GROUP, "v1", "Deployment", protobuf.DEPLOYMENT)  # `kubectl create deployment`
    scheme.add_protobuf(GROUP, "v1", "ReplicaSet", protobuf.REPLICA_SET)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "deployments", strategy.DeploymentStrategy())
    registry.add_strategy(GROUP, "deployments", strategy.DeploymentStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "replicasets", strategy.ReplicaSetStrategy())
    registry.add_strategy(GROUP, "replicasets", strategy.ReplicaSetStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "statefulsets", strategy.StatefulSetStrategy())
    registry.add_strategy(GROUP, "statefulsets", strategy.StatefulSetStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "controllerrevisions", strategy.ControllerRevisionStrategy())
    registry.add_strategy(GROUP, "daemonsets", strategy.DaemonSetStrategy())
    registry.add_strategy(GROUP, "daemonsets", strategy.DaemonSetStatusStrategy(), subresource="status")
    registry.add_scale(GROUP, "deployments", ScaleAdapter())
    registry.add_scale(GROUP, "replicasets", ScaleAdapter())
    registry.add_scale(GROUP, "statefulsets", ScaleAdapter())


@hookimpl(trylast=True)
async def kplane_post_start(registry: Registry, config: ServerConfig | None) -> None:
    """The system pods (CoreDNS, kube-proxy) in kube-system, when the server runs with them;
    last, once the core plugin has made the namespace."""
    if config is not None and config.system_pods:
        await systempods.ensure(registry)


@hookimpl
def kplane_register_controllers(manager: ControllerManager) -> None:
    manager.add("replicaset", ReplicaSetController(manager.client_for("replicaset-controller"), manager.informers))
    manager.add("replicationcontroller", ReplicaSetController(manager.client_for("replication-controller"), manager.informers,
                                                              managed=REPLICATION_CONTROLLER))
    manager.add("deployment", DeploymentController(manager.client_for("deployment-controller"), manager.informers))
    manager.add("daemonset", DaemonSetController(manager.client_for("daemon-set-controller"), manager.informers))
    manager.add("statefulset", StatefulSetController(manager.client_for("statefulset-controller"), manager.informers))
