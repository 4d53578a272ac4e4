"""What each plugin added to the server, found by comparing before and after each of its hooks.

The plugin manager takes a :class:`Snapshot` of the ``kplane serve`` flags, scheme, registry,
admission chain, authenticators, authorization modes, request filters, discovery sources, loopback
informers and controller-manager
around every hook call and keeps the difference in the plugin's :class:`Footprint`. That serves two purposes:

* a plugin that breaks midway (``kplane serve --skip-broken-plugins``) is taken out whole:
  :meth:`Footprint.undo` removes its flags, kinds, conversions, defaulters, strategies, subresources, admission
  plugins, authenticators, authorization modes, filters, sources, informers and controllers, even those added by an earlier hook that succeeded;
* ``kplane plugins`` and ``GET /debug/plugins`` say what each plugin registered, whether or not
  it passed ``plugin=plugin_name`` to :meth:`Scheme.add_kind`.

This module reads the tables of Scheme and Registry directly: it is their friend, so that they
need no bookkeeping of their own for plugins. Informers go through the factory's own
``resources()`` and ``remove()``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kplane.core.authn.authenticators import Authenticators
    from kplane.core.authz.authorizers import Authorizers
    from kplane.core.client.informer import SharedInformerFactory
    from kplane.core.controllers.manager import ControllerManager
    from kplane.core.pluginoptions import Option, PluginOptions
    from kplane.core.registry.admission import AdmissionChain
    from kplane.core.registry.registry import Registry
    from kplane.core.runtime.scheme import ResourceType, Scheme
    from kplane.core.server.apisources import APISources
    from kplane.core.server.filterchain import FilterChain

MISSING: Any = object()
TypeKey = tuple[str, str]  # (group, plural)
VersionKey = tuple[str, str, str]  # (group, plural, version)


@dataclass
class Targets:
    """What hooks may change; None where a command has no such thing (``kplane plugins`` has no
    informers, ``kplane controller-manager`` no scheme)."""

    options: PluginOptions | None = None
    scheme: Scheme | None = None
    registry: Registry | None = None
    admission: AdmissionChain | None = None
    authenticators: Authenticators | None = None
    authorizers: Authorizers | None = None
    filters: FilterChain | None = None
    sources: APISources | None = None
    informers: SharedInformerFactory | None = None
    controllers: ControllerManager | None = None


@dataclass(frozen=True)
class VersionState:
    defaulters: tuple[Any, ...]
    to_internal: Any
    from_internal: Any
    protobuf: Any


@dataclass
class Snapshot:
    options: list[Option] = field(default_factory=list)
    types: dict[TypeKey, ResourceType] = field(default_factory=dict)
    priority: dict[str, list[str]] = field(default_factory=dict)
    versions: dict[VersionKey, VersionState] = field(default_factory=dict)
    strategies: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    scales: dict[TypeKey, Any] = field(default_factory=dict)
    subresources: dict[tuple[str, str, str], Any] = field(default_factory=dict)
    mutating: list[Any] = field(default_factory=list)
    validating: list[Any] = field(default_factory=list)
    authenticators: list[Any] = field(default_factory=list)
    authorizers: list[Any] = field(default_factory=list)
    filters: list[Any] = field(default_factory=list)
    sources: list[Any] = field(default_factory=list)
    informers: set[tuple[str, str, str]] = field(default_factory=set)
    controllers: set[str] = field(default_factory=set)


def snapshot(t: Targets) -> Snapshot:
    s = Snapshot()
    if t.options is not None:
        s.options = list(t.options.options)
    if t.scheme is not None:
        s.types = dict(t.scheme._types)
        s.priority = dict(t.scheme._priority)
        s.versions = {(rt.group, rt.plural, v.name): VersionState(tuple(v.defaulters), v.to_internal, v.from_internal, v.protobuf)
                      for rt in s.types.values() for v in rt.versions.values()}
    if t.registry is not None:
        s.strategies = dict(t.registry._strategies)
        s.scales = dict(t.registry._scales)
        s.subresources = dict(t.registry._subresources)
    if t.admission is not None:
        s.mutating = list(t.admission.mutating)
        s.validating = list(t.admission.validating)
    if t.authenticators is not None:
        s.authenticators = [*t.authenticators.request, *t.authenticators.tokens]
    if t.authorizers is not None:
        s.authorizers = list(t.authorizers.registered)
    if t.filters is not None:
        s.filters = list(t.filters.filters)
    if t.sources is not None:
        s.sources = list(t.sources.sources)
    if t.informers is not None:
        s.informers = t.informers.resources()
    if t.controllers is not None:
        s.controllers = set(t.controllers.known)
    return s


def _added(before: list[Any], after: list[Any]) -> list[Any]:
    return [item for item in after if not any(item is old for old in before)]


@dataclass
class VersionEdit:
    """A plugin's change to a version of a kind registered by someone else."""

    key: VersionKey
    defaulters: list[Any]  # those it appended
    before: VersionState
    after: VersionState


