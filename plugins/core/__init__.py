"""The core API group, served at ``/api/v1``: Namespace, Pod, Event, ConfigMap, Secret,
ServiceAccount (with its ``token`` subresource and the authenticator of those tokens), Node,
Service, PersistentVolumeClaim; its admission chain, its controllers (namespace deletion,
serviceaccounts, the simulated nodes that schedule and run pods), and the system namespaces and
``default/kubernetes`` Service made at start.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import (
    APIError, AdmissionChain, Authenticators, ControllerManager, PluginOptions, Registry, RequestContext, Scheme,
    ServerConfig, SharedInformerFactory, hookimpl,
)
from kplane.plugins.core import admission, kubernetes_service, pod_admission, services, strategy, tokens, types, volumes
from kplane.plugins.core.controllers.namespace import NamespaceController
from kplane.plugins.core.controllers.nodes import SimulatedNodes
from kplane.plugins.core.portforward.serving import PortForwardREST
from kplane.plugins.core.proxy import NodeProxyREST, PodProxyREST, ServiceProxyREST
from kplane.plugins.core.rootca import RootCAPublisher
from kplane.plugins.core.serviceaccounts import ServiceAccountsController
from kplane.plugins.core.tokens import authenticator, settings, tokenrequest
from kplane.plugins.core.tokens.controller import TokensController
from kplane.plugins.core.v1 import conversion, defaults, protobuf, schemas
from kplane.plugins.core.v1 import services as v1_services, volumes as v1_volumes

GROUP = ""
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")


@hookimpl
def kplane_add_options(parser: PluginOptions) -> None:
    settings.add_flags(parser)


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
    scheme.add_kind(group=GROUP, kind="PersistentVolumeClaim", plural="persistentvolumeclaims",
                    internal=volumes.PersistentVolumeClaim, versions={"v1": v1_volumes.PersistentVolumeClaimSchema},
                    storage_version="v1", short_names=["pvc"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "Pod", defaults.default_pod)
    scheme.add_defaulter(GROUP, "v1", "Secret", defaults.default_secret)
    scheme.add_defaulter(GROUP, "v1", "Node", defaults.default_node)
    scheme.add_defaulter(GROUP, "v1", "Service", v1_services.default_service)
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
    registry.add_subresource(GROUP, "services", "proxy", ServiceProxyREST(registry))
    registry.add_strategy(GROUP, "persistentvolumeclaims", volumes.PersistentVolumeClaimStrategy())
    registry.add_strategy(GROUP, "persistentvolumeclaims", volumes.PersistentVolumeClaimStatusStrategy(), subresource="status")


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry) -> None:
    """kube-apiserver's order: NamespaceLifecycle, then the pod plugins."""
    chain.add_mutating("NamespaceLifecycle", admission.NamespaceLifecycle(registry))
    chain.add_mutating("ServiceAccount", pod_admission.ServiceAccountAdmission(registry))
    chain.add_mutating("Priority", pod_admission.priority)
    chain.add_mutating("DefaultTolerationSeconds", pod_admission.default_toleration_seconds)
    chain.add_validating("NamespaceLifecycle", admission.immortal_namespaces)


@hookimpl
async def kplane_register_authenticators(authenticators: Authenticators, registry: Registry,
                                         informers: SharedInformerFactory | None, config: ServerConfig | None) -> None:
    """ServiceAccount tokens authenticate; the API audiences, unless the server has its own, are
    those of ``--api-audiences`` (kube's default: the issuer)."""
    made = tokens.of(registry)
    if config is not None:
        await made.keys.load()
    if not authenticators.api_audiences:
        authenticators.api_audiences = made.settings.audiences
    authenticators.add_token("ServiceAccountTokens", authenticator.ServiceAccountTokens(
        made.keys, made.settings.issuers, authenticators.api_audiences, authenticator.Objects(registry, informers)))


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
def kplane_register_controllers(manager: ControllerManager, config: ServerConfig | None) -> None:
    """``simulated-nodes`` runs ``--simulated-nodes`` Nodes (the default without a configuration,
    as in ``kplane plugins``); with 0 it is a known name with nothing to run. ``serviceaccount-token``
    runs as the controller-manager itself (its root client), as kube's, with the keys of the
    server in this process (none in ``kplane controller-manager``: it does nothing)."""
    made = tokens.serving(config)
    manager.add("serviceaccount-token", TokensController(manager.client, manager.informers,
                                                         made.keys if made is not None else None, manager.root_ca))
    manager.add("namespace", NamespaceController(manager.client_for("namespace-controller")))
    manager.add("serviceaccount", ServiceAccountsController(manager.client_for("service-account-controller"), manager.informers))
    manager.add("root-ca-cert-publisher", RootCAPublisher(manager.client_for("root-ca-cert-publisher"), manager.informers,
                                                          manager.root_ca))
    count = (config or ServerConfig()).simulated_nodes
    if count:
        manager.add("simulated-nodes", SimulatedNodes(manager.client_for("simulated-nodes"), manager.informers, count=count))
    else:
        manager.known.add("simulated-nodes")
