"""The Scheme: which kinds exist, in which versions, and how their forms convert.

A :class:`ResourceType` is one kind of one group (Deployment in apps) with its internal class,
one schema per served version, the storage version and the resource names discovery shows.
The Scheme changes while the server runs (custom groups come and go), so readers look things up
per request and may key caches on :attr:`Scheme.generation`.

Conversion always goes through the internal form, as in Kubernetes::

    wire (version A) -> Python names -> [A.to_internal] -> internal -> [B.from_internal] -> wire (B)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

from kplane.core.meta import errors
from kplane.core.runtime.gvk import GroupVersion, GroupVersionKind, version_priority_key
from kplane.core.runtime.objects import build, field_names, unbuild
from kplane.core.runtime.protobuf import Message
from kplane.core.runtime.schema import Schema, Shape, load, object_to_wire, python_to_wire, shape_of, wire_to_object, wire_to_python

Converter = Callable[[dict[str, Any]], dict[str, Any]]
Defaulter = Callable[[dict[str, Any]], None]

#: ``fieldValidation``: what decoding does with unknown and duplicate fields (400, warnings, nothing).
STRICT, WARN, IGNORE = "Strict", "Warn", "Ignore"
_TYPE_META = frozenset({"apiVersion", "kind"})
# --runtime-config keys that switch every version of a stability level (kube-apiserver's).
RUNTIME_CONFIG_LEVELS = ("api/all", "api/ga", "api/beta", "api/alpha")


def parse_runtime_config(text: str) -> dict[str, bool]:
    """``apps/v1beta2=true,api/alpha=false`` as kube-apiserver's ``--runtime-config`` reads it:
    ``<group>/<version>`` (``v1`` or ``api/v1`` for the core group) or a level of
    :data:`RUNTIME_CONFIG_LEVELS`, each ``=true`` (the default) or ``=false``.

    Raises ValueError naming the bad entry."""
    config: dict[str, bool] = {}
    for item in (part.strip() for part in text.split(",")):
        if not item:
            continue
        key, _, value = item.partition("=")
        key = key.strip().strip("/")
        if key == "api/v1":
            key = "v1"
        value = value.strip().lower() or "true"
        if value not in ("true", "false"):
            raise ValueError(f"runtime-config {item!r}: the value must be true or false")
        if key not in RUNTIME_CONFIG_LEVELS and (key.count("/") > 1 or not key.rpartition("/")[2]):
            raise ValueError(f"runtime-config {item!r}: expected <group>/<version>, v1, or one of {', '.join(RUNTIME_CONFIG_LEVELS)}")
        config[key] = value == "true"
    return config


def _level(version: str) -> str:
    return "api/alpha" if "alpha" in version else "api/beta" if "beta" in version else "api/ga"


@dataclass(slots=True)
class Version:
    """One served version of a kind: its schema and what differs from the internal form."""

    name: str
    schema: Schema
    shape: Shape
    defaulters: list[Defaulter] = field(default_factory=list)
    to_internal: Converter | None = None  # reshape this version's data into the internal shape
    from_internal: Converter | None = None  # and back
    protobuf: Message | None = None  # table to read protobuf bodies of this kind (kplane.core.runtime.protobuf)


@dataclass(slots=True)
class ResourceType:
    """One resource of a group, as ``scheme.add_kind`` registered it: its kind, names, scope and versions.

    Its four conversion methods (:meth:`decode`, :meth:`encode`, :meth:`convert`,
    :meth:`internalize`) are everything the registry and the HTTP layer ask of a kind's forms;
    a subclass registered with :meth:`Scheme.add_type` may implement them otherwise (custom
    resources keep their objects unstructured). ``versions`` still holds one schema per served
    version: server-side apply and OpenAPI read their shapes.

    Three more are awaited where a conversion may ask another server (a CRD's conversion
    webhook): :meth:`convert_many` on reads (when :meth:`converts_async` says so) and for the
    stored object a write starts from, :meth:`storage_form` before a write is stored. Here they
    are the synchronous methods; an internal object of such a kind is in the version it was
    decoded in (the request's), as Kubernetes keeps an unstructured object.
    """

    group: str
    kind: str
    plural: str
    singular: str
    namespaced: bool
    internal: type
    versions: dict[str, Version]
    storage_version: str
    short_names: tuple[str, ...] = ()
    categories: tuple[str, ...] = ()
    plugin: str = ""  # the plugin that registered it, for `kplane plugins` and errors
    #: Whether strategic merge patches apply: they need a schema's merge keys, which custom
    #: resources do not have (kube-apiserver refuses them there with 415).
    strategic_merge_patch: bool = True
    #: Whether a strategy's table columns and selectable fields read the object in the request's
    #: version (custom resources: each version has its own, as Kubernetes keeps an unstructured
    #: object in its request's version) rather than the storage version's wire form (built-in
    #: kinds, whose columns Kubernetes computes from the internal object).
    reads_in_request_version: ClassVar[bool] = False
    #: Whether a plugin's code defines the kind (registered as the server starts), rather than an
    #: API object at run time (a CustomResourceDefinition's resource): kube-aggregator gives the
    #: group/versions of the latter APIServices of their own kind.
    built_in: ClassVar[bool] = True

    @property
    def list_kind(self) -> str:
        return self.kind + "List"

    def gvk(self, version: str) -> GroupVersionKind:
        return GroupVersionKind(self.group, version, self.kind)

    # -- conversion ------------------------------------------------------------------------
    def serves(self, version: str) -> bool:
        """Whether the kind is served in ``version`` (given its group/version is): every version
        it has, unless a subclass keeps some for conversion only (a CRD's ``served: false``)."""
        return version in self.versions

    def reads_stored(self, version: str) -> bool:
        """Whether an object's stored bytes are its answer in ``version`` as they are (the read
        path then sends them without decoding); else the answer is :meth:`convert`'s."""
        return version == self.storage_version

    def decode(self, wire: dict[str, Any], version: str, field_validation: str = STRICT,
               duplicates: Sequence[str] = ()) -> tuple[Any, list[str]]:
        """Validated internal object from a client's body; returns it with warnings to send.

        ``duplicates`` are the body's duplicate keys, as the decoder words them; with unknown
        fields they are the strict-decoding errors ``field_validation`` decides about. Raises
        400 BadRequest for those (Strict) and for wrong types.
        """
        v = self.versions[version]
        loaded = load(v.shape, wire, skip=_TYPE_META)
        warnings: list[str] = []
        strict = [*duplicates, *(f'unknown field "{p}"' for p in loaded.unknown)]
        if strict and field_validation == STRICT:
            raise self._cannot_handle(version, f"strict decoding error: {', '.join(strict)}")
        if strict and field_validation == WARN:
            warnings = strict
        if loaded.errors:
            raise self._cannot_handle(version, "; ".join(map(str, loaded.errors)), loaded.errors, loaded.conversion)
        data = loaded.data
        for default in v.defaulters:
            default(data)
        if v.to_internal is not None:
            data = v.to_internal(data)
        return build(self.internal, data), warnings

    def encode(self, obj: Any, version: str) -> dict[str, Any]:
        """Wire form of an internal object in ``version``."""
        v = self.versions[version]
        if v.from_internal is None:
            return self._typed(version, object_to_wire(v.shape, obj))
        return self._typed(version, python_to_wire(v.shape, v.from_internal(unbuild(obj))))

    def convert(self, wire: dict[str, Any], from_version: str, to_version: str) -> dict[str, Any]:
        """Wire form in ``to_version`` of a wire object in ``from_version`` (the read path)."""
        if from_version == to_version:
            return wire
        source, target = self.versions[from_version], self.versions[to_version]
        data = wire_to_python(source.shape, wire)
        if source.to_internal is not None:
            data = source.to_internal(data)
        if target.from_internal is not None:
            data = target.from_internal(data)
        return self._typed(to_version, python_to_wire(target.shape, data))

    # -- conversion that is awaited (a custom resource's conversion webhook) -------------------
    def converts_async(self, version: str) -> bool:
        """Whether objects read from storage reach ``version`` only through :meth:`convert_many`
        (which may ask another server); the HTTP layer then awaits it before it encodes an
        answer. False: :meth:`convert` converts each object as it is written."""
        return False

    async def convert_many(self, objects: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
        """Stored objects (each in the version its ``apiVersion`` names) in ``version``, all at
        once: one conversion request for a whole list page or watch batch."""
        return [self.convert(obj, self.storage_version, version) for obj in objects]

    async def storage_form(self, obj: Any) -> dict[str, Any]:
        """The storage version's wire form of an internal object a write is about to store."""
        return self.encode(obj, self.storage_version)

    def internalize(self, wire: dict[str, Any], version: str) -> Any:
        """Internal object from stored, already valid wire data (no validation, no defaulting)."""
        v = self.versions[version]
        if v.to_internal is None:
            return wire_to_object(v.shape, self.internal, wire)
        return build(self.internal, v.to_internal(wire_to_python(v.shape, wire)))

    def _typed(self, version: str, body: dict[str, Any]) -> dict[str, Any]:
        return {"apiVersion": GroupVersion(self.group, version).api_version, "kind": self.kind, **body}

    def _cannot_handle(self, version: str, why: str, causes: list[errors.FieldError] | None = None,
                       conversion: str | None = None) -> DecodeError:
        base = errors.bad_request(f'{self.kind} in version "{version}" cannot be handled as a {self.kind}: {why}', causes)
        return DecodeError(base.code, base.reason, base.message, base.details, why=why, conversion=conversion)


@dataclass(slots=True)
class DecodeError(errors.APIError):
    """400 "cannot be handled as": a body that does not decode into its kind. ``why`` is the
    reason without that prefix and ``conversion`` the unstructured converter's wording of a
    container mismatch, for a patch to word the error as kube-apiserver's patchers do."""

    why: str = ""
    conversion: str | None = None


class ConflictError(ValueError):
    """A kind or resource is registered twice; ``owner`` is the plugin that registered it first,
    ``what`` names what both claim (``"pods.core"``, ``"kind Pod of group core"``)."""

    def __init__(self, what: str, owner: str) -> None:
        super().__init__(f"{what} is already registered by plugin {owner!r}")
        self.what = what
        self.owner = owner


class Scheme:
    """Every kind the server knows, indexed for the lookups routing and clients need."""

    def __init__(self) -> None:
        self._types: dict[tuple[str, str], ResourceType] = {}  # (group, plural)
        self._priority: dict[str, list[str]] = {}  # group -> versions, preferred first
        self._off_by_default: set[GroupVersion] = set()
        self._runtime_config: dict[str, bool] = {}
        self.generation = 0  # bumped on every change, for caches of derived documents
        self._listeners: list[Callable[[], None]] = []

    # -- registration (plugins call these from their hooks) ---------------------------------
    def add_kind(
        self,
        *,
        group: str,
        kind: str,
        plural: str,
        internal: type,
        versions: dict[str, type[Schema] | Schema],
        storage_version: str,
        namespaced: bool = True,
        singular: str = "",
        short_names: tuple[str, ...] | list[str] = (),
        categories: tuple[str, ...] | list[str] = (),
        plugin: str = "",
    ) -> ResourceType:
        """Register a kind with its internal dataclass and one schema per served version.

        Raises :class:`ConflictError` if the group already has this resource or this kind: a
        group/version/kind maps to one resource, and a group's resource to one kind."""
        if storage_version not in versions:
            raise ValueError(f"{kind}: storage version {storage_version!r} is not one of the served versions")
        if not dataclasses.is_dataclass(internal):
            raise TypeError(f"{kind}: the internal type must be a dataclass, got {internal!r}")
        return self.add_type(ResourceType(
            group=group,
            kind=kind,
            plural=plural,
            singular=singular or kind.lower(),
            namespaced=namespaced,
            internal=internal,
            versions={
                name: Version(name, s() if isinstance(s, type) else s, shape_of(s)) for name, s in versions.items()
            },
            storage_version=storage_version,
            short_names=tuple(short_names),
            categories=tuple(categories),
            plugin=plugin,
        ))

    def add_type(self, rt: ResourceType) -> ResourceType:
        """Register a :class:`ResourceType` made elsewhere: a subclass that decodes and encodes
        its own way, as custom resources do (their versions come from a CustomResourceDefinition
        at run time, not from a plugin's schemas). Same conflicts as :meth:`add_kind`."""
        if (rt.group, rt.plural) in self._types:
            other = self._types[(rt.group, rt.plural)]
            raise ConflictError(f"{rt.plural}.{rt.group or 'core'}", other.plugin)
        other_kind = self.by_kind(rt.group, rt.kind)
        if other_kind is not None:
            raise ConflictError(f"kind {rt.kind} of group {rt.group or 'core'}", other_kind.plugin)
        self._types[(rt.group, rt.plural)] = rt
        self.changed()
        return rt

    def remove_type(self, group: str, plural: str) -> ResourceType | None:
        """Stop knowing ``plural.group`` (a CustomResourceDefinition deleted or renamed); the
        group's version priority goes with its last kind. Returns what was removed."""
        rt = self._types.pop((group, plural), None)
        if rt is not None:
            if not any(g == group for g, _ in self._types):
                self._priority.pop(group, None)
            self.changed()
        return rt

    def add_conversion(
        self,
        group: str,
        version: str,
        kind: str,
        *,
        to_internal: Converter | None = None,
        from_internal: Converter | None = None,
    ) -> None:
        """Hand-written conversion for a version whose shape differs from the internal one.

        Both functions take and return Python-named dicts: ``to_internal`` reshapes this
        version's data into the internal shape, ``from_internal`` does the reverse.
        """
        v = self._version(group, version, kind)
        v.to_internal, v.from_internal = to_internal, from_internal
        self.changed()

    def add_defaulter(self, group: str, version: str, kind: str, defaulter: Defaulter) -> None:
        """Defaulting for one version: called with the decoded (Python-named) data, in place."""
        self._version(group, version, kind).defaulters.append(defaulter)

    def add_protobuf(self, group: str, version: str, kind: str, message: Message) -> None:
        """Accept ``application/vnd.kubernetes.protobuf`` bodies of this kind in this version.

        ``message`` is the kind's table (see :mod:`kplane.core.runtime.protobuf`); the decoded JSON
        then goes through the version's ordinary decoding and validation.
        """
        self._version(group, version, kind).protobuf = message

    def set_version_priority(self, group: str, versions: list[str]) -> None:
        """Versions of ``group`` in preference order; the first is the preferred version."""
        self._priority[group] = list(versions)
        self.changed()

    def set_served_by_default(self, group: str, version: str, served: bool) -> None:
        """Whether ``group/version`` is served when ``--runtime-config`` does not say; a version
        registered but off by default (as Kubernetes keeps removed betas' code) is converted
        to and from like any other, only not reachable: no routes, discovery or OpenAPI."""
        (self._off_by_default.discard if served else self._off_by_default.add)(GroupVersion(group, version))
        self.changed()

    def set_runtime_config(self, config: dict[str, bool]) -> None:
        """The server's ``--runtime-config`` (see :func:`parse_runtime_config`)."""
        self._runtime_config = dict(config)
        self.changed()

    def unknown_runtime_config(self) -> list[str]:
        """``--runtime-config`` keys that name no registered group/version."""
        registered = {rt.gvk(v).api_version for rt in self._types.values() for v in rt.versions}
        return [key for key in self._runtime_config if key not in RUNTIME_CONFIG_LEVELS and key not in registered]

    def served(self, group: str, version: str) -> bool:
        """Whether ``group/version`` is served: its own --runtime-config entry, else its
        stability level's (``api/beta``), else ``api/all``, else the plugin's default."""
        config = self._runtime_config
        for key in (GroupVersion(group, version).api_version, _level(version), "api/all"):
            if key in config:
                return config[key]
        return GroupVersion(group, version) not in self._off_by_default

    def remove_group(self, group: str) -> None:
        for key in [k for k in self._types if k[0] == group]:
            del self._types[key]
        self._priority.pop(group, None)
        self.changed()

    def check(self, types: Iterable[ResourceType] | None = None) -> list[str]:
        """Problems a plugin author must fix: versions that cannot convert automatically
        (of ``types``, default all)."""
        problems = []
        for rt in self._types.values() if types is None else types:
            for v in rt.versions.values():
                if v.to_internal is None:
                    problems += _shape_mismatches(v.shape, rt.internal, f"{rt.gvk(v.name).api_version} {rt.kind}")
        return problems

    # -- lookups ---------------------------------------------------------------------------
    def get(self, group: str, plural: str) -> ResourceType | None:
        return self._types.get((group, plural))

    def resource(self, group: str, version: str, plural: str) -> ResourceType | None:
        """The kind served as ``plural`` in ``group/version``; None when not served there."""
        rt = self._types.get((group, plural))
        return rt if rt is not None and rt.serves(version) and self.served(group, version) else None

    def by_kind(self, group: str, kind: str) -> ResourceType | None:
        for rt in self._types.values():
            if rt.group == group and rt.kind == kind:
                return rt
        return None

    def types(self) -> list[ResourceType]:
        return list(self._types.values())

    def groups(self) -> dict[str, list[str]]:
        """Each group with its served versions, preferred first (groups with none left out)."""
        served: dict[str, set[str]] = {}
        for rt in self._types.values():
            versions = {v for v in rt.versions if rt.serves(v) and self.served(rt.group, v)}
            if versions:
                served.setdefault(rt.group, set()).update(versions)
        return {group: self.preferred_first(group, versions) for group, versions in sorted(served.items())}

    def preferred_first(self, group: str, versions: Iterable[str]) -> list[str]:
        """``versions`` of ``group`` in preference order: the group's priority, then Kubernetes'
        version order."""
        versions = set(versions)
        preferred = [v for v in self._priority.get(group, []) if v in versions]
        return preferred + sorted(versions - set(preferred), key=version_priority_key)

    def resources_in(self, group: str, version: str) -> list[ResourceType]:
        """The kinds served in ``group/version``, by resource name."""
        if not self.served(group, version):
            return []
        return sorted(
            (rt for rt in self._types.values() if rt.group == group and rt.serves(version)),
            key=lambda rt: rt.plural,
        )

    def _version(self, group: str, version: str, kind: str) -> Version:
        rt = self.by_kind(group, kind)
        if rt is None or version not in rt.versions:
            raise KeyError(f"{GroupVersionKind(group, version, kind)} is not registered")
        return rt.versions[version]

    def changed(self) -> None:
        """Note a change that derived documents (discovery, OpenAPI) must reflect."""
        self.generation += 1
        for listener in list(self._listeners):
            listener()

    def add_listener(self, listener: Callable[[], None]) -> Callable[[], None]:
        """Call ``listener`` after every change, for what must follow kinds that come and go
        while the server runs (it must not block: schedule the work). Returns its remover."""
        self._listeners.append(listener)
        return lambda: self._listeners.remove(listener) if listener in self._listeners else None


def _shape_mismatches(shape: Shape, internal: type, where: str) -> list[str]:
    names = field_names(internal)
    problems = []
    for attr, fs in shape.by_attr.items():
        if attr not in names:
            problems.append(f"{where}: field {fs.key!r} has no internal counterpart {internal.__name__}.{attr}")
        elif fs.child is not None and names[attr] is not None:
            problems += _shape_mismatches(fs.child, names[attr], where)
    return problems
