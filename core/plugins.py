"""The plugin manager: finds API-group plugins and runs their registration hooks.

Built-in groups and third-party groups are found the same way, through the ``kplane.plugins``
entry-point group (kplane's own distribution declares the built-ins), so ``core`` never imports
a plugin.
"""

from __future__ import annotations

import importlib.metadata
import inspect
from dataclasses import dataclass, field
from types import ModuleType

import pluggy

from core import hookspecs
from core.client.informer import SharedInformerFactory
from core.controllers.manager import ControllerManager
from core.registry.admission import AdmissionChain
from core.registry.registry import Registry
from core.runtime.scheme import Scheme

ENTRY_POINT_GROUP = "kplane.plugins"


class PluginError(Exception):
    """A plugin could not be loaded or registered; the message names the plugin."""


@dataclass(slots=True)
class PluginInfo:
    name: str
    module: str
    distribution: str = ""
    version: str = ""
    hooks: list[str] = field(default_factory=list)


class PluginManager:
    def __init__(self) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.infos: dict[str, PluginInfo] = {}

    def load_entry_points(self, disabled: frozenset[str] = frozenset(), only: frozenset[str] | None = None) -> None:
        """Load the installed plugins, less ``disabled``; with ``only``, just those named there
        (``kplane serve --plugins``), each of which must be installed."""
        found = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=lambda e: e.name)
        if only is not None:
            unknown = sorted(only - {ep.name for ep in found})
            if unknown:
                installed = ", ".join(sorted({ep.name for ep in found}))
                raise PluginError(f"unknown plugin(s) {', '.join(repr(n) for n in unknown)}; installed: {installed}")
        for ep in found:
            if ep.name in disabled or ep.name in self.infos or (only is not None and ep.name not in only):
                continue
            try:
                module = ep.load()
            except Exception as err:  # any import failure is the plugin's, and must say so
                raise PluginError(f"plugin {ep.name!r} ({ep.value}) failed to import: {err!r}") from err
            dist = ep.dist
            self.register(module, ep.name, dist.name if dist else "", dist.version if dist else "")

    def register(self, module: ModuleType | object, name: str, distribution: str = "", version: str = "") -> None:
        self.pm.register(module, name=name)
        hooks = [h.name for h in self.pm.get_hookcallers(module) or []]
        self.infos[name] = PluginInfo(name, getattr(module, "__name__", repr(module)), distribution, version, sorted(hooks))

    async def _call(self, hook: str, **kwargs: object) -> None:
        """Call ``hook`` on each plugin in registration order; async implementations are awaited."""
        caller = getattr(self.pm.hook, hook)
        for impl in caller.get_hookimpls():
            args = {k: v for k, v in kwargs.items() if k in impl.argnames}
            if "plugin_name" in impl.argnames:
                args["plugin_name"] = impl.plugin_name
            try:
                result = impl.function(**args)
                if inspect.isawaitable(result):
                    await result
            except Exception as err:
                raise PluginError(f"plugin {impl.plugin_name!r} failed in {hook}: {err}") from err

    async def setup(self, scheme: Scheme, registry: Registry, admission: AdmissionChain,
                    informers: SharedInformerFactory | None = None) -> None:
        """Run the registration hooks in dependency order and check the result. ``informers``:
        the serving server's loopback informers, for admission plugins (None: nothing is served)."""
        await self._call("kplane_register_types", scheme=scheme)
        await self._call("kplane_register_conversions", scheme=scheme)
        await self._call("kplane_register_strategies", registry=registry)
        await self._call("kplane_register_admission", chain=admission, registry=registry, informers=informers)
        problems = scheme.check()
        if problems:
            raise PluginError("kinds that cannot convert automatically:\n  " + "\n  ".join(problems))

    async def post_start(self, registry: Registry) -> None:
        await self._call("kplane_post_start", registry=registry)

    async def register_controllers(self, manager: ControllerManager) -> None:
        await self._call("kplane_register_controllers", manager=manager)
