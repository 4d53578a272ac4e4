"""OpenAPI v3, generated from the plugins' schemas: what kubectl reads before it writes.

kubectl fetches ``/openapi/v3`` (one URL per group-version, carrying the document's hash) and then
the document of the group-version it works on. It needs three things from it:

* a ``fieldValidation`` query parameter on the kind's ``patch`` operation, found by the
  operation's ``x-kubernetes-group-version-kind``. Without it ``create``/``apply``/``replace``
  fall back to OpenAPI v2 in protobuf (:mod:`kplane.core.server.openapi_v2`) and validate on the client;
* the ``patch`` operation's request media types: when strategic merge patch is listed, client-side
  apply computes one from ``components.schemas`` (merge keys, patch strategies);
* ``components.schemas`` for ``kubectl explain``, rooted at the kind's ``x-kubernetes-group-version-kind``.

Each path's operations are the verbs its resource or subresource serves: the capabilities of the
object serving it, as the registry's :class:`~kplane.core.registry.registry.Endpoint` describes them
for discovery too, and the router checks them (``pods/binding`` is a POST of a core/v1 Binding,
``namespaces/finalize`` a PUT, ``scale`` an autoscaling/v1 Scale);
a DELETE answers with the object for kinds whose storage returns it, with a Status otherwise.
A Connecter's methods are ``connect`` operations answering a stream of anything, named as
kube-apiserver names them (``connectCoreV1GetNamespacedPodExec``).

Documents are built from the scheme's Shapes, cached until ``scheme.generation`` changes and
served as kube-apiserver serves them: a URL with the current ``?hash=`` is immutable, so kubectl's
HTTP cache keeps it and later runs fetch only the index; a stale hash is redirected.

Component names
---------------
Kubernetes names a schema after the Go package declaring it; here the Python module decides,
together with the document's group-version for a kind's own classes:

* a class declared in ``kplane.core.meta`` (or among the meta/v1 wire types below) is
  ``io.k8s.apimachinery.pkg.apis.meta.v1.<Name>``;
* in the document of G/V, a class declared in a module that declares the schema of a kind
  served at G/V is ``<prefix(G)>.<V>.<Name>``: apps/v1beta2 reuses the v1 classes and still gets
  ``io.k8s.api.apps.v1beta2.Deployment``;
* any other class is named after its module's home, the group-version of the kinds whose schemas
  that module declares (the scheme's kinds, and subresource kinds such as autoscaling/v1 Scale),
  the one named in the module path when there are several (``kplane.plugins.core.v1.schemas``): the
  PodTemplateSpec inside apps documents is ``io.k8s.api.core.v1.PodTemplateSpec``. A module
  declaring no kind's schema belongs to the document using it.

A schema class made from OpenAPI (a CRD's kind) names itself: its ``openapi_name`` is the
component's name, its ``openapi`` the component's keys but ``properties`` (description,
``required``, extensions, as written) and ``openapi_v2`` their OpenAPI v2 form; a field's
metadata ``openapi`` is its schema verbatim and ``openapi_v2`` that schema's v2 form, when v2's
differs from what :mod:`kplane.core.server.openapi_v2` would make of it.

``<Name>`` is the kind for a kind's schema, otherwise the class name without a trailing ``Schema``
and then without a trailing tag of the version it is named under (``WidgetSpecV1`` in v1 ->
``WidgetSpec``). ``prefix(G)`` is ``io.k8s.api.<G>`` for Kubernetes' own groups (dotless names,
``core`` for the core group, and ``*.k8s.io`` by their first label) and the reversed DNS name
otherwise (``widgets.test.kplane.io`` -> ``io.kplane.test.widgets``). Should two classes land on
one name in a document, the later one gets a numeric suffix.
"""

from __future__ import annotations

import asyncio
import email.utils
import hashlib
import inspect
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web
from marshmallow import fields as mfields

from kplane.core.meta import deleteoptions, errors
from kplane.core.patching.mediatypes import PATCH_TYPES, STRATEGIC_MERGE_PATCH
from kplane.core.registry.registry import Endpoint, Registry
from kplane.core.registry.rest import CONNECT_VERBS
from kplane.core.runtime import fields
from kplane.core.runtime.gvk import GroupVersion, GroupVersionKind
from kplane.core.runtime.scheme import ResourceType, Scheme
from kplane.core.runtime.schema import Schema, shape_of
from kplane.core.server import negotiation

if TYPE_CHECKING:
    from kplane.core.server.apisources import APISources

