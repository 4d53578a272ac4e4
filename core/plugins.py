"""The plugin manager: finds API-group plugins and runs their registration hooks.

Built-in groups and third-party groups are found the same way, through the ``kplane.plugins``
entry-point group (kplane's own distribution declares the built-ins), so ``core`` never imports
a plugin.

A plugin that breaks (it fails to import, its entry point names nothing, a hook raises, it claims
a kind or resource another plugin registered) is reported as a :class:`PluginError` naming the
plugin, its distribution and the problem. With ``skip_broken`` (``--skip-broken-plugins``) the
problem is logged instead and the plugin is taken out whole: everything its hooks added, as
recorded in its :class:`~kplane.core.footprint.Footprint`, is removed again.
"""

from __future__ import annotations

import difflib
import importlib
import importlib.metadata
import importlib.util
import inspect
import logging
import traceback
from collections.abc import Awaitable
from dataclasses import dataclass, field
from pathlib import Path
from types import CodeType, ModuleType
from typing import TYPE_CHECKING, Any

import pluggy

from kplane.core import hookspecs
from kplane.core.authn.authenticators import Authenticators
from kplane.core.authz.authorizers import Authorizers
from kplane.core.client.informer import SharedInformerFactory
from kplane.core.controllers.manager import ControllerManager
from kplane.core.footprint import Footprint, Targets, snapshot
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.registry import Registry
from kplane.core.runtime.scheme import ConflictError, ResourceType, Scheme

if TYPE_CHECKING:
    from kplane.core.config import ServerConfig
    from kplane.core.pluginoptions import PluginOptions
    from kplane.core.server.apisources import APISources
    from kplane.core.server.filterchain import FilterChain

log = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "kplane.plugins"
OWN_DISTRIBUTION = "kplane"  # its plugins (the built-in groups) load first
LOADED, SKIPPED = "loaded", "skipped"
HOOKS = tuple(n for n, f in vars(hookspecs).items() if n.startswith("kplane_") and inspect.isfunction(f))  # in call order


class PluginError(Exception):
    """A plugin could not be loaded or registered; the message names the plugin (``plugin``)."""

    def __init__(self, message: str, plugin: str = "") -> None:
        super().__init__(message)
        self.plugin = plugin


@dataclass(slots=True)
class PluginInfo:
    name: str
    module: str  # the entry point's target (``widgets_example.plugin``), or what was registered
    distribution: str = ""
    version: str = ""
    hooks: list[str] = field(default_factory=list)
    status: str = LOADED  # or SKIPPED (only with skip_broken), with the problem
    problem: str = ""
    footprint: Footprint = field(default_factory=Footprint)  # what its hooks added
    package: str = ""  # the module its files belong to, to point at the failing line

    @property
    def label(self) -> str:
        """How messages name it: ``plugin 'widgets' (kplane-widgets 0.1.0)``."""
        origin = f" ({self.distribution} {self.version})" if self.distribution else ""
        return f"plugin {self.name!r}{origin}"


