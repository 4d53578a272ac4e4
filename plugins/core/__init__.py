"""The core API group, served at ``/api/v1``: Namespace, Pod, Event, ConfigMap, Secret,
ServiceAccount, Node, Service; its admission chain, its controllers (namespace deletion,
serviceaccounts, the simulated nodes that schedule and run pods), and the system namespaces and
``default/kubernetes`` Service made at start."""

from __future__ import annotations

from kplane.api import ServerConfig
from kplane.core.controllers.manager import ControllerManager
from kplane.core.hookspecs import hookimpl
from kplane.core.meta.errors import APIError
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.registry import Registry
from kplane.core.registry.strategy import RequestContext
from kplane.core.runtime.scheme import Scheme
from kplane.plugins.core import admission, kubernetes_service, services, types
from kplane.plugins.core.controllers.namespace import NamespaceController
from kplane.plugins.core.controllers.nodes import SimulatedNodes
from kplane.plugins.core.serviceaccounts import ServiceAccountsController
from kplane.plugins.core.strategy import strategies
from kplane.plugins.core.v1 import conversion, defaults, protobuf, schemas
from kplane.plugins.core.v1 import services as v1_services

GROUP = ""
SYSTEM_NAMESPACES = ("default", "kube-system", "kube-public", "kube-node-lease")

KINDS = [
    # kind, plural, internal type, v1 schema, namespaced, short names
    ("Namespace", "namespaces", types.Namespace, schemas.NamespaceSchema, False, ["ns"]),
    ("Pod", "pods", types.Pod, schemas.PodSchema, True, ["po"]),
    ("Event", "events", types.Event, schemas.EventSchema, True, ["ev"]),
    ("ConfigMap", "configmaps", types.ConfigMap, schemas.ConfigMapSchema, True, ["cm"]),
    ("Secret", "secrets", types.Secret, schemas.SecretSchema, True, []),
    ("ServiceAccount", "serviceaccounts", types.ServiceAccount, schemas.ServiceAccountSchema, True, ["sa"]),
    ("Node", "nodes", types.Node, schemas.NodeSchema, False, ["no"]),
    ("Service", "services", services.Service, v1_services.ServiceSchema, True, ["svc"]),
]


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    for kind, plural, internal, schema, namespaced, short_names in KINDS:
        scheme.add_kind(
            group=GROUP,
            kind=kind,
            plural=plural,
            internal=internal,
            versions={"v1": schema},
            storage_version="v1",
            namespaced=namespaced,
            short_names=short_names,
            categories=["all"] if kind in ("Pod", "Service") else [],
            plugin=plugin_name,
        )
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
def kplane_register_strategies(registry: Registry) -> None:
    for (plural, subresource), strategy in strategies().items():
        registry.add_strategy(GROUP, plural, strategy, subresource=subresource)
    registry.add_strategy(GROUP, "services", services.ServiceStrategy())
    registry.add_strategy(GROUP, "services", services.ServiceStatusStrategy(), subresource="status")


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry) -> None:
    admission.register(chain, registry)


@hookimpl
def kplane_register_controllers(manager: ControllerManager, config: ServerConfig | None) -> None:
    """``simulated-nodes`` runs ``--simulated-nodes`` Nodes (the default without a configuration,
    as in ``kplane plugins``); with 0 it is a known name with nothing to run."""
    manager.add("namespace", NamespaceController(manager.client))
    manager.add("serviceaccount", ServiceAccountsController(manager.client, manager.informers))
    count = (config or ServerConfig()).simulated_nodes
    if count:
        manager.add("simulated-nodes", SimulatedNodes(manager.client, manager.informers, count=count))
    else:
        manager.known.add("simulated-nodes")


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