META = "io.k8s.apimachinery.pkg.apis.meta.v1"
REF = "#/components/schemas/"
WATCH_STREAM = "application/json;stream=watch"
SELECTABLE_FIELDS = "x-kubernetes-selectable-fields"  # a kind's field selectors (custom resources')
ONE_YEAR = 365 * 24 * 3600
# A resource's served endpoints in a version by subresource ("": the resource itself):
# Registry.endpoints(group, plural, version). Each document lists its own version's (a custom
# resource's subresources may differ per version).
Endpoints = Callable[[str, str, str], dict[str, Endpoint]]

_API_VERSION_TEXT = (
    "The version of the schema this object is written in: group/version, or only the version for the core "
    "group. The server converts between the versions it serves and refuses others."
)
_KIND_TEXT = "The kind of object this is, in CamelCase. The server can tell it from the URL a request is sent to."
_API_VERSION = {"description": _API_VERSION_TEXT, "type": "string"}
_KIND = {"description": _KIND_TEXT, "type": "string"}
_INT_OR_STRING = {"x-kubernetes-int-or-string": True, "anyOf": [{"type": "integer"}, {"type": "string"}]}
# Field types Kubernetes gives a component of their own; explain then shows <IntOrString>, <Quantity>.
_FIELD_COMPONENTS: dict[type[mfields.Field], tuple[str, dict[str, Any]]] = {
    fields.IntOrString: ("io.k8s.apimachinery.pkg.util.intstr.IntOrString", {
        "description": "A whole number or a string, e.g. 3 or \"25%\"; which one a field accepts is in its description.",
        **_INT_OR_STRING,
    }),
    fields.Quantity: ("io.k8s.apimachinery.pkg.api.resource.Quantity", {  # a JSON number is taken too
        "description": "An amount, written as a plain number or with a suffix: binary (Ki, Mi, Gi, Ti, Pi, Ei), "
        "decimal (k, M, G, T, P, E), milli (m), or an exponent (1e3). For example 500m, 1.5, 2Gi.",
        "oneOf": [{"type": "string"}, {"type": "number"}],
    }),
}
_ANYTHING = {"x-kubernetes-preserve-unknown-fields": True}
_SCALARS: tuple[tuple[type[mfields.Field], dict[str, str]], ...] = (
    (fields.Time, {"type": "string", "format": "date-time"}),
    (fields.Bytes, {"type": "string", "format": "byte"}),
    (mfields.DateTime, {"type": "string", "format": "date-time"}),
    (fields.Int32, {"type": "integer", "format": "int32"}),
    (mfields.Integer, {"type": "integer", "format": "int64"}),  # no width is declared; int64 holds every value
    (mfields.Float, {"type": "number", "format": "double"}),
    (mfields.Number, {"type": "number"}),
    (mfields.Boolean, {"type": "boolean"}),
    (fields.Bool, {"type": "boolean"}),
    (mfields.String, {"type": "string"}),
)
_EXTENSIONS = (
    ("patch_strategy", "x-kubernetes-patch-strategy"),
    ("patch_merge_key", "x-kubernetes-patch-merge-key"),
    ("list_type", "x-kubernetes-list-type"),
    ("list_map_keys", "x-kubernetes-list-map-keys"),
)


# -- wire types of the server's own requests and responses (meta/v1) -----------------------------
class ListMetaSchema(Schema):
    """Metadata of a list: the version it was read at and how to read its next page."""

    resource_version = fields.Str(
        metadata={"description": "The storage revision the list reflects; start a watch here to see every later change."}
    )
    continue_ = fields.Str(
        metadata={"description": "Set when the list was cut short by limit: pass it as the continue parameter "
                  "to read the next page of the same snapshot. Tokens expire after compaction."}
    )


class StatusCauseSchema(Schema):
    """One reason a request failed, often tied to a field."""

    reason = fields.Str(metadata={"description": "Machine-readable cause, such as FieldValueRequired."})
    message = fields.Str(metadata={"description": "Human-readable explanation of this cause."})
    field = fields.Str(metadata={"description": "Path of the field at fault, such as spec.replicas, when there is one."})


class StatusDetailsSchema(Schema):
    """The object a Status is about, and the individual causes of a failure."""

    name = fields.Str(metadata={"description": "Name of the object concerned, when there is one."})
    group = fields.Str(metadata={"description": "API group of the object concerned."})
    kind = fields.Str(metadata={"description": "Resource (plural) or kind of the object concerned."})
    uid = fields.Str(metadata={"description": "UID of the object concerned, when known."})
    causes = fields.List(fields.Nested(StatusCauseSchema), metadata={"description": "Each problem found, one per field."})
    retry_after_seconds = fields.Int32(metadata={"description": "Seconds to wait before retrying, when the server suggests it."})


