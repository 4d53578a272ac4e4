"""wardle.example.com: a mirror of kubernetes/sample-apiserver, the reference aggregated API server.

Two kinds in one group (see README.md for the file-by-file map to the original):

* ``Flunder`` (namespaced) is served at v1alpha1 and v1beta1; discovery prefers v1beta1;
* ``Fischer`` (cluster-scoped) is served at v1alpha1 only;
* both are stored as v1alpha1.

This module is the plugin: each function below is one of kplane's hooks (``core/hookspecs.py``),
called once at start-up in this order. Together they do what the original's ``install``
package, ``apiserver.go`` and ``start.go`` do.
"""

from __future__ import annotations

from kplane.api import AdmissionChain, Registry, Scheme, SharedInformerFactory, hookimpl
from kplane.plugins.sample_api import admission, strategy, types
from kplane.plugins.sample_api.v1alpha1 import conversion as v1alpha1_conversion
from kplane.plugins.sample_api.v1alpha1 import defaults as v1alpha1_defaults
from kplane.plugins.sample_api.v1alpha1 import schemas as v1alpha1
from kplane.plugins.sample_api.v1beta1 import schemas as v1beta1

GROUP = "wardle.example.com"
STORAGE_VERSION = "v1alpha1"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    """The kinds, their versions and the version priority (``pkg/apis/wardle/install``)."""
    scheme.add_kind(group=GROUP, kind="Flunder", plural="flunders", internal=types.Flunder,
                    versions={"v1alpha1": v1alpha1.FlunderSchema, "v1beta1": v1beta1.FlunderSchema},
                    storage_version=STORAGE_VERSION, plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="Fischer", plural="fischers", internal=types.Fischer,
                    versions={"v1alpha1": v1alpha1.FischerSchema}, storage_version=STORAGE_VERSION,
                    namespaced=False, plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1beta1", "v1alpha1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    """v1alpha1's defaulting and hand-written Flunder conversion; the rest converts by shape."""
    scheme.add_defaulter(GROUP, "v1alpha1", "Flunder", v1alpha1_defaults.set_defaults_flunder)
    scheme.add_conversion(GROUP, "v1alpha1", "Flunder", to_internal=v1alpha1_conversion.flunder_to_internal,
                          from_internal=v1alpha1_conversion.flunder_from_internal)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    """One strategy per resource (``pkg/registry/wardle/*/strategy.go``)."""
    registry.add_strategy(GROUP, "flunders", strategy.FlunderStrategy())
    registry.add_strategy(GROUP, "fischers", strategy.FischerStrategy())


@hookimpl
def kplane_register_admission(chain: AdmissionChain, informers: SharedInformerFactory | None) -> None:
    """BanFlunder, fed by a v1alpha1 Fischer informer on the server's loopback client.

    The original builds that informer in ``start.go`` and hands it over through its
    ``wardleinitializer``; here the server hands every admission plugin its loopback informer
    factory, and starts the informers asked for once it listens (the original's
    ``start-sample-server-informers`` post-start hook).
    """
    if informers is None:  # only inspected (`kplane plugins`): nothing is served
        return
    fischers = informers.informer(GROUP, "v1alpha1", "fischers")
    chain.add_mutating(admission.BanFlunder.name, admission.BanFlunder(fischers))
