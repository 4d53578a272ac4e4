"""The kplane plugin: each function is a hook kplane calls once at start-up, in this order."""

from kplane.api import AdmissionChain, ControllerManager, Registry, Scheme, hookimpl

from widgets_example import admission, strategy, v1, v1alpha1
from widgets_example.controller import WidgetController
from widgets_example.types import GROUP, Widget


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="Widget", plural="widgets", internal=Widget,
                    versions={"v1": v1.WidgetSchema, "v1alpha1": v1alpha1.WidgetSchema},
                    storage_version="v1", short_names=["wd"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1", "v1alpha1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "Widget", v1.set_defaults)
    scheme.add_defaulter(GROUP, "v1alpha1", "Widget", v1alpha1.set_defaults)
    scheme.add_conversion(GROUP, "v1alpha1", "Widget",
                          to_internal=v1alpha1.to_internal, from_internal=v1alpha1.from_internal)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "widgets", strategy.WidgetStrategy())
    registry.add_strategy(GROUP, "widgets", strategy.WidgetStatusStrategy(), subresource="status")


@hookimpl
def kplane_register_admission(chain: AdmissionChain) -> None:
    chain.add_validating("NoRedWidgets", admission.no_red_widgets)


@hookimpl
def kplane_register_controllers(manager: ControllerManager) -> None:
    manager.add("widget", WidgetController(manager.client, manager.informers))