class StatusSchema(Schema):
    """The result of a request that returns no object: a deletion, or any failure."""

    api_version = fields.Str(metadata={"description": _API_VERSION_TEXT})
    kind = fields.Str(metadata={"description": _KIND_TEXT})
    metadata = fields.Nested(ListMetaSchema, metadata={"description": "Standard list metadata; usually empty."})
    status = fields.Str(metadata={"description": "Success or Failure."})
    message = fields.Str(metadata={"description": "Human-readable description of what happened."})
    reason = fields.Str(metadata={"description": "Machine-readable reason for a failure, such as NotFound or Conflict."})
    details = fields.Nested(StatusDetailsSchema, metadata={"description": "More about the object and the causes, by reason."})
    code = fields.Int32(metadata={"description": "The HTTP status code of the response."})


DeleteOptionsSchema = deleteoptions.schema(api_version=fields.Str(metadata={"description": _API_VERSION_TEXT}),
                                           kind=fields.Str(metadata={"description": _KIND_TEXT}))


class PatchSchema(Schema):
    """The body of a PATCH request, in the format its Content-Type names."""


# -- what the server takes -------------------------------------------------------------------------
def patch_types(rt: ResourceType) -> list[str]:
    """The patch formats ``rt`` takes, as its ``patch`` operation lists them.

    The one place deciding it: kubectl sends a strategic merge patch, computed from the schema,
    to any kind listing it, so a kind without merge keys in its schema (a custom resource) leaves
    it out (:attr:`ResourceType.strategic_merge_patch`); kubectl then sends a JSON merge patch.
    """
    return [t for t in PATCH_TYPES if t != STRATEGIC_MERGE_PATCH or rt.strategic_merge_patch]


# -- names --------------------------------------------------------------------------------------------
def group_prefix(group: str) -> str:
    """``io.k8s.api.apps``, ``io.k8s.api.core``, ``io.k8s.api.rbac``; ``io.kplane.test.widgets``."""
    if not group:
        return "io.k8s.api.core"
    if "." not in group or group.endswith(".k8s.io"):
        return f"io.k8s.api.{group.split('.')[0]}"
    return ".".join(reversed(group.split(".")))


def _base_name(class_name: str, version: str) -> str:
    name = class_name.removesuffix("Schema") or class_name
    tag = version[:1].upper() + version[1:]
    return name.removesuffix(tag) if name != tag and name.endswith(tag) else name


class _Names:
    """Component names for one group-version's document (the rule is in the module docstring)."""

    def __init__(self, scheme: Scheme, gv: GroupVersion, endpoints: Endpoints) -> None:
        self.gv = gv
        self._kinds: dict[tuple[type, GroupVersion], str] = {}
        homes: dict[str, list[GroupVersion]] = {}
        declared = [
            (type(rt.versions[version].schema), GroupVersionKind(group, version, rt.kind))
            for group, versions in scheme.groups().items()
            for version in versions
            for rt in scheme.resources_in(group, version)
        ]
        served = [  # subresources serving a kind of their own, such as autoscaling/v1 Scale
            (e.schema, e.kind)
            for group, versions in scheme.groups().items()
            for version in versions
            for rt in scheme.resources_in(group, version)
            for e in endpoints(rt.group, rt.plural, version).values()
            if e.schema is not None and e.kind is not None
        ]
        for cls, gvk in [*declared, *served]:
            here = GroupVersion(gvk.group, gvk.version)
            self._kinds.setdefault((cls, here), gvk.kind)
            if here not in homes.setdefault(cls.__module__, []):
                homes[cls.__module__].append(here)
        self._own = {cls.__module__ for cls, gvk in declared if (gvk.group, gvk.version) == gv}
        self._home = {module: _pick_home(module, gvs) for module, gvs in homes.items()}
        self._given: dict[type, str] = {}
        self._taken: set[str] = set()

    def __call__(self, cls: type) -> str:
        name = self._given.get(cls)
        if name is not None:
            return name
        module = cls.__module__
        declared = cls.__dict__.get("openapi_name")
        if isinstance(declared, str):
            name = declared
        elif module == __name__ or module == "kplane.core.meta" or module.startswith("kplane.core.meta."):
            name = f"{META}.{_base_name(cls.__name__, 'v1')}"
        else:
            gv = self.gv if module in self._own else self._home.get(module, self.gv)
            base = self._kinds.get((cls, gv)) or _base_name(cls.__name__, gv.version)
            name = f"{group_prefix(gv.group)}.{gv.version}.{base}"
        unique, n = name, 1
        while unique in self._taken:
            n += 1
            unique = f"{name}{n}"
        self._given[cls] = unique
        self._taken.add(unique)
        return unique


def _pick_home(module: str, candidates: list[GroupVersion]) -> GroupVersion:
    parts = module.split(".")
    return next((gv for gv in candidates if gv.version in parts), candidates[0])


