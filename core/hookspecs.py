"""Every extension point of kplane: the plugin author's reference.

A plugin is a module (or object) with functions named like the hooks below, marked with
``@hookimpl``. Built-in API groups are plugins too; third-party ones are found through the
``kplane.plugins`` entry-point group of any installed distribution::

    # pyproject.toml of your distribution
    [project.entry-points."kplane.plugins"]
    widgets = "widgets_plugin"

At start-up the hooks are called in the order they appear here, each once per plugin, so a
strategy may rely on its types being registered. A hook implementation takes only the arguments
it names; ``plugin_name`` is your plugin's name, for messages.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import pluggy

if TYPE_CHECKING:
    from core.client.informer import SharedInformerFactory
    from core.controllers.manager import ControllerManager
    from core.registry.admission import AdmissionChain
    from core.registry.registry import Registry
    from core.runtime.scheme import Scheme

PROJECT = "kplane"
hookspec = pluggy.HookspecMarker(PROJECT)
hookimpl = pluggy.HookimplMarker(PROJECT)


@hookspec
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    """Register your kinds: internal type, one schema per served version, storage version.

    Call :meth:`Scheme.add_kind` once per kind and :meth:`Scheme.set_version_priority` once per
    group (the first version is the one discovery prefers)::

        @hookimpl
        def kplane_register_types(scheme, plugin_name):
            scheme.add_kind(group="widgets.example.com", kind="Widget", plural="widgets",
                            internal=types.Widget, versions={"v1": v1.WidgetSchema},
                            storage_version="v1", short_names=["wd"], plugin=plugin_name)
    """


@hookspec
def kplane_register_conversions(scheme: Scheme) -> None:
    """Register hand-written conversions and per-version defaulting.

    A version whose schema has the internal shape converts automatically. Where shapes differ,
    :meth:`Scheme.add_conversion` takes two functions over Python-named dicts; defaulting
    (:meth:`Scheme.add_defaulter`) runs on a version's decoded data before conversion::

        scheme.add_conversion("widgets.example.com", "v1alpha1", "Widget",
                              to_internal=v1alpha1.to_internal, from_internal=v1alpha1.from_internal)
        scheme.add_defaulter("widgets.example.com", "v1", "Widget", v1.set_defaults)
    """


@hookspec
def kplane_register_strategies(registry: Registry) -> None:
    """Give each resource its behaviour: a :class:`~core.registry.strategy.Strategy`.

    Register the main resource and each subresource (``"status"``) separately::

        registry.add_strategy("widgets.example.com", "widgets", WidgetStrategy())
        registry.add_strategy("widgets.example.com", "widgets", WidgetStatusStrategy(),
                              subresource="status")

    A kind without a strategy gets the default one (no extra validation, no subresources).
    """


@hookspec
def kplane_register_admission(
    chain: AdmissionChain, registry: Registry, informers: SharedInformerFactory | None
) -> None:
    """Add admission plugins, run on every write after decoding and before storage.

    Mutating plugins (``chain.add_mutating``) may change ``request.obj``; validating plugins
    (``chain.add_validating``) reject by raising ``deny(request, "why")`` (403). ``registry``
    lets a plugin read other objects, e.g. the namespace a request writes into.

    ``informers`` is a shared informer factory on the server's own loopback client, for plugins
    that decide from a cached view of other objects (kube-apiserver hands its admission plugins
    loopback informers the same way)::

        fischers = informers.informer("wardle.example.com", "v1alpha1", "fischers")

    Informers asked for here start once the server listens, after the post-start hooks, and stop
    with it. Until an informer's ``synced`` event is set its lister is empty, so wait for it (or
    refuse). ``informers`` is None when the plugins are only inspected (``kplane plugins``).
    """


@hookspec
async def kplane_post_start(registry: Registry) -> None:
    """Create what must exist once storage is open and before the server reports ready, such as
    the ``default`` namespace (kube-apiserver's post-start hooks). Must be idempotent: it runs on
    every start. May be ``async``."""


@hookspec
def kplane_register_controllers(manager: ControllerManager) -> None:
    """Add controllers for the controller-manager to run.

    A controller is an object with ``async def run(self)`` that works until cancelled; it
    reaches the server through ``manager.client`` like any other client::

        manager.add("widget-sizer", WidgetSizer(manager.client))
    """
