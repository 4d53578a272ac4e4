"""The apiextensions.k8s.io API group: CustomResourceDefinition, served and stored at v1, and
the resources CRDs define, served while the server runs (apiextensions-apiserver).

A CRD is an object like any other (:mod:`.strategy`, :mod:`.validation`); the server's CRD
machinery (:mod:`.server`) watches them, runs the naming, establishing and finalizer controllers
(:mod:`.controllers`) and serves each established CRD's resource through the generic Store
(:mod:`.customresource`), its objects checked against the version's structural schema
(:mod:`.schema`).

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import AdmissionChain, Registry, Scheme, SharedInformerFactory, hookimpl
from kplane.plugins.apiextensions import server, strategy, types
from kplane.plugins.apiextensions.types import GROUP
from kplane.plugins.apiextensions.v1 import defaults, schemas

KIND = "CustomResourceDefinition"
RESOURCE = "customresourcedefinitions"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind=KIND, plural=RESOURCE, internal=types.CustomResourceDefinition,
                    versions={"v1": schemas.CustomResourceDefinitionSchema}, storage_version="v1", namespaced=False,
                    short_names=["crd", "crds"], categories=["api-extensions"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", KIND, defaults.default_crd)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, RESOURCE, strategy.CustomResourceDefinitionStrategy())
    registry.add_strategy(GROUP, RESOURCE, strategy.CustomResourceDefinitionStatusStrategy(), subresource="status")


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry, informers: SharedInformerFactory | None) -> None:
    if informers is not None and registry.scheme.resource(GROUP, "v1", RESOURCE) is not None:
        server.create(registry, informers)


@hookimpl
async def kplane_post_start(registry: Registry) -> None:
    made = server.of(registry)
    if made is not None:
        await made.start()


@hookimpl
async def kplane_shutdown(registry: Registry) -> None:
    made = server.forget(registry)
    if made is not None:
        await made.stop()