# -- documents ------------------------------------------------------------------------------------
def _param(name: str, where: str, schema: dict[str, Any], description: str, required: bool = False) -> dict[str, Any]:
    out = {"name": name, "in": where, "description": description, "schema": schema}
    if required:
        out["required"] = True
    return out


_STRING, _INTEGER, _BOOLEAN = {"type": "string"}, {"type": "integer"}, {"type": "boolean"}
# What the server does with each query parameter (see kplane.core.server.params); sendInitialEvents and
# pretty are not served, so not listed.
_QUERY = {
    p["name"]: p
    for p in (
        _param("allowWatchBookmarks", "query", _BOOLEAN,
               "Ask a watch for BOOKMARK events, which carry only the latest resourceVersion, while nothing changes. "
               "Ignored without watch."),
        _param("continue", "query", _STRING,
               "The metadata.continue token of the previous page, to read the next page of the same list."),
        _param("dryRun", "query", _STRING,
               "All: run every stage of the request, admission and validation included, without persisting anything. "
               "Any other value fails the request with 422."),
        _param("fieldManager", "query", _STRING,
               "Name of the actor making the change, recorded in metadata.managedFields: at most 128 bytes, printable "
               "characters only. Required for apply patches; others default to a name from the User-Agent."),
        _param("fieldSelector", "query", _STRING,
               "Only objects whose fields match, e.g. metadata.name=web or status.phase=Running."),
        _param("fieldValidation", "query", _STRING,
               "What to do with unknown or duplicate fields in the body: Strict fails the request with 400 "
               "BadRequest listing them all, Warn accepts it with a warning header per field (the last of "
               "duplicates wins), Ignore drops them silently. Warn unless given; other values fail with 422."),
        _param("force", "query", _BOOLEAN,
               "Apply patches only: take over fields another manager owns instead of failing with a conflict. "
               "Must not be given, even as false, for other patch types."),
        _param("gracePeriodSeconds", "query", _INTEGER,
               "Seconds the object may take to terminate before it is removed; 0 deletes it at once. Unset: the "
               "kind's default (Pods: their spec.terminationGracePeriodSeconds). Ignored when a body is sent."),
        _param("labelSelector", "query", _STRING, "Only objects whose labels match, e.g. app=web,tier!=db."),
        _param("limit", "query", _INTEGER,
               "At most this many items; when more remain, metadata.continue holds a token for the next page."),
        _param("orphanDependents", "query", _BOOLEAN,
               "Deprecated, use propagationPolicy: true is Orphan, false is Background. Not together with "
               "propagationPolicy. Ignored when a body is sent."),
        _param("propagationPolicy", "query", _STRING,
               "What happens to dependents: Orphan leaves them, Background deletes them after the owner is gone, "
               "Foreground before the owner goes. Ignored when a body is sent."),
        _param("resourceVersion", "query", _STRING,
               "For a list, the revision to read at (empty: the latest; 0: any). For a watch, the revision to "
               "start after."),
        _param("resourceVersionMatch", "query", _STRING,
               "How resourceVersion applies to a list: Exact (that revision) or NotOlderThan (that revision or a "
               "later one). Needs resourceVersion."),
        _param("timeoutSeconds", "query", _INTEGER, "For a watch: seconds after which the server ends it."),
        _param("watch", "query", _BOOLEAN, "Stream added, modified and deleted events instead of returning the list."),
    )
}
_LIST = ("allowWatchBookmarks", "continue", "fieldSelector", "labelSelector", "limit", "resourceVersion",
         "resourceVersionMatch", "timeoutSeconds", "watch")
_WATCH_ONLY = ("allowWatchBookmarks", "timeoutSeconds", "watch")
_WRITE = ("dryRun", "fieldManager", "fieldValidation")
_DELETE = ("dryRun", "gracePeriodSeconds", "orphanDependents", "propagationPolicy")
_DELETE_COLLECTION = ("continue", "dryRun", "fieldSelector", "gracePeriodSeconds", "labelSelector", "limit",
                      "orphanDependents", "propagationPolicy", "resourceVersion", "resourceVersionMatch")


def _query(names: tuple[str, ...]) -> list[dict[str, Any]]:
    return [_QUERY[name] for name in names]


def _content(schema: dict[str, Any], *media_types: str) -> dict[str, Any]:
    return {media_type: {"schema": schema} for media_type in media_types or (negotiation.JSON, negotiation.YAML)}


def _responses(*answers: tuple[str, str, dict[str, Any]]) -> dict[str, Any]:
    return {code: {"description": text, "content": _content(ref)} for code, text, ref in answers}


def _prose(docstring: str) -> str:
    """A docstring as a description: paragraphs kept, line breaks within them dropped (kubectl wraps)."""
    paragraphs = inspect.cleandoc(docstring).split("\n\n")
    return "\n\n".join(" ".join(line.strip() for line in p.splitlines()) for p in paragraphs)


