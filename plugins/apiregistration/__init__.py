"""The apiregistration.k8s.io API group: APIService, served and stored at v1 (kube-aggregator's
own group).

An APIService with a backend (``spec.service``, or kplane's ``spec.url``) makes the server a
proxy for that group/version: see :mod:`kplane.core.server.aggregator`, which serves the routing,
discovery, OpenAPI and availability side from these objects, and refuses backends unless the
server was started with ``--enable-apiservice-backends``. This plugin only defines the kind and
keeps the Local APIServices of the groups the server serves itself.
"""

from __future__ import annotations

from kplane.api import Registry, Scheme, hookimpl
from kplane.plugins.apiregistration import local, strategy, types
from kplane.plugins.apiregistration.v1 import defaults, protobuf, schemas

GROUP = local.GROUP


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="APIService", plural="apiservices", internal=types.APIService,
                    versions={"v1": schemas.APIServiceSchema}, storage_version="v1", namespaced=False,
                    categories=["api-extensions"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "APIService", defaults.default_api_service)
    scheme.add_protobuf(GROUP, "v1", "APIService", protobuf.API_SERVICE)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "apiservices", strategy.APIServiceStrategy())
    registry.add_strategy(GROUP, "apiservices", strategy.APIServiceStatusStrategy(), subresource="status")


@hookimpl
async def kplane_post_start(registry: Registry) -> None:
    """A Local APIService for every group/version served here (kube-aggregator's autoregister)."""
    await local.sync_local_api_services(registry)