class PluginManager:
    def __init__(self, skip_broken: bool = False, config: ServerConfig | None = None) -> None:
        self.pm = pluggy.PluginManager(hookspecs.PROJECT)
        self.pm.add_hookspecs(hookspecs)
        self.skip_broken = skip_broken
        self.config = config  # offered to every hook as ``config`` (None: nothing is served)
        self.infos: dict[str, PluginInfo] = {}  # every plugin tried, loaded or skipped, in load order
        self.targets = Targets()  # what the hooks change, for footprints and for taking a plugin out

    # -- loading ---------------------------------------------------------------------------
    def load_entry_points(self, disabled: frozenset[str] = frozenset(), only: frozenset[str] | None = None) -> None:
        """Load the installed plugins, less ``disabled``; with ``only``, just those named there
        (``kplane serve --plugins``), each of which must be installed. kplane's own plugins load
        first, then the others by name, so the later of two plugins claiming one kind is never a
        built-in."""
        found = sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP),
                       key=lambda e: (_distribution(e)[0] != OWN_DISTRIBUTION, e.name))
        if only is not None:
            unknown = sorted(only - {ep.name for ep in found})
            if unknown:
                installed = ", ".join(sorted({ep.name for ep in found}))
                raise PluginError(f"unknown plugin(s) {', '.join(repr(n) for n in unknown)}; installed: {installed}")
        for ep in found:
            if ep.name in disabled or (only is not None and ep.name not in only):
                continue
            dist, version = _distribution(ep)
            info = PluginInfo(ep.name, ep.value, dist, version, package=ep.module)
            first = self.infos.get(ep.name)
            if first is not None:
                if (first.distribution, first.module) == (dist, ep.value):
                    continue  # one distribution seen twice on sys.path
                self.infos[f"{ep.name} ({dist})"] = info
                self._refuse(info, f"{info.label} has the same name as {first.label}; "
                                   f"they name {ep.value} and {first.module}, and only the first is loaded")
                continue
            self.infos[ep.name] = info
            try:
                target = self._import(ep, info)
            except PluginError as err:
                self._refuse(info, str(err), err.__cause__)
                continue
            self._add(target, info)

    def _import(self, ep: importlib.metadata.EntryPoint, info: PluginInfo) -> object:
        try:
            target: object = importlib.import_module(ep.module)
        except (Exception, SystemExit) as err:  # any import failure is the plugin's, and must say so
            if isinstance(err, ModuleNotFoundError) and err.name and (ep.module + ".").startswith(err.name + "."):
                raise PluginError(f"{info.label}: its entry point names module {ep.module}, which does not exist "
                                  f"({_error(err)})", info.name) from err
            raise PluginError(f"{info.label} failed to import {ep.module}: {_error(err)}{_where(err, ep.module)}",
                              info.name) from err
        path = ep.module  # how far the entry point's "module:attr.attr" resolved
        for n, attr in enumerate(ep.attr.split(".") if ep.attr else []):
            try:
                target = getattr(target, attr)
            except AttributeError as err:
                raise PluginError(f"{info.label}: its entry point names {ep.value}, but {path} has no attribute "
                                  f"{attr!r}", info.name) from err
            path += f"{':' if n == 0 else '.'}{attr}"
        return target

    def register(self, module: ModuleType | object, name: str, distribution: str = "", version: str = "") -> None:
        """Register a plugin directly (tests, embedders); it is checked like an installed one."""
        if name in self.infos:
            raise PluginError(f"plugin {name!r} is registered already ({self.infos[name].module})", name)
        if isinstance(module, ModuleType):
            where, package = module.__name__, module.__name__
        else:
            cls = module if isinstance(module, type) else type(module)
            where, package = f"{cls.__module__}.{cls.__qualname__}", cls.__module__
        info = self.infos[name] = PluginInfo(name, where, distribution, version, package=package)
        self._add(module, info)

    def _add(self, target: object, info: PluginInfo) -> None:
        """Register with pluggy and check that it is a plugin: hooks that exist, marked, with
        arguments the hooks have."""
        unmarked = sorted(h for h in HOOKS if callable(getattr(target, h, None)) and self.pm.parse_hookimpl_opts(target, h) is None)
        try:
            self.pm.register(target, name=info.name)
        except (pluggy.PluginValidationError, ValueError) as err:
            self._refuse(info, f"{info.label} is not a valid plugin: {err}", err)
            return
        callers = self.pm.get_hookcallers(target) or []
        info.hooks = sorted(c.name for c in callers)
        strays = sorted(c.name for c in callers if c.spec is None)
        if strays:
            hints = [f"{s} (did you mean {close[0]}?)" if (close := difflib.get_close_matches(s, HOOKS, 1)) else s
                     for s in strays]
            self._refuse(info, f"{info.label} implements {', '.join(hints)}, which kplane does not have "
                               f"(its hooks: {', '.join(HOOKS)})")
        elif unmarked:
            self._refuse(info, f"{info.label}: {', '.join(unmarked)} lack @hookimpl (from kplane.core.hookspecs import "
                               "hookimpl), so kplane would never call them")
        elif not callers:
            self._refuse(info, f"{info.label} implements no kplane hook: its entry point should name the module "
                               "with the @hookimpl functions")

    # -- failures --------------------------------------------------------------------------
    def _refuse(self, info: PluginInfo, problem: str, err: BaseException | None = None) -> None:
        """Stop with ``problem``, or with skip_broken log it and go on without the plugin."""
        if not self.skip_broken:
            raise PluginError(problem, info.name) from err
        info.status, info.problem = SKIPPED, problem
        log.warning("%s; skipped, kplane goes on without it (--skip-broken-plugins)", problem)
        if err is not None:
            log.debug("%s: the traceback", info.label, exc_info=err)
        if self.pm.has_plugin(info.name) and self.infos.get(info.name) is info:
            self.pm.unregister(name=info.name)

    async def _take_out(self, info: PluginInfo, problem: str, err: BaseException | None = None) -> None:
        """A plugin broke while registering: stop, or (skip_broken) remove all it added. Once the
        serving hooks began (:meth:`register_http`) it may hold sessions or tasks, so it gets its
        ``kplane_shutdown`` first; without skip_broken the failed start does that (``stop()``)."""
        registry = self.targets.registry
        if self.skip_broken and self.targets.filters is not None and registry is not None:
            impls = self._implementations("kplane_shutdown")
            for impl in (i for i in impls if i.plugin_name == info.name):
                await self._shut_down(impl, impls, registry)
        self._refuse(info, problem, err)
        await info.footprint.undo(self.targets)
        info.footprint = Footprint()  # it has nothing left

    def _hook_problem(self, info: PluginInfo, hook: str, err: Exception, wrapped: PluginInfo | None = None) -> str:
        if isinstance(err, ConflictError) and err.owner and err.owner != info.name:
            other = self.infos.get(err.owner)
            return f"{info.label} conflicts with {other.label if other else repr(err.owner)}: both register {err.what}"
        around = f" (a wrapper, around {wrapped.label})" if wrapped is not None else ""
        return f"{info.label} failed in {hook}{around}: {_error(err)}{_where(err, info.package)}"

    def _claim_problem(self, info: PluginInfo, change: Footprint, hook: str) -> str:
        """A strategy, scale or subresource for a resource of another plugin, or of nobody."""
        scheme = self.targets.scheme
        if scheme is None:
            return ""
        served = {(g, p) for (g, p, _), _, _ in change.subresources}  # by add_subresource
        for group, plural in sorted(change.strategy_resources()):
            rt = scheme.get(group, plural)
            resource = f"{plural}.{group or 'core'}"
            what = "a subresource" if (group, plural) in served else "a strategy"
            if rt is None and hook != "kplane_register_types":
                return f"{info.label} registers {what} for {resource}, which no plugin registers"
            if rt is not None and rt.plugin and rt.plugin != info.name:
                other = self.infos.get(rt.plugin)
                return (f"{info.label} conflicts with {other.label if other else repr(rt.plugin)}: it registers {what} "
                        f"for {resource}, which {rt.plugin!r} registers")
        return ""

    # -- hooks -----------------------------------------------------------------------------
    def _implementations(self, hook: str) -> list[pluggy.HookImpl]:
        """The plugins' implementations of ``hook`` (not the wrappers) in kplane's order: those
        marked ``tryfirst``, then the others in registration order, then those marked ``trylast``
        (pluggy itself would call them last-registered first)."""
        order = {name: n for n, name in enumerate(self.infos)}
        impls = [i for i in getattr(self.pm.hook, hook).get_hookimpls() if not (i.hookwrapper or i.wrapper)]
        return sorted(impls, key=lambda i: (0 if i.tryfirst else 2 if i.trylast else 1, order[i.plugin_name]))

    def _wrappers(self, hook: str) -> list[pluggy.HookImpl]:
        return [i for i in getattr(self.pm.hook, hook).get_hookimpls() if i.hookwrapper or i.wrapper]

    async def _call_one(self, hook: str, impl: pluggy.HookImpl, others: list[pluggy.HookImpl],
                        kwargs: dict[str, object]) -> None:
        """Call one plugin's implementation through pluggy, so that every wrapper of ``hook``
        (``@hookimpl(wrapper=True)``) wraps it; an async implementation is awaited after."""
        caller = self.pm.subset_hook_caller(hook, remove_plugins=[o.plugin for o in others if o is not impl])
        for result in caller(**kwargs, plugin_name=impl.plugin_name, config=self.config):
            if inspect.isawaitable(result):
                if hook in _BEFORE_LOOP:
                    _complete(hook, result)  # here, so that one that waits is its plugin's failure
                else:
                    await result

    async def _call(self, hook: str, **kwargs: object) -> None:
        """Call ``hook`` on each plugin in kplane's order (:meth:`_implementations`), one plugin at
        a time. What each call adds goes into the plugin's footprint; a call that raises, or
        claims what another plugin registered, makes the plugin broken (:meth:`_refuse`)."""
        impls = self._implementations(hook)
        for impl in impls:
            info = self.infos[impl.plugin_name]
            if info.status != LOADED:
                continue  # taken out earlier in this call: a wrapper of it broke
            while True:
                before = snapshot(self.targets)
                try:
                    await self._call_one(hook, impl, impls, kwargs)
                    break
                except Exception as err:  # noqa: BLE001  # whatever a plugin raises is its own, and named
                    culprit = self.infos[_culprit(err, impl, self._wrappers(hook))]
                    if culprit is info:
                        info.footprint.record(before, snapshot(self.targets))  # so that its half is taken out too
                        await self._take_out(info, self._hook_problem(info, hook, err), err)
                        break
                    # a wrapper broke: undo the call's half, take the wrapper out, call again without it
                    await Footprint().record(before, snapshot(self.targets)).undo(self.targets)
                    await self._take_out(culprit, self._hook_problem(culprit, hook, err, wrapped=info), err)
            if info.status != LOADED:
                continue
            change = info.footprint.record(before, snapshot(self.targets))
            for rt in change.types.values():
                rt.plugin = rt.plugin or info.name
            for option in change.options:
                option.plugin = info.name
            problem = self._claim_problem(info, change, hook)
            if problem:
                await self._take_out(info, problem)

    def add_options(self, options: PluginOptions) -> None:
        """The plugins' ``kplane serve`` flags, before the command line is parsed (and so before
        any event loop runs: an implementation that awaits something is an error)."""
        self.targets.options = options
        _complete("kplane_add_options", self._call("kplane_add_options", parser=options))

    async def setup(self, scheme: Scheme, registry: Registry, admission: AdmissionChain,
                    informers: SharedInformerFactory | None = None, authenticators: Authenticators | None = None,
                    authorizers: Authorizers | None = None) -> None:
        """Run the registration hooks in dependency order and check the result. ``informers``:
        the serving server's loopback informers, for admission plugins (None: nothing is served);
        ``authenticators``, ``authorizers``: the server's (scratch ones when nothing is served)."""
        authenticators = authenticators if authenticators is not None else Authenticators()
        authorizers = authorizers if authorizers is not None else Authorizers()
        self.targets.scheme, self.targets.registry, self.targets.admission = scheme, registry, admission
        self.targets.informers = informers
        self.targets.authenticators, self.targets.authorizers = authenticators, authorizers
        await self._call("kplane_register_types", scheme=scheme)
        await self._call("kplane_register_conversions", scheme=scheme)
        await self._call("kplane_register_strategies", registry=registry, authenticators=authenticators,
                         authorizers=authorizers)
        await self._call("kplane_register_admission", chain=admission, registry=registry, informers=informers)
        await self._call("kplane_register_authenticators", authenticators=authenticators, registry=registry,
                         informers=informers)
        await self._call("kplane_register_authorizers", authorizers=authorizers, registry=registry,
                         informers=informers)
        owned: set[int] = set()
        for info in self.loaded():
            kinds = self.kinds(info)
            owned.update(id(rt) for rt in kinds)
            problems = scheme.check(kinds)
            if problems:
                await self._take_out(info, f"{info.label} registers kinds that cannot convert automatically (give them "
                                           "a conversion in kplane_register_conversions):\n  " + "\n  ".join(problems))
        problems = scheme.check([rt for rt in scheme.types() if id(rt) not in owned])
        if problems:
            raise PluginError("kinds that cannot convert automatically:\n  " + "\n  ".join(problems))

    async def register_http(self, filters: FilterChain, sources: APISources, registry: Registry,
                            informers: SharedInformerFactory) -> None:
        """The serving server's request filters and discovery sources, before it listens."""
        self.targets.filters, self.targets.sources = filters, sources
        await self._call("kplane_register_filters", filters=filters, registry=registry, informers=informers)
        await self._call("kplane_register_api_sources", sources=sources, registry=registry, informers=informers)

    async def post_start(self, registry: Registry, server_url: str) -> None:
        await self._call("kplane_post_start", registry=registry, server_url=server_url)

    async def shutdown(self, registry: Registry) -> None:
        """``kplane_shutdown`` on each loaded plugin, in the reverse of the ``kplane_post_start``
        order, then those without a ``kplane_post_start`` last loaded first. A plugin that fails
        is logged: the server stops all the same."""
        started = [i.plugin_name for i in self._implementations("kplane_post_start")]
        order = [*reversed(started), *(name for name in reversed(self.infos) if name not in started)]
        impls = self._implementations("kplane_shutdown")
        for impl in sorted(impls, key=lambda i: order.index(i.plugin_name)):
            await self._shut_down(impl, impls, registry)

    async def _shut_down(self, impl: pluggy.HookImpl, impls: list[pluggy.HookImpl], registry: Registry) -> None:
        try:
            await self._call_one("kplane_shutdown", impl, impls, {"registry": registry})
        except Exception as err:  # noqa: BLE001  # a plugin's failure must not keep the server up
            info = self.infos[impl.plugin_name]
            log.error("%s failed in kplane_shutdown: %s%s", info.label, _error(err), _where(err, info.package),
                      exc_info=log.isEnabledFor(logging.DEBUG))

    async def register_controllers(self, manager: ControllerManager) -> None:
        """Let each plugin add its controllers to ``manager`` (a new one each time: footprints
        then list the controllers of the latest)."""
        self.targets.controllers = manager
        for info in self.infos.values():
            info.footprint.controllers = []
        await self._call("kplane_register_controllers", manager=manager)

    # -- introspection ---------------------------------------------------------------------
    def loaded(self) -> list[PluginInfo]:
        return [info for info in self.infos.values() if info.status == LOADED]

    def kinds(self, info: PluginInfo) -> list[ResourceType]:
        """The kinds a plugin registered that are still served, in registration order."""
        scheme = self.targets.scheme
        if scheme is None:
            return []
        return [rt for key, rt in info.footprint.types.items() if scheme.get(*key) is rt]

    def describe(self) -> list[dict[str, Any]]:
        """Every plugin tried, with what it registered: ``kplane plugins -o json`` and
        ``GET /debug/plugins``."""
        scheme, registry, chain = self.targets.scheme, self.targets.registry, self.targets.admission
        served = scheme.groups() if scheme is not None else {}
        plugins = []
        for info in self.infos.values():
            groups: dict[str, dict[str, list[dict[str, Any]]]] = {}
            for rt in self.kinds(info):
                versions = groups.setdefault(rt.group, {v: [] for v in served.get(rt.group, [])})
                for version in (v for v in rt.versions if v in versions):  # served ones (--runtime-config)
                    versions[version].append({
                        "kind": rt.kind,
                        "resource": rt.plural,
                        "scope": "Namespaced" if rt.namespaced else "Cluster",
                        "storageVersion": rt.storage_version,
                        "subresources": registry.subresources(rt.group, rt.plural) if registry is not None else [],
                        "shortNames": list(rt.short_names),
                    })
            fp = info.footprint
            plugins.append({
                "name": info.name,
                "module": info.module,
                "distribution": info.distribution,
                "version": info.version,
                "status": info.status,
                "problem": info.problem,
                "hooks": info.hooks,
                "groups": [{"name": group, "preferredVersion": served[group][0],
                            "versions": [{"version": v, "resources": kinds} for v, kinds in versions.items() if kinds]}
                           for group, versions in groups.items() if group in served],
                "admission": {
                    "mutating": [name for name, _ in fp.mutating if chain is not None and _holds(chain.mutating, name)],
                    "validating": [name for name, _ in fp.validating if chain is not None and _holds(chain.validating, name)],
                },
                "controllers": list(fp.controllers),
            })
        return plugins


