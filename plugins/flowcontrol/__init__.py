"""The flowcontrol.apiserver.k8s.io API group at v1: FlowSchema and PriorityLevelConfiguration,
the bootstrap configuration kube-apiserver creates and keeps, and their Dangling condition.
kplane serves the objects but does not classify requests by them: its max-in-flight limits
stay as they are.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

import argparse

from kplane.api import (
    AdmissionChain, PluginOptions, Registry, Scheme, ServerConfig, SharedInformerFactory, hookimpl, parse_duration,
)
from kplane.plugins.flowcontrol import server, strategy, types
from kplane.plugins.flowcontrol.types import GROUP
from kplane.plugins.flowcontrol.v1 import schemas as v1


@hookimpl
def kplane_add_options(parser: PluginOptions) -> None:
    parser.add_argument("--enable-priority-and-fairness", dest="flowcontrol_enabled", action=argparse.BooleanOptionalAction,
                        default=True, help="create and keep the bootstrap FlowSchemas and PriorityLevelConfigurations, "
                                           "and their status (default on; the objects are served either way)")
    parser.add_argument("--flowcontrol-ensure-interval", dest="flowcontrol_ensure_interval", type=parse_duration,
                        default=60.0, metavar="DURATION",
                        help="how often the bootstrap configuration is put back as its annotations say (default 1m)")


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    for kind, plural, internal, schema in (
        ("FlowSchema", "flowschemas", types.FlowSchema, v1.FlowSchemaSchema),
        ("PriorityLevelConfiguration", "prioritylevelconfigurations", types.PriorityLevelConfiguration,
         v1.PriorityLevelConfigurationSchema),
    ):
        scheme.add_kind(group=GROUP, kind=kind, plural=plural, internal=internal, versions={"v1": schema},
                        storage_version="v1", namespaced=False, plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "FlowSchema", v1.default_flow_schema)
    scheme.add_defaulter(GROUP, "v1", "PriorityLevelConfiguration", v1.default_priority_level)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "flowschemas", strategy.FlowSchemaStrategy())
    registry.add_strategy(GROUP, "flowschemas", strategy.FlowSchemaStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "prioritylevelconfigurations", strategy.PriorityLevelStrategy())
    registry.add_strategy(GROUP, "prioritylevelconfigurations", strategy.PriorityLevelStatusStrategy(), subresource="status")


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry, informers: SharedInformerFactory | None,
                              plugin_name: str, config: ServerConfig | None) -> None:
    """The configuration producer and consumer run in the server, as in kube-apiserver, on its loopback client."""
    settings = config.plugin_settings.get(plugin_name, {}) if config is not None else {}
    if informers is None or not settings.get("flowcontrol_enabled", True):
        return
    if registry.scheme.resource(GROUP, "v1", "flowschemas") and registry.scheme.resource(GROUP, "v1", "prioritylevelconfigurations"):
        server.create(registry, informers.client, settings.get("flowcontrol_ensure_interval", 60.0))


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
