"""A CRD's kind in the Scheme: a :class:`~kplane.api.ResourceType` whose objects stay unstructured.

Decoding a client's object is what apiextensions-apiserver's codec does: ``metadata`` becomes an
ObjectMeta (unknown metadata fields are dropped and reported), the rest is pruned to what the
version's schema declares (reported as unknown fields, which ``fieldValidation`` turns into a 400,
warnings or nothing) and defaulted. Validation against the schema is the strategy's
(:mod:`~kplane.plugins.apiextensions.customresource.strategy`), as in Kubernetes, so type errors
are a 422 listing every field. Reading defaults again in the version asked for, so objects stored
before a default was added read with it.

Conversion between versions is the CRD's ``spec.conversion``: with ``None`` only ``apiVersion``
changes, here and synchronously; with ``Webhook`` a ConversionReview goes to the CRD's webhook
(:mod:`~kplane.plugins.apiextensions.customresource.conversion`), awaited by the HTTP layer before
it encodes an answer (:meth:`convert_many`: one review for a list page) and by the Store before
it writes (:meth:`storage_form`). An object stays in the version it was decoded or read in
(:attr:`CustomResource.version`), as Kubernetes keeps an unstructured object in its request's
version: the strategy validates and compares old and new objects in that version. What the
webhook answers is pruned to the target version's schema, as kube-apiserver coerces it, and
defaulted on read like any object.

Stored objects may be in any version the CRD's ``status.storedVersions`` names (the storage
version changed while they were stored): stored bytes are answered as they are only while the
storage version is the only one objects may be in.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, ClassVar

import orjson

from kplane.api import (
    IGNORE, STRICT, WARN, ObjectMeta, errors, ObjectMetaSchema, ResourceType, Version, build, load, python_to_wire,
    shape_of, unbuild, wire_to_python,
)
from kplane.plugins.apiextensions.customresource.conversion import ConversionError, WebhookConverter
from kplane.plugins.apiextensions.customresource.schemas import kind_schema
from kplane.plugins.apiextensions.customresource.types import CustomResource
from kplane.plugins.apiextensions.schema import structural
from kplane.plugins.apiextensions.schema.defaulting import default
from kplane.plugins.apiextensions.schema.pruning import MalformedMetadata, prune

_META = shape_of(ObjectMetaSchema)
_TYPE_META = ("apiVersion", "kind", "metadata")


@dataclass(slots=True)
class CustomResourceType(ResourceType):
    """One CRD's resource: ``schemas`` holds each served version's ``openAPIV3Schema``."""

    schemas: dict[str, dict[str, Any] | None] = field(default_factory=dict)
    #: Versions whose schema declares defaults: their reads are defaulted, not the bytes as stored.
    defaulted: frozenset[str] = frozenset()
    served: frozenset[str] = frozenset()  # the versions routed to; the others convert only
    uid: str = ""  # of the CRD it was made from, to tell a recreated CRD from the same one
    #: ``status.storedVersions``: the versions objects may be stored in.
    stored_versions: frozenset[str] = frozenset()
    webhook: WebhookConverter | None = None  # the ``Webhook`` strategy's; None: ``None``
    reads_in_request_version: ClassVar[bool] = True  # columns and selectable fields are per version
    built_in: ClassVar[bool] = False  # defined by a CRD, not by a plugin's code

    @classmethod
    def of(cls, *, group: str, kind: str, plural: str, singular: str, namespaced: bool,
           schemas: dict[str, dict[str, Any] | None], served: frozenset[str], storage_version: str, short_names: Sequence[str] = (),
           categories: Sequence[str] = (), uid: str = "", plugin: str = "", stored_versions: Sequence[str] = (),
           webhook: WebhookConverter | None = None,
           selectable_fields: dict[str, Sequence[str]] | None = None) -> CustomResourceType:
        versions = {}
        for name, schema in schemas.items():
            made = kind_schema(group, name, kind, schema, (selectable_fields or {}).get(name, ()))
            versions[name] = Version(name, made(), shape_of(made))
        return cls(group=group, kind=kind, plural=plural, singular=singular, namespaced=namespaced,
                   internal=CustomResource, versions=versions, storage_version=storage_version,
                   short_names=tuple(short_names), categories=tuple(categories), plugin=plugin,
                   schemas=dict(schemas), defaulted=frozenset(v for v, s in schemas.items() if structural.has_defaults(s)),
                   served=served, uid=uid, strategic_merge_patch=False,
                   stored_versions=frozenset(stored_versions) | {storage_version}, webhook=webhook)

    def serves(self, version: str) -> bool:
        return version in self.served

    def reads_stored(self, version: str) -> bool:
        return version == self.storage_version and version not in self.defaulted and self._stored_as_is(version)

    def _stored_as_is(self, version: str) -> bool:
        """Whether every stored object is in ``version``."""
        return self.stored_versions <= {version}

    def converts_async(self, version: str) -> bool:
        return self.webhook is not None and not self._stored_as_is(version)

    async def convert_many(self, objects: list[dict[str, Any]], version: str) -> list[dict[str, Any]]:
        if self.webhook is None:
            return [self.convert(obj, self.storage_version, version) for obj in objects]
        try:
            converted = await self.webhook.convert(objects, self.gvk(version).api_version)
        except ConversionError as err:
            raise err.api_error() from None
        schema = self.schemas.get(version)
        for obj, original in zip(converted, objects, strict=True):
            if obj is not original:  # what the webhook answered: only what the version declares
                prune(obj, schema)
        return converted

    async def storage_form(self, obj: CustomResource) -> dict[str, Any]:
        if self.webhook is None or obj.version in ("", self.storage_version):
            return self.encode(obj, self.storage_version)
        return (await self.convert_many([self.encode(obj, obj.version)], self.storage_version))[0]

    def decode(self, wire: dict[str, Any], version: str, field_validation: str = STRICT,
               duplicates: Sequence[str] = ()) -> tuple[CustomResource, list[str]]:
        meta = wire.get("metadata")
        if meta is not None and not isinstance(meta, dict):
            raise self._cannot_handle(version, "metadata: must be a JSON object")
        loaded = load(_META, meta or {})
        if loaded.errors:
            for error in loaded.errors:
                error.field = f"metadata.{error.field}" if error.field else "metadata"
            raise self._cannot_handle(version, "; ".join(map(str, loaded.errors)), loaded.errors)
        content = _copy({k: v for k, v in wire.items() if k not in _TYPE_META})
        unknown = [f"metadata.{p}" for p in loaded.unknown]
        try:
            unknown += prune(content, self.schemas.get(version))
        except MalformedMetadata as err:
            raise self._cannot_handle(version, str(err), [err.error]) from None
        strict = [*duplicates, *(f'unknown field "{p}"' for p in unknown)]
        if strict and field_validation == STRICT:
            raise self._cannot_handle(version, f"strict decoding error: {', '.join(strict)}")
        warnings = strict if field_validation == WARN else []
        assert field_validation in (STRICT, WARN, IGNORE)
        default(content, self.schemas.get(version))
        return CustomResource(build(ObjectMeta, loaded.data), content, version), warnings

    def encode(self, obj: CustomResource, version: str) -> dict[str, Any]:
        self._check_converted(obj.version or version, version)
        return {"apiVersion": self.gvk(version).api_version, "kind": self.kind,
                "metadata": python_to_wire(_META, unbuild(obj.metadata)), **obj.content}

    def convert(self, wire: dict[str, Any], from_version: str, to_version: str) -> dict[str, Any]:
        """A read's object in ``to_version``; ``from_version`` is what its ``apiVersion`` says
        (objects stored before the storage version changed are in an older one)."""
        from_version = self._version_of(wire, from_version)
        if from_version == to_version and to_version not in self.defaulted:
            return wire
        self._check_converted(from_version, to_version)
        out = _copy(wire)
        out["apiVersion"] = self.gvk(to_version).api_version
        prune(out, self.schemas.get(to_version), from_storage=True)
        default(out, self.schemas.get(to_version))
        return out

    def internalize(self, wire: dict[str, Any], version: str) -> CustomResource:
        meta = wire_to_python(_META, wire.get("metadata") or {})
        content = _copy({k: v for k, v in wire.items() if k not in _TYPE_META})
        version = self._version_of(wire, version)
        if version in self.defaulted:  # as read from storage: stored before a default was added
            default(content, self.schemas.get(version))
        return CustomResource(build(ObjectMeta, meta), content, version)

    def _version_of(self, wire: dict[str, Any], default_version: str) -> str:
        group, _, version = str(wire.get("apiVersion") or "").rpartition("/")
        return version if group == self.group and version in self.versions else default_version

    def _check_converted(self, from_version: str, to_version: str) -> None:
        """Between versions, only the ``None`` strategy converts synchronously; a webhook's
        conversion is awaited before (:meth:`convert_many`, :meth:`storage_form`)."""
        if self.webhook is not None and from_version != to_version:
            raise errors.internal_error(f"{self.kind} in version {from_version} was not converted to {to_version}")


def _copy(value: Any) -> Any:
    """A deep copy of JSON values (pruning and defaulting change objects in place)."""
    return orjson.loads(orjson.dumps(value))