_BEFORE_LOOP = frozenset({"kplane_add_options"})  # hooks called before any event loop runs


def _complete(hook: str, work: Awaitable[Any]) -> None:
    """Run an awaitable that never waits for anything (``hook``, called before any event loop runs)."""
    steps = work.__await__()
    try:
        steps.send(None)
    except StopIteration:
        return
    steps.close()
    raise RuntimeError(f"{hook} is called before the event loop runs, and this one awaited something")


def _holds(entries: list[tuple[str, Any]], name: str) -> bool:
    return any(n == name for n, _ in entries)


def _distribution(ep: importlib.metadata.EntryPoint) -> tuple[str, str]:
    dist = ep.dist
    return (dist.name, dist.version) if dist is not None else ("", "")


def _error(err: BaseException) -> str:
    text = str(err)
    return f"{type(err).__name__}: {text}" if text else type(err).__name__


def _where(err: BaseException, module: str) -> str:
    """`` (widgets_example/plugin.py, line 12)``: the deepest frame of the traceback in the
    plugin's own files (the top-level package of ``module``), or nothing."""
    root = _files_of(module)
    if root is None or isinstance(err, SyntaxError):  # a SyntaxError names its line itself
        return ""
    for frame in reversed(traceback.extract_tb(err.__traceback__)):
        path = Path(frame.filename).resolve()
        if path == root or root in path.parents:
            return f" ({path.relative_to(root.parent)}, line {frame.lineno})"
    return ""


def _culprit(err: BaseException, impl: pluggy.HookImpl, wrappers: list[pluggy.HookImpl]) -> str:
    """The plugin whose code raised ``err``, of ``impl`` and the ``wrappers`` around it: the one
    whose hook function is the deepest in the traceback (a wrapper's frame is there too when the
    implementation's error only passes through it). ``impl``'s plugin if none is found."""
    codes = {code: i.plugin_name for i in (impl, *wrappers) if (code := _code(i.function)) is not None}
    frames = []
    tb = err.__traceback__
    while tb is not None:
        frames.append(tb.tb_frame.f_code)
        tb = tb.tb_next
    return next((codes[code] for code in reversed(frames) if code in codes), impl.plugin_name)


def _code(function: object) -> CodeType | None:
    function = inspect.unwrap(getattr(function, "__func__", function))  # type: ignore[arg-type]
    return getattr(function, "__code__", None)


def _files_of(module: str) -> Path | None:
    top = module.split(".")[0]
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).resolve()
    return Path(spec.origin).resolve() if spec.origin and spec.origin not in ("built-in", "frozen") else None
