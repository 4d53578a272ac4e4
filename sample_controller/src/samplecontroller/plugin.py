"""The kplane plugin: serves ``foos.samplecontroller.k8s.io``, namespaced, version v1alpha1 (stored
as such) with a ``status`` subresource, what ``kubectl create -f crd-status-subresource.yaml`` does
for the original. Found through the ``kplane.plugins`` entry point of this distribution."""

from __future__ import annotations

from kplane.api import Registry, Scheme, hookimpl
from samplecontroller import GROUP, KIND, PLURAL, VERSION
from samplecontroller.strategy import FooStatusStrategy, FooStrategy
from samplecontroller.types import Foo
from samplecontroller.v1alpha1 import FooSchema


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind=KIND, plural=PLURAL, internal=Foo, versions={VERSION: FooSchema},
                    storage_version=VERSION, plugin=plugin_name)
    scheme.set_version_priority(GROUP, [VERSION])


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, PLURAL, FooStrategy())
    registry.add_strategy(GROUP, PLURAL, FooStatusStrategy(), subresource="status")
