"""A CRD's kind in the Scheme: a :class:`~kplane.api.ResourceType` whose objects stay unstructured.

Decoding a client's object is what apiextensions-apiserver's codec does: ``metadata`` becomes an
ObjectMeta (unknown metadata fields are dropped and reported), the rest is pruned to what the
version's schema declares (reported as unknown fields, which ``fieldValidation`` turns into a 400,
warnings or nothing) and defaulted. Validation against the schema is the strategy's
(:mod:`~kplane.plugins.apiextensions.customresource.strategy`), as in Kubernetes, so type errors
are a 422 listing every field. Reading defaults again in the version asked for, so objects stored
before a default was added read with it.

Conversion between versions is the ``None`` strategy's: only ``apiVersion`` changes.
"""

from __future__ import annotations

import copy
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import orjson

from kplane.api import (
    IGNORE, STRICT, WARN, ObjectMeta, ObjectMetaSchema, ResourceType, Version, build, load, python_to_wire,
    shape_of, unbuild, wire_to_python,
)
from kplane.plugins.apiextensions.customresource.schemas import kind_schema
from kplane.plugins.apiextensions.customresource.types import CustomResource
from kplane.plugins.apiextensions.schema.defaulting import default, has_defaults
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

    @classmethod
    def of(cls, *, group: str, kind: str, plural: str, singular: str, namespaced: bool,
           schemas: dict[str, dict[str, Any] | None], served: frozenset[str], storage_version: str, short_names: Sequence[str] = (),
           categories: Sequence[str] = (), uid: str = "", plugin: str = "") -> CustomResourceType:
        versions = {}
        for name, schema in schemas.items():
            made = kind_schema(group, name, kind, schema)
            versions[name] = Version(name, made(), shape_of(made))
        return cls(group=group, kind=kind, plural=plural, singular=singular, namespaced=namespaced,
                   internal=CustomResource, versions=versions, storage_version=storage_version,
                   short_names=tuple(short_names), categories=tuple(categories), plugin=plugin,
                   schemas=dict(schemas), defaulted=frozenset(v for v, s in schemas.items() if has_defaults(s)),
                   served=served, uid=uid, strategic_merge_patch=False)

    def serves(self, version: str) -> bool:
        return version in self.served

    def reads_stored(self, version: str) -> bool:
        return version == self.storage_version and version not in self.defaulted

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
        return CustomResource(build(ObjectMeta, loaded.data), content), warnings

    def encode(self, obj: CustomResource, version: str) -> dict[str, Any]:
        return {"apiVersion": self.gvk(version).api_version, "kind": self.kind,
                "metadata": python_to_wire(_META, unbuild(obj.metadata)), **obj.content}

    def convert(self, wire: dict[str, Any], from_version: str, to_version: str) -> dict[str, Any]:
        if from_version == to_version and to_version not in self.defaulted:
            return wire
        out = _copy(wire)
        out["apiVersion"] = self.gvk(to_version).api_version
        prune(out, self.schemas.get(to_version), from_storage=True)
        default(out, self.schemas.get(to_version))
        return out

    def internalize(self, wire: dict[str, Any], version: str) -> CustomResource:
        meta = wire_to_python(_META, wire.get("metadata") or {})
        content = _copy({k: v for k, v in wire.items() if k not in _TYPE_META})
        if version in self.defaulted:  # as read from storage: stored before a default was added
            default(content, self.schemas.get(version))
        return CustomResource(build(ObjectMeta, meta), content)


def _copy(value: Any) -> Any:
    """A deep copy of JSON values (pruning and defaulting change objects in place)."""
    return orjson.loads(orjson.dumps(value))
