"""The apiregistration.k8s.io API group: APIService, served and stored at v1 (kube-aggregator's
own group).

An APIService with a backend (``spec.service``, or kplane's ``spec.url``) makes the server a
proxy for that group/version (:mod:`kplane.plugins.apiregistration.aggregator`): a request filter
at the ``PROXY`` stage, a discovery and OpenAPI source, and the availability controller (all
refusing backends if the server was started with ``--no-enable-apiservice-backends``). The
plugin also keeps the Local APIServices of the groups the server serves itself.

Its settings come from ``config.plugin_settings[plugin_name]``
(:mod:`kplane.plugins.apiregistration.settings`), two of them from the ``kplane serve`` flags it adds.
"""

from __future__ import annotations

from kplane.api import (
    PROXY, AdmissionChain, APISources, FilterChain, PluginOptions, Registry, Scheme, ServerConfig, SharedInformerFactory,
    hookimpl,
)
from kplane.plugins.apiregistration import admission, aggregation, local, strategy, types
from kplane.plugins.apiregistration.apiservices import GROUP
from kplane.plugins.apiregistration.settings import add_flags, settings_of
from kplane.plugins.apiregistration.v1 import defaults, protobuf, schemas


@hookimpl
def kplane_add_options(parser: PluginOptions) -> None:
    add_flags(parser)


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
def kplane_register_admission(chain: AdmissionChain, registry: Registry, plugin_name: str, config: ServerConfig | None) -> None:
    chain.add_validating(admission.NAME, admission.BackendsCheck(registry.scheme, settings_of(config, plugin_name)))


@hookimpl
def kplane_register_filters(filters: FilterChain, registry: Registry, informers: SharedInformerFactory,
                            plugin_name: str, config: ServerConfig | None) -> None:
    made = aggregation.create(registry, informers, settings_of(config, plugin_name))
    if made is not None:
        filters.add(PROXY, "APIServiceProxy", made.proxy)


@hookimpl
def kplane_register_api_sources(sources: APISources, registry: Registry) -> None:
    made = aggregation.of(registry)
    if made is not None:
        sources.add("APIServices", made.discovery)


@hookimpl
async def kplane_post_start(registry: Registry) -> None:
    """A Local APIService for every group/version served here (kube-aggregator's autoregister),
    kept while the server runs, then proxying and the availability controller."""
    await local.start(registry)
    made = aggregation.of(registry)
    if made is not None:
        await made.start()


@hookimpl
async def kplane_shutdown(registry: Registry) -> None:
    await local.stop(registry)
    made = aggregation.forget(registry)
    if made is not None:
        await made.stop()
