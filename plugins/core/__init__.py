"""The core API group, served at ``/api/v1``: Namespace, Pod, Event, ConfigMap, Secret,
ServiceAccount (with its ``token`` subresource and the authenticator of those tokens), Node,
Service, Endpoints, PersistentVolume, PersistentVolumeClaim, ReplicationController, PodTemplate,
LimitRange, ResourceQuota (and the ``bindings`` resource); its admission chain, its controllers (namespace deletion,
serviceaccounts, the simulated nodes that schedule and run pods), and the system namespaces and
``default/kubernetes`` Service made at start.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import (
    APIError, AdmissionChain, Authenticators, ControllerManager, PluginOptions, Registry, RequestContext, Scheme,
    ServerConfig, SharedInformerFactory, hookimpl,
)
from kplane.plugins.core import (
    admission, bindings, componentstatuses, endpoints, kubernetes_service, limitranger, limits, pod_admission, replication, services, strategy,
    tokens, types, volumes,
)
from kplane.plugins.core.controllers.endpoints import EndpointsController
from kplane.plugins.core.controllers.resourcequota import ResourceQuotaController
from kplane.plugins.core.quota.admission import ResourceQuotaAdmission
from kplane.plugins.core.containers import exec as container_exec, logs as container_logs
from kplane.plugins.core.controllers.namespace import NamespaceController
from kplane.plugins.core.controllers.nodes import SimulatedNodes
from kplane.plugins.core.controllers.nodelifecycle import NodeLifecycleController, TaintEvictionController
from kplane.plugins.core.controllers.nodelifecycle import settings as nodelifecycle_settings
from kplane.plugins.core.controllers.nodes import settings as node_flags
from kplane.plugins.core.portforward.serving import PortForwardREST
from kplane.plugins.core.proxy import NodeProxyREST, PodProxyREST, ServiceProxyREST
from kplane.plugins.core.rootca import RootCAPublisher
from kplane.plugins.core.serviceaccounts import ServiceAccountsController
from kplane.plugins.core.tokens import authenticator, settings, tokenrequest
from kplane.plugins.core.tokens.controller import TokensController
from kplane.plugins.core.v1 import conversion, defaults, protobuf, schemas
from kplane.plugins.core.v1 import endpoints as v1_endpoints, limits as v1_limits, replication as v1_replication
from kplane.plugins.core.v1 import services as v1_services, volumes as v1_volumes

GROUP = ""
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@hookimpl
def kplane_add_options(parser: PluginOptions) -> None:
    settings.add_flags(parser)
    nodelifecycle_settings.add_flags(parser)
    node_flags.add_flags(parser)


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="Namespace", plural="namespaces", internal=types.Namespace,
                    versions={"v1": schemas.NamespaceSchema}, storage_version="v1", namespaced=False,
                    short_names=["ns"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="Pod", plural="pods", internal=types.Pod,
                    versions={"v1": schemas.PodSchema}, storage_version="v1",
                    short_names=["po"], categories=["all"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="Event", plural="events", internal=types.Event,
                    versions={"v1": schemas.EventSchema}, storage_version="v1",
                    short_names=["ev"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="ConfigMap", plural="configmaps", internal=types.ConfigMap,
                    versions={"v1": schemas.ConfigMapSchema}, storage_version="v1",
                    short_names=["cm"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="Secret", plural="secrets", internal=types.Secret,
                    versions={"v1": schemas.SecretSchema}, storage_version="v1", plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="ServiceAccount", plural="serviceaccounts", internal=types.ServiceAccount,
                    versions={"v1": schemas.ServiceAccountSchema}, storage_version="v1",
                    short_names=["sa"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="Node", plural="nodes", internal=types.Node,
                    versions={"v1": schemas.NodeSchema}, storage_version="v1", namespaced=False,
                    short_names=["no"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="Service", plural="services", internal=services.Service,
                    versions={"v1": v1_services.ServiceSchema}, storage_version="v1",
                    short_names=["svc"], categories=["all"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="ComponentStatus", plural="componentstatuses", internal=componentstatuses.ComponentStatus,
                    versions={"v1": schemas.ComponentStatusSchema}, storage_version="v1", namespaced=False,
                    short_names=["cs"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="Binding", plural="bindings", internal=types.Binding,
                    versions={"v1": schemas.BindingSchema}, storage_version="v1", plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="Endpoints", plural="endpoints", internal=endpoints.Endpoints,
                    versions={"v1": v1_endpoints.EndpointsSchema}, storage_version="v1", singular="endpoints",
                    short_names=["ep"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="PersistentVolumeClaim", plural="persistentvolumeclaims",
                    internal=volumes.PersistentVolumeClaim, versions={"v1": v1_volumes.PersistentVolumeClaimSchema},
                    storage_version="v1", short_names=["pvc"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="PersistentVolume", plural="persistentvolumes", internal=volumes.PersistentVolume,
                    versions={"v1": v1_volumes.PersistentVolumeSchema}, storage_version="v1", namespaced=False,
                    short_names=["pv"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="ReplicationController", plural="replicationcontrollers",
                    internal=replication.ReplicationController, versions={"v1": v1_replication.ReplicationControllerSchema},
                    storage_version="v1", short_names=["rc"], categories=["all"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="PodTemplate", plural="podtemplates", internal=replication.PodTemplate,
                    versions={"v1": v1_replication.PodTemplateSchema}, storage_version="v1", plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="LimitRange", plural="limitranges", internal=limits.LimitRange,
                    versions={"v1": v1_limits.LimitRangeSchema}, storage_version="v1", short_names=["limits"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="ResourceQuota", plural="resourcequotas", internal=limits.ResourceQuota,
                    versions={"v1": v1_limits.ResourceQuotaSchema}, storage_version="v1", short_names=["quota"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "Pod", defaults.default_pod)
    scheme.add_defaulter(GROUP, "v1", "Secret", defaults.default_secret)
    scheme.add_defaulter(GROUP, "v1", "Node", defaults.default_node)
    scheme.add_defaulter(GROUP, "v1", "Service", v1_services.default_service)
    scheme.add_defaulter(GROUP, "v1", "Endpoints", v1_endpoints.default_endpoints)
    scheme.add_defaulter(GROUP, "v1", "PersistentVolumeClaim", v1_volumes.default_claim)
    scheme.add_defaulter(GROUP, "v1", "PersistentVolume", v1_volumes.default_volume)
    scheme.add_defaulter(GROUP, "v1", "ReplicationController", v1_replication.default_replication_controller)
    scheme.add_defaulter(GROUP, "v1", "PodTemplate", v1_replication.default_pod_template)
    scheme.add_defaulter(GROUP, "v1", "LimitRange", v1_limits.default_limit_range)
    scheme.add_conversion(GROUP, "v1", "Secret", to_internal=conversion.secret_to_internal)
    scheme.add_conversion(GROUP, "v1", "Pod", to_internal=conversion.pod_to_internal,
                          from_internal=conversion.pod_from_internal)
    for kind, message in protobuf.MESSAGES.items():  # kubectl's `create <generator>` bodies
        scheme.add_protobuf(GROUP, "v1", kind, message)


@hookimpl
def kplane_register_strategies(registry: Registry, plugin_name: str, config: ServerConfig | None) -> None:
    registry.add_strategy(GROUP, "namespaces", strategy.NamespaceStrategy())
    registry.add_strategy(GROUP, "namespaces", strategy.NamespaceStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "namespaces", strategy.NamespaceFinalizeStrategy(), subresource="finalize")
    registry.add_strategy(GROUP, "pods", strategy.PodStrategy())
    registry.add_strategy(GROUP, "pods", strategy.PodStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "pods", strategy.PodBindingStrategy(), subresource="binding")
    registry.add_rest(GROUP, "bindings", bindings.BindingsREST(registry))
    registry.add_rest(GROUP, "componentstatuses", componentstatuses.ComponentStatusREST(registry, config))
    registry.add_strategy(GROUP, "componentstatuses", componentstatuses.ComponentStatusColumns())
    from kplane.plugins.core import eviction  # here: it reads the policy group's types, which import this plugin's
    registry.add_subresource(GROUP, "pods", "eviction", eviction.EvictionREST(registry))
    registry.add_subresource(GROUP, "pods", "log", container_logs.PodLogREST(registry))
    registry.add_subresource(GROUP, "pods", "exec", container_exec.PodExecREST(registry))
    registry.add_subresource(GROUP, "pods", "attach", container_exec.PodAttachREST(registry))
    registry.add_subresource(GROUP, "pods", "portforward", PortForwardREST(registry))
    registry.add_subresource(GROUP, "pods", "proxy", PodProxyREST(registry))
    registry.add_strategy(GROUP, "events", strategy.EventStrategy())
    registry.add_strategy(GROUP, "configmaps", strategy.ConfigMapStrategy())
    registry.add_strategy(GROUP, "secrets", strategy.SecretStrategy())
    registry.add_strategy(GROUP, "serviceaccounts", strategy.ServiceAccountStrategy())
    made = tokens.create(registry, settings.settings_of(config, plugin_name), config)
    registry.add_subresource(GROUP, "serviceaccounts", "token", tokenrequest.TokenREST(registry, made.keys, made.settings))
    registry.add_strategy(GROUP, "nodes", strategy.NodeStrategy())
    registry.add_strategy(GROUP, "nodes", strategy.NodeStatusStrategy(), subresource="status")
    registry.add_subresource(GROUP, "nodes", "proxy", NodeProxyREST(registry))
    registry.add_strategy(GROUP, "services", services.ServiceStrategy())
    registry.add_strategy(GROUP, "services", services.ServiceStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "endpoints", endpoints.EndpointsStrategy())
    registry.add_subresource(GROUP, "services", "proxy", ServiceProxyREST(registry))
    registry.add_strategy(GROUP, "persistentvolumeclaims", volumes.PersistentVolumeClaimStrategy())
    registry.add_strategy(GROUP, "persistentvolumeclaims", volumes.PersistentVolumeClaimStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "persistentvolumes", volumes.PersistentVolumeStrategy())
    registry.add_strategy(GROUP, "persistentvolumes", volumes.PersistentVolumeStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "replicationcontrollers", replication.ReplicationControllerStrategy())
    registry.add_strategy(GROUP, "replicationcontrollers", replication.ReplicationControllerStatusStrategy(), subresource="status")
    registry.add_scale(GROUP, "replicationcontrollers", replication.ReplicationControllerScale())
    registry.add_strategy(GROUP, "podtemplates", replication.PodTemplateStrategy())
    registry.add_strategy(GROUP, "limitranges", limits.LimitRangeStrategy())
    registry.add_strategy(GROUP, "resourcequotas", limits.ResourceQuotaStrategy())
    registry.add_strategy(GROUP, "resourcequotas", limits.ResourceQuotaStatusStrategy(), subresource="status")


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry, informers: SharedInformerFactory | None) -> None:
    """kube-apiserver's order: NamespaceLifecycle, LimitRanger, then the pod plugins; the
    ResourceQuota check last of the validating ones, as kube's."""
    limit_ranger = limitranger.LimitRanger(registry, informers.informer("", "v1", "limitranges") if informers else None)
    chain.add_mutating("NamespaceLifecycle", admission.NamespaceLifecycle(registry))
    chain.add_mutating("LimitRanger", limit_ranger.mutate)
    chain.add_mutating("ServiceAccount", pod_admission.ServiceAccountAdmission(registry))
    classes = informers.informer("scheduling.k8s.io", "v1", "priorityclasses") if informers and registry.store(
        "scheduling.k8s.io", "priorityclasses") else None
    chain.add_mutating("Priority", pod_admission.PriorityAdmission(registry, classes))
    chain.add_mutating("DefaultTolerationSeconds", pod_admission.default_toleration_seconds)
    chain.add_validating("NamespaceLifecycle", admission.immortal_namespaces)
    chain.add_validating("LimitRanger", limit_ranger.validate)
    chain.add_validating("ResourceQuota", ResourceQuotaAdmission(registry, informers.informer("", "v1", "resourcequotas") if informers else None))