def _mark(gvk: GroupVersionKind) -> dict[str, str]:
    """``x-kubernetes-group-version-kind`` as Kubernetes writes it."""
    return {"group": gvk.group, "kind": gvk.kind, "version": gvk.version}


def _camel(text: str) -> str:
    return "".join(part[:1].upper() + part[1:] for part in text.replace("-", ".").split(".") if part)


class _Builder:
    """One group-version's document; components are added as references to them are made."""

    def __init__(self, scheme: Scheme, gv: GroupVersion, endpoints: Endpoints) -> None:
        self.scheme = scheme
        self.gv = gv
        self.endpoints = endpoints
        self.names = _Names(scheme, gv, endpoints)
        self.schemas: dict[str, dict[str, Any]] = {}
        # OpenAPI v2's form of components, where a schema gives one: by component, "" for the
        # component's own keys, else by property (read by kplane.core.server.openapi_v2).
        self.v2: dict[str, dict[str, dict[str, Any]]] = {}
        group = gv.group.removesuffix(".k8s.io") if gv.group else "core"
        self.op_prefix = _camel(group) + _camel(gv.version)
        self.tag = f"{group[:1].lower()}{_camel(group)[1:]}_{gv.version}"

    def build(self) -> dict[str, Any]:
        paths: dict[str, Any] = {}
        for rt in self.scheme.resources_in(*self.gv):
            paths.update(self._paths(rt))
        return {
            "openapi": "3.0.0",
            "info": {"title": "Kubernetes", "version": "unversioned"},
            "paths": paths,
            "components": {"schemas": dict(sorted(self.schemas.items()))},
        }

    # -- components -----------------------------------------------------------------------------
    def ref(self, schema: Schema | type[Schema]) -> dict[str, str]:
        shape = shape_of(schema)
        cls = type(shape.schema)
        name = self.names(cls)
        if name not in self.schemas:
            self.schemas[name] = {}  # taken before walking: a schema may contain itself
            own = cls.__dict__.get("openapi")
            component: dict[str, Any] = {"type": "object"}
            if isinstance(own, dict):  # the schema's own keys, written as OpenAPI (a CRD's root)
                component.update(own)
            elif cls.__doc__:
                component["description"] = _prose(cls.__doc__)
            properties = {key: self._property(fs.field) for key, fs in shape.by_key.items()}
            if properties:
                component["properties"] = properties
            required = [key for key, fs in shape.by_key.items() if fs.field.required]
            if required and not isinstance(own, dict):
                component["required"] = required
            self.schemas[name] = component
            v2 = {key: fs.field.metadata["openapi_v2"] for key, fs in shape.by_key.items() if "openapi_v2" in fs.field.metadata}
            if isinstance(cls.__dict__.get("openapi_v2"), dict):
                v2[""] = cls.__dict__["openapi_v2"]
            if v2:
                self.v2[name] = v2
        return {"$ref": REF + name}

    def _property(self, f: mfields.Field) -> dict[str, Any]:
        verbatim = f.metadata.get("openapi")
        if verbatim is not None:  # a field whose schema was written as OpenAPI (a CRD's)
            return verbatim
        schema = self._type(f)
        if "$ref" in schema:
            schema = {"allOf": [schema]}  # siblings of a bare $ref are ignored, so wrap it as k8s does
        description = f.metadata.get("description")
        if description:
            schema = {"description": description, **schema}
        if "default" in f.metadata:  # what defaulting fills in (and apply's list keys rely on)
            schema["default"] = f.metadata["default"]
        for key, extension in _EXTENSIONS:
            if key in f.metadata:
                schema[extension] = f.metadata[key]
        return schema

    def _type(self, f: mfields.Field) -> dict[str, Any]:
        if isinstance(f, mfields.Nested):
            ref = self.ref(f.schema)
            return {"type": "array", "items": ref} if f.many else ref
        if isinstance(f, mfields.List):
            return {"type": "array", "items": self._type(f.inner)}
        if isinstance(f, mfields.Mapping):
            if f.value_field is None:
                return {"type": "object", **_ANYTHING}
            return {"type": "object", "additionalProperties": self._type(f.value_field)}
        for field_class, (name, component) in _FIELD_COMPONENTS.items():
            if isinstance(f, field_class):
                self.schemas[name] = component
                return {"$ref": REF + name}
        for field_class, schema in _SCALARS:
            if isinstance(f, field_class):
                return dict(schema)
        return dict(_ANYTHING)

    def kind_ref(self, schema: Schema | type[Schema], gvk: GroupVersionKind) -> dict[str, str]:
        """A kind's component: its schema's, with apiVersion and kind, marked with the GVK."""
        ref = self.ref(schema)
        component = self.schemas[ref["$ref"].removeprefix(REF)]
        component["properties"] = {"apiVersion": _API_VERSION, "kind": _KIND, **component.get("properties", {})}
        marks = component.setdefault("x-kubernetes-group-version-kind", [])
        if _mark(gvk) not in marks:
            marks.append(_mark(gvk))
        return ref

    def list_ref(self, rt: ResourceType, one: dict[str, str]) -> dict[str, str]:
        """The list kind's component; it carries its kind's selectable fields, as Kubernetes
        publishes a custom resource's list."""
        name = one["$ref"].removeprefix(REF) + "List"
        selectable = self.schemas[one["$ref"].removeprefix(REF)].get(SELECTABLE_FIELDS)
        self.schemas[name] = {
            "type": "object",
            "description": f"A list of {rt.kind} objects.",
            "properties": {
                "apiVersion": _API_VERSION,
                "kind": _KIND,
                "metadata": {"description": "Standard list metadata.", "allOf": [self.ref(ListMetaSchema)]},
                "items": {"description": f"The {rt.kind} objects.", "type": "array", "items": one},
            },
            "required": ["items"],
            "x-kubernetes-group-version-kind": [_mark(self.kind_of(rt, list_kind=True))],
        }
        if selectable is not None:
            self.schemas[name][SELECTABLE_FIELDS] = selectable
        return {"$ref": REF + name}

    def kind_of(self, rt: ResourceType, list_kind: bool = False) -> GroupVersionKind:
        return GroupVersionKind(self.gv.group, self.gv.version, rt.list_kind if list_kind else rt.kind)

    # -- paths ----------------------------------------------------------------------------------
    def _paths(self, rt: ResourceType) -> dict[str, Any]:
        """Collection, item and subresource paths, each with an operation per verb its endpoint
        serves (the declarations discovery lists too); namespaced kinds also list across namespaces."""
        root = f"/apis/{self.gv.group}/{self.gv.version}" if self.gv.group else f"/api/{self.gv.version}"
        collection = f"{root}/namespaces/{{namespace}}/{rt.plural}" if rt.namespaced else f"{root}/{rt.plural}"
        endpoints = self.endpoints(rt.group, rt.plural, self.gv.version)
        own = endpoints.get("")
        if own is None:
            return {}
        ops = _Operations(self, rt)
        found = {collection: ops.collection(own), collection + "/{name}": ops.item("", own)}
        for sub, endpoint in endpoints.items():
            if sub:
                found[f"{collection}/{{name}}/{sub}"] = ops.item(sub, endpoint)
        if rt.namespaced and "list" in own.verbs:
            found[f"{root}/{rt.plural}"] = ops.all_namespaces(own)
        return {path: item for path, item in found.items() if set(item) - {"parameters"}}


