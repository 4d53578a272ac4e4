"""The networking.k8s.io API group at v1: Ingress (with ``/status``), IngressClass and
NetworkPolicy, and the DefaultIngressClass admission. kplane routes no traffic: these are the
records that ingress controllers and network plugins act on.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import AdmissionChain, Registry, Scheme, hookimpl
from kplane.plugins.networking import admission, strategy, types
from kplane.plugins.networking.v1 import protobuf, schemas as v1

GROUP = "networking.k8s.io"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="Ingress", plural="ingresses", internal=types.Ingress, versions={"v1": v1.IngressSchema},
                    storage_version="v1", short_names=["ing"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="IngressClass", plural="ingressclasses", internal=types.IngressClass,
                    versions={"v1": v1.IngressClassSchema}, storage_version="v1", namespaced=False, plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="NetworkPolicy", plural="networkpolicies", internal=types.NetworkPolicy,
                    versions={"v1": v1.NetworkPolicySchema}, storage_version="v1", short_names=["netpol"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "NetworkPolicy", v1.default_network_policy)
    scheme.add_protobuf(GROUP, "v1", "Ingress", protobuf.INGRESS)  # `kubectl create ingress`


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "ingresses", strategy.IngressStrategy())
    registry.add_strategy(GROUP, "ingresses", strategy.IngressStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "ingressclasses", strategy.IngressClassStrategy())
    registry.add_strategy(GROUP, "networkpolicies", strategy.NetworkPolicyStrategy())


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry) -> None:
    chain.add_mutating("DefaultIngressClass", admission.DefaultIngressClass(registry))