@hookimpl
async def kplane_register_authenticators(authenticators: Authenticators, registry: Registry, config: ServerConfig | None) -> None:
    """ServiceAccount tokens authenticate; the API audiences, unless the server has its own, are
    those of ``--api-audiences`` (kube's default: the issuer)."""
    made = tokens.of(registry)
    if config is not None:
        await made.keys.load()
    if not authenticators.api_audiences:
        authenticators.api_audiences = made.settings.audiences
    authenticators.add_token("ServiceAccountTokens", authenticator.ServiceAccountTokens(
        made.keys, made.settings.issuers, authenticators.api_audiences, authenticator.Objects(registry)))


@hookimpl
async def kplane_post_start(registry: Registry, server_url: str) -> None:
    """The system namespaces and the ``default/kubernetes`` Service exist from the first start on."""
    store = registry.store(GROUP, "namespaces")
    for name in SYSTEM_NAMESPACES:
        if await store.get_internal("", name) is None:
            namespace = types.Namespace()
            namespace.metadata.name = name
            try:
                await store.create(RequestContext(resource="namespaces", name=name), namespace)
            except APIError as err:  # another server on the same storage was quicker
                if err.code != 409:
                    raise
    await kubernetes_service.ensure(registry, server_url)


@hookimpl
def kplane_register_controllers(manager: ControllerManager, plugin_name: str, config: ServerConfig | None) -> None:
    """``simulated-nodes`` runs ``--simulated-nodes`` Nodes (the default without a configuration,
    as in ``kplane plugins``); with 0 it is a known name with nothing to run. ``serviceaccount-token``
    runs as the controller-manager itself (its root client), as kube's, with the keys of the
    server in this process (none in ``kplane controller-manager``: it does nothing)."""
    made = tokens.serving(config)
    manager.add("serviceaccount-token", TokensController(manager.client, manager.informers,
                                                         made.keys if made is not None else None, manager.root_ca))
    manager.add("namespace", NamespaceController(manager.client_for("namespace-controller")))
    manager.add("endpoint", EndpointsController(manager.client_for("endpoint-controller"), manager.informers))
    manager.add("serviceaccount", ServiceAccountsController(manager.client_for("service-account-controller"), manager.informers))
    manager.add("resourcequota", ResourceQuotaController(manager.client_for("resourcequota-controller"), manager.informers))
    manager.add("root-ca-cert-publisher", RootCAPublisher(manager.client_for("root-ca-cert-publisher"), manager.informers,
                                                          manager.root_ca))
    count = (config or ServerConfig()).simulated_nodes
    lifecycle = nodelifecycle_settings.settings_of(config, plugin_name)
    if count:
        manager.add("simulated-nodes", SimulatedNodes(manager.client_for("simulated-nodes"), manager.informers, count=count,
                                                      heartbeat=lifecycle.status_update_frequency,
                                                      **node_flags.node_settings(config)))
    else:
        manager.known.add("simulated-nodes")
    manager.add("node-lifecycle-controller", NodeLifecycleController(
        manager.client_for("node-controller"), manager.informers, monitor_period=lifecycle.monitor_period,
        grace_period=lifecycle.monitor_grace_period))
    manager.add("taint-eviction-controller", TaintEvictionController(manager.client_for("taint-eviction-controller"), manager.informers))