class _Operations:
    """The operations of one kind's paths, each marked as kubectl looks for them."""

    def __init__(self, builder: _Builder, rt: ResourceType) -> None:
        self.builder = builder
        self.rt = rt
        self.one = builder.kind_ref(rt.versions[builder.gv.version].schema, builder.kind_of(rt))
        self.many = builder.list_ref(rt, self.one)
        self.status = builder.ref(StatusSchema)
        self.delete_options = {"content": _content(builder.ref(DeleteOptionsSchema))}
        self.patch = {"required": True, "content": _content(builder.ref(PatchSchema), *patch_types(rt))}
        self.scope = "Namespaced" if rt.namespaced else ""
        self.namespace = [_param("namespace", "path", _STRING, "The namespace the objects are in.", required=True)]

    def _op(self, action: str, verb: str, named: str, description: str, params: tuple[str, ...],
            responses: dict[str, Any], body: dict[str, Any] | None = None,
            gvk: GroupVersionKind | None = None) -> dict[str, Any]:
        kind = gvk or self.builder.kind_of(self.rt)
        operation: dict[str, Any] = {
            "tags": [self.builder.tag],
            "description": description,
            "operationId": verb + self.builder.op_prefix + named,  # as Kubernetes forms them: listAppsV1NamespacedDeployment
            "parameters": _query(params),
        }
        if body is not None:
            operation["requestBody"] = body
        operation["responses"] = responses
        operation["x-kubernetes-action"] = action
        operation["x-kubernetes-group-version-kind"] = _mark(kind)
        return operation

    def _list(self, named: str, what: str, watch: bool) -> dict[str, Any]:
        """The list operation; its watch parameters and stream only for a resource that is watched
        (metrics.k8s.io's are listed, never watched)."""
        if not watch:
            params = tuple(name for name in _LIST if name not in _WATCH_ONLY)
            content = _content(self.many, negotiation.JSON, negotiation.YAML)
            return self._op("list", "list", named, f"List {what}.", params, {"200": {"description": "OK", "content": content}})
        content = _content(self.many, negotiation.JSON, negotiation.YAML, WATCH_STREAM)
        return self._op("list", "list", named, f"List or watch {what}.", _LIST, {"200": {"description": "OK", "content": content}})

    def collection(self, endpoint: Endpoint) -> dict[str, Any]:
        kind, scoped = self.rt.kind, self.scope + self.rt.kind
        path: dict[str, Any] = {"parameters": self.namespace} if self.rt.namespaced else {}
        if "list" in endpoint.verbs:
            path["get"] = self._list(scoped, f"{kind} objects", "watch" in endpoint.verbs)
        if "create" in endpoint.verbs:
            path["post"] = self._op("post", "create", scoped, f"Create a {kind}.", _WRITE,
                                    _responses(("201", "Created", self.one)), {"required": True, "content": _content(self.one)})
        if "deletecollection" in endpoint.verbs:
            path["delete"] = self._op("deletecollection", "delete", f"Collection{scoped}",
                                      f"Delete a collection of {kind} objects.", _DELETE_COLLECTION,
                                      _responses(("200", "OK: the deleted objects", self.many)), self.delete_options)
        return path

    def item(self, sub: str, endpoint: Endpoint) -> dict[str, Any]:
        """An object's path, or one of its subresources (which may take and serve a kind of its own)."""
        what = f"the {sub} of a {self.rt.kind}" if sub else f"a {self.rt.kind}"
        named = self.scope + self.rt.kind + _camel(sub)
        gvk, one = self.builder.kind_of(self.rt), self.one
        if endpoint.kind is not None:
            gvk = endpoint.kind
            one = self.builder.kind_ref(endpoint.schema, gvk) if endpoint.schema is not None else {"type": "object", **_ANYTHING}
        name = _param("name", "path", _STRING, f"Name of the {self.rt.kind}.", required=True)
        path: dict[str, Any] = {"parameters": [name, *(self.namespace if self.rt.namespaced else [])]}
        connected = {CONNECT_VERBS[method] for method in endpoint.connect_methods}
        verbs = [verb for verb in endpoint.verbs if verb not in connected]
        if "get" in verbs:
            path["get"] = self._op("get", "read", named, f"Read {what}.", (), _responses(("200", "OK", one)), gvk=gvk)
        if "create" in verbs and sub:  # a POST to a named subresource, such as pods/binding
            path["post"] = self._op("post", "create", named, f"Create {what}.", _WRITE, _responses(("201", "Created", one)),
                                    {"required": True, "content": _content(one)}, gvk)
        if "update" in verbs:
            path["put"] = self._op("put", "replace", named, f"Replace {what}.", _WRITE,
                                   _responses(("200", "OK", one), ("201", "Created", one)),
                                   {"required": True, "content": _content(one)}, gvk)
        if "patch" in verbs:
            path["patch"] = self._op("patch", "patch", named, f"Partially update {what}.", (*_WRITE, "force"),
                                     _responses(("200", "OK", one), ("201", "Created", one)), self.patch, gvk)
        if "delete" in verbs and not sub:
            # as kube-apiserver documents it: the object for kinds whose DELETE returns it, else a Status
            deleted = one if endpoint.returns_deleted else self.status
            path["delete"] = self._op("delete", "delete", named, f"Delete {what}.", _DELETE,
                                      _responses(("200", "OK", deleted), ("202", "Accepted", deleted)), self.delete_options)
        for method in endpoint.connect_methods:
            path[method.lower()] = self._op("connect", "connect", method.title() + named, f"Connect {method} requests to {what}.",
                                            (), {"200": {"description": "OK", "content": {"*/*": {"schema": _STRING}}}}, gvk=gvk)
        return path

    def all_namespaces(self, endpoint: Endpoint) -> dict[str, Any]:
        kind = self.rt.kind
        return {"get": self._list(f"{kind}ForAllNamespaces", f"{kind} objects in every namespace", "watch" in endpoint.verbs)}