@dataclass
class Footprint:
    """Everything one plugin added, in the order it added it."""

    options: list[Option] = field(default_factory=list)  # its kplane serve flags
    types: dict[TypeKey, ResourceType] = field(default_factory=dict)
    priority: list[tuple[str, Any, Any]] = field(default_factory=list)  # (group, before, after)
    version_edits: list[VersionEdit] = field(default_factory=list)
    strategies: list[tuple[tuple[str, str, str], Any, Any]] = field(default_factory=list)  # (key, before, after)
    scales: list[tuple[TypeKey, Any, Any]] = field(default_factory=list)
    subresources: list[tuple[tuple[str, str, str], Any, Any]] = field(default_factory=list)  # add_subresource's
    mutating: list[Any] = field(default_factory=list)  # the chain's (name, function) entries
    validating: list[Any] = field(default_factory=list)
    authenticators: list[Any] = field(default_factory=list)  # the (name, authenticator) entries
    authorizers: list[Any] = field(default_factory=list)  # the (mode, authorizer) entries
    filters: list[Any] = field(default_factory=list)  # the chain's Filter entries
    sources: list[Any] = field(default_factory=list)  # the (name, source) entries of APISources
    informers: list[tuple[str, str, str]] = field(default_factory=list)
    controllers: list[str] = field(default_factory=list)  # names it added to the current controller-manager

    def record(self, before: Snapshot, after: Snapshot) -> Footprint:
        """Add what changed between two snapshots; returns just that change."""
        change = Footprint()
        change.options = _added(before.options, after.options)
        change.types = {k: rt for k, rt in after.types.items() if k not in before.types}
        change.priority = _changed(before.priority, after.priority)
        for key, state in after.versions.items():
            if key[:2] in change.types or key[:2] in self.types:
                continue  # its own kinds go as a whole
            old = before.versions.get(key)
            if old is not None and old != state:
                change.version_edits.append(VersionEdit(key, _added(list(old.defaulters), list(state.defaulters)), old, state))
        change.strategies = _changed(before.strategies, after.strategies)
        change.scales = _changed(before.scales, after.scales)
        change.subresources = _changed(before.subresources, after.subresources)
        change.mutating = _added(before.mutating, after.mutating)
        change.validating = _added(before.validating, after.validating)
        change.authenticators = _added(before.authenticators, after.authenticators)
        change.authorizers = _added(before.authorizers, after.authorizers)
        change.filters = _added(before.filters, after.filters)
        change.sources = _added(before.sources, after.sources)
        change.informers = sorted(after.informers - before.informers)
        change.controllers = sorted(after.controllers - before.controllers)
        self.options += change.options
        self.types.update(change.types)
        self.priority += change.priority
        self.version_edits += change.version_edits
        self.strategies += change.strategies
        self.scales += change.scales
        self.subresources += change.subresources
        self.mutating += change.mutating
        self.validating += change.validating
        self.authenticators += change.authenticators
        self.authorizers += change.authorizers
        self.filters += change.filters
        self.sources += change.sources
        self.informers += change.informers
        self.controllers += change.controllers
        return change

    def strategy_resources(self) -> set[TypeKey]:
        """The resources it gave a strategy or a subresource (scale, or one of its own)."""
        return ({key[:2] for key, _, _ in self.strategies} | {key[:2] for key, _, _ in self.scales}
                | {(g, p) for (g, p, _), _, _ in self.subresources})

    async def undo(self, t: Targets) -> None:
        """Take out what it added (where nobody has replaced it since)."""
        if t.options is not None:
            t.options.remove(self.options)
        if t.controllers is not None:
            for name in self.controllers:
                t.controllers.known.discard(name)
                t.controllers.controllers.pop(name, None)
        if t.admission is not None:
            t.admission.mutating[:] = _without(t.admission.mutating, self.mutating)
            t.admission.validating[:] = _without(t.admission.validating, self.validating)
        if t.authenticators is not None:
            t.authenticators.request[:] = _without(t.authenticators.request, self.authenticators)
            t.authenticators.tokens[:] = _without(t.authenticators.tokens, self.authenticators)
        if t.authorizers is not None:
            t.authorizers.registered[:] = _without(t.authorizers.registered, self.authorizers)
        if t.filters is not None:
            t.filters.filters[:] = _without(t.filters.filters, self.filters)
        if t.sources is not None:
            t.sources.sources[:] = _without(t.sources.sources, self.sources)
        if t.registry is not None:
            _restore(t.registry._strategies, self.strategies)
            _restore(t.registry._scales, self.scales)
            _restore(t.registry._subresources, self.subresources)
        if t.scheme is not None:
            for edit in reversed(self.version_edits):
                rt = t.scheme.get(*edit.key[:2])
                version = rt.versions.get(edit.key[2]) if rt is not None else None
                if version is None:
                    continue
                version.defaulters[:] = _without(version.defaulters, edit.defaulters)
                if (version.to_internal, version.from_internal) == (edit.after.to_internal, edit.after.from_internal):
                    version.to_internal, version.from_internal = edit.before.to_internal, edit.before.from_internal
                if version.protobuf is edit.after.protobuf:
                    version.protobuf = edit.before.protobuf
            for key, rt in self.types.items():
                if t.scheme._types.get(key) is rt:
                    del t.scheme._types[key]
            _restore(t.scheme._priority, self.priority)
            t.scheme.changed()
        if t.informers is not None:
            for key in self.informers:  # those of resources no longer served; others may be shared
                if t.scheme is not None and t.scheme.resource(*key) is not None:
                    continue
                await t.informers.remove(*key)


def _without(items: list[Any], removed: list[Any]) -> list[Any]:
    return [item for item in items if not any(item is gone for gone in removed)]


def _changed(before: dict[Any, Any], after: dict[Any, Any]) -> list[tuple[Any, Any, Any]]:
    """(key, old value or MISSING, new value) for each entry set or replaced: what _restore undoes."""
    return [(k, before.get(k, MISSING), v) for k, v in after.items() if before.get(k, MISSING) is not v]


def _restore(table: dict[Any, Any], changes: list[tuple[Any, Any, Any]]) -> None:
    for key, old, new in reversed(changes):
        if table.get(key, MISSING) is new:
            if old is MISSING:
                del table[key]
            else:
                table[key] = old