def build_document(scheme: Scheme, gv: GroupVersion, endpoints: Endpoints) -> dict[str, Any]:
    """The OpenAPI v3 document of one served group-version."""
    return _Builder(scheme, gv, endpoints).build()


def build_documents(scheme: Scheme, gv: GroupVersion, endpoints: Endpoints) -> tuple[dict[str, Any], dict[str, Any]]:
    """The OpenAPI v3 document of one served group-version, and the v2 forms its schemas give
    (by component name: ``""`` for the component's own keys, else by property)."""
    builder = _Builder(scheme, gv, endpoints)
    return builder.build(), builder.v2


def document_key(gv: GroupVersion) -> str:
    """``api/v1`` or ``apis/apps/v1``: the index key and the URL under ``/openapi/v3/``."""
    return f"apis/{gv.group}/{gv.version}" if gv.group else f"api/{gv.version}"


# -- serving --------------------------------------------------------------------------------------
@dataclass(frozen=True, slots=True)
class Served:
    """A document's bytes and their hash (uppercase hex SHA-512, as kube-apiserver computes it)."""

    body: bytes
    digest: str

    @classmethod
    def of(cls, document: dict[str, Any]) -> Served:
        body = orjson.dumps(document)
        return cls(body, hashlib.sha512(body).hexdigest().upper())


class OpenAPI:
    """``/openapi/v3`` and its documents, rebuilt when the scheme (or the registry) changes.

    The index also lists each group/version the plugins' ``sources`` name as served elsewhere,
    with the URL that server gives it (the document itself reaches it through the plugin's proxy
    filter); such a group/version replaces one served here."""

    def __init__(self, scheme: Scheme, registry: Registry, sources: APISources | None = None) -> None:
        self.scheme = scheme
        self.registry = registry
        self.sources = sources
        self._generation = -1
        self._index = Served(b"", "")
        self._urls: dict[str, Any] = {}
        self._documents: dict[str, Served] = {}
        self.v2_forms: dict[str, dict[str, dict[str, Any]]] = {}  # of every document's components

    def current(self) -> tuple[Served, dict[str, Served]]:
        """The index and every group-version's document, built once per scheme generation."""
        if self._generation != self.scheme.generation:
            documents, v2_forms = {}, {}
            for group, versions in self.scheme.groups().items():
                for version in versions:
                    gv = GroupVersion(group, version)
                    document, v2 = build_documents(self.scheme, gv, self.registry.endpoints)
                    documents[document_key(gv)] = Served.of(document)
                    v2_forms.update(v2)
            urls = {key: {"serverRelativeURL": _hashed_url(key, doc.digest)} for key, doc in documents.items()}
            self._index, self._urls, self._documents = Served.of({"paths": urls}), urls, documents
            self.v2_forms = v2_forms
            self._generation = self.scheme.generation
        return self._index, self._documents

    async def index(self, request: web.Request) -> web.Response:
        index, _ = self.current()
        remotes = self.sources.remotes(self.scheme.groups()) if self.sources is not None else []
        if remotes:
            found = await asyncio.gather(*(remote.openapi_entry() for _, _, remote in remotes))
            urls = dict(self._urls)
            for (group, version, _), entry in zip(remotes, found, strict=True):
                key = document_key(GroupVersion(group, version))
                urls.pop(key, None)  # the backend's, or none while it cannot tell
                if entry is not None:
                    urls[key] = entry
            index = Served.of({"paths": urls})
        return reply(request, index, immutable=False)

    async def document(self, request: web.Request) -> web.Response:
        key = request.match_info["path"]
        document = self.current()[1].get(key)
        if document is None:
            raise web.HTTPNotFound()
        if not accepts_json(request.headers.get("Accept", "")):
            raise errors.APIError(406, errors.StatusReason.NOT_ACCEPTABLE, "only application/json is served here")
        wanted = request.query.get("hash", "")
        if wanted and wanted != document.digest:  # kube-apiserver's answer to a stale hash
            return web.Response(status=301, headers={"Location": _hashed_url(key, document.digest), "Cache-Control": "no-cache, private"})
        return reply(request, document, immutable=bool(wanted))


def _hashed_url(key: str, digest: str) -> str:
    return f"/openapi/v3/{key}?hash={digest}"


def accepts_json(accept: str) -> bool:
    if not accept.strip():
        return True
    return any(negotiation.media_type(part) in (negotiation.JSON, "application/*", "*/*") for part in accept.split(","))


def reply(request: web.Request, served: Served, *, immutable: bool, content_type: str = negotiation.JSON) -> web.Response:
    """The document with its ETag; 304 when the client has it. Hashed URLs never change."""
    etag = f'"{served.digest}"'
    headers = {"ETag": etag, "Vary": "Accept"}
    if immutable:
        headers["Cache-Control"] = "public, immutable"
        headers["Expires"] = email.utils.formatdate(time.time() + ONE_YEAR, usegmt=True)
    else:
        headers["Cache-Control"] = "no-cache, private"
    if _matches(request.headers.get("If-None-Match", ""), etag):
        return web.Response(status=304, headers=headers)
    return web.Response(body=served.body, content_type=content_type, headers=headers)


def _matches(if_none_match: str, etag: str) -> bool:
    tags = [t.strip().removeprefix("W/") for t in if_none_match.split(",")]
    return "*" in tags or etag in tags
