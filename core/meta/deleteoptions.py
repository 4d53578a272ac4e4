"""``metav1.DeleteOptions``, described once.

The dataclasses below are what the Store acts on, and everything else about DeleteOptions comes
from their fields: how a body is decoded (:func:`decode`, typed as Go decodes it), which options a
DELETE also takes as query parameters (:data:`QUERY`, the fields marked ``query``), and the
OpenAPI schema (:func:`schema`, from each field's ``description``). A new option is one field
here. Validation (``ValidateDeleteOptions``) is :meth:`DeleteOptions.problems`, checked once,
where a request's options are read.
"""

from __future__ import annotations

import dataclasses
import functools
import types
import typing
from dataclasses import dataclass, field
from collections.abc import Collection
from typing import Any

import orjson
from marshmallow.fields import Field

from kplane.core.meta import errors
from kplane.core.runtime import fields
from kplane.core.runtime.schema import Schema, camel_case

PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")
DRY_RUN_ALL = "All"
API_VERSIONS = ("v1", "meta.k8s.io/v1", "meta.k8s.io/v1beta1")  # "v1": what the dynamic client sends


def _doc(description: str, *, query: bool = False) -> dict[str, Any]:
    """A field's metadata: its OpenAPI description, and whether it is a query parameter too."""
    return {"description": description, "query": query}


@dataclass(slots=True)
class Preconditions:
    """Conditions the object must meet for a deletion to go ahead."""

    uid: str | None = field(default=None, metadata=_doc("Delete only if the object still has this UID."))
    resource_version: str | None = field(
        default=None, metadata=_doc("Delete only if the object is still at this resourceVersion."))


@dataclass(slots=True)
class DeleteOptions:
    """Options of a deletion, in the body; without a body, from query parameters of the same names."""

    # None is "not set", which differs from every value (Go's pointers).
    grace_period_seconds: int | None = field(
        default=None, metadata=_doc("Seconds the object may take to terminate; 0 deletes it at once.", query=True))
    preconditions: Preconditions = field(
        default_factory=Preconditions, metadata=_doc("Refuse the deletion unless these hold."))
    orphan_dependents: bool | None = field(
        default=None, metadata=_doc("Deprecated: true means propagationPolicy Orphan.", query=True))
    propagation_policy: str | None = field(default=None, metadata=_doc(
        "What happens to dependents: Orphan leaves them, Background deletes them after the owner is gone, "
        "Foreground before the owner goes.", query=True))
    dry_run: list[str] = field(
        default_factory=list, metadata=_doc("All: check the deletion without carrying it out.", query=True))

    def problems(self) -> list[errors.FieldError]:
        """``ValidateDeleteOptions``: what kube-apiserver refuses with 422 before deleting anything."""
        found = []
        if self.orphan_dependents is not None and self.propagation_policy is not None:
            found.append(errors.invalid("propagationPolicy", self.propagation_policy,
                                        "orphanDependents and deletionPropagation cannot be both set"))
        if self.propagation_policy is not None and self.propagation_policy not in PROPAGATION_POLICIES:
            found.append(errors.not_supported("propagationPolicy", self.propagation_policy, [*PROPAGATION_POLICIES, "nil"]))
        return found + dry_run_problems(self.dry_run)

    def check(self) -> None:
        """Raise the 422 Invalid of :meth:`problems`, if any."""
        found = self.problems()
        if found:
            raise errors.invalid_object("DeleteOptions", "meta.k8s.io", "", found)

    @property
    def policy(self) -> str:
        """The propagation policy asked for, with ``orphanDependents`` translated; "" for none."""
        if self.orphan_dependents is not None:
            return "Orphan" if self.orphan_dependents else "Background"
        return self.propagation_policy or ""


def dry_run_problems(values: list[str]) -> list[errors.FieldError]:
    """``ValidateDryRun``: "All" is the only dry run there is."""
    if any(value != DRY_RUN_ALL for value in values):
        return [errors.not_supported("dryRun", values, [DRY_RUN_ALL])]
    return []


# -- the fields' types --------------------------------------------------------------------------------
# Each Python type a field may have: its schema field, and how a message names the JSON it wants.
_TYPES: dict[Any, tuple[type[Field], str]] = {int: (fields.Int, "an integer"), str: (fields.Str, "a string"),
                                              bool: (fields.Bool, "a boolean")}
_STRINGS = list[str]


@functools.cache  # type hints are resolved once per class, not on every DELETE body
def _fields(cls: type) -> tuple[tuple[dataclasses.Field[Any], str, Any], ...]:
    """Each field of ``cls`` with its wire name and its type (``X | None`` as ``X``)."""
    hints = typing.get_type_hints(cls)
    found = []
    for f in dataclasses.fields(cls):
        hint = hints[f.name]
        if typing.get_origin(hint) in (typing.Union, types.UnionType):
            [hint] = [arg for arg in typing.get_args(hint) if arg is not type(None)]
        found.append((f, camel_case(f.name), hint))
    return tuple(found)


#: The options a DELETE takes as query parameters when it has no body: wire name -> type.
QUERY: dict[str, Any] = {key: kind for f, key, kind in _fields(DeleteOptions) if f.metadata["query"]}


# -- decoding -----------------------------------------------------------------------------------------
def decode(body: object, api_versions: Collection[str] = API_VERSIONS) -> DeleteOptions:
    """A DeleteOptions body (its JSON value), typed as Go decodes it: a wrong type is 400, unknown
    fields are ignored. ``api_versions``: those it may name (meta's and the resource's group's)."""
    if not isinstance(body, dict):
        raise errors.bad_request(f"the body of a delete must be a DeleteOptions object, not {_json_type(body)}")
    kind, api_version = body.get("kind"), body.get("apiVersion")
    if kind not in (None, "", "DeleteOptions"):
        raise errors.bad_request(f'the body of a delete must be DeleteOptions, not {_shown(kind)}')
    if api_version not in (None, "", *api_versions):
        raise errors.bad_request(f"DeleteOptions is not known in apiVersion {_shown(api_version)}")
    return _decode(DeleteOptions, body, "")


def _decode(cls: type, data: dict[str, Any], prefix: str) -> Any:
    values = {}
    for f, key, kind in _fields(cls):
        value = data.get(key)
        if value is not None:  # absent or null: not set
            values[f.name] = _typed(value, kind, prefix + key)
    return cls(**values)


def _typed(value: Any, kind: Any, path: str) -> Any:
    if dataclasses.is_dataclass(kind):
        if not isinstance(value, dict):
            raise _wrong(path, "an object", value)
        return _decode(kind, value, path + ".")  # type: ignore[arg-type]
    if kind == _STRINGS:
        if not isinstance(value, list):
            raise _wrong(path, "a list", value)
        if not all(isinstance(item, str) for item in value):
            raise errors.bad_request(f"DeleteOptions.{path} must be a list of strings")
        return list(value)
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise _wrong(path, _TYPES[kind][1], value)
    if kind is int and not fields.INT64_MIN <= value <= fields.INT64_MAX:
        raise errors.bad_request(f"DeleteOptions.{path} is out of range of int64: {value}")
    return value


def _wrong(path: str, wanted: str, value: object) -> errors.APIError:
    return errors.bad_request(f"DeleteOptions.{path} must be {wanted}, not {_json_type(value)}")


def _json_type(value: object) -> str:
    """How JSON names ``value``'s type, for messages (never a Python repr)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, (int, float)):
        return "a number"
    if isinstance(value, str):
        return "a string"
    return "a list" if isinstance(value, list) else "an object"


def _shown(value: object) -> str:
    """A client's value quoted for a message: strings as JSON strings, other types by name."""
    return orjson.dumps(value).decode() if isinstance(value, str) else _json_type(value)


# -- the schema ---------------------------------------------------------------------------------------
def schema(**type_meta: Field) -> type[Schema]:
    """The wire schema of DeleteOptions (for the OpenAPI document), with ``type_meta`` (its
    ``api_version`` and ``kind`` fields, as the document describes them) first."""
    return _schema(DeleteOptions, type_meta)


def _schema(cls: type, first: dict[str, Field]) -> type[Schema]:
    attrs: dict[str, Any] = {"__doc__": cls.__doc__, "__module__": __name__, **first}
    for f, _, kind in _fields(cls):
        metadata = {"description": f.metadata["description"]}
        if dataclasses.is_dataclass(kind):
            attrs[f.name] = fields.Nested(_schema(kind, {}), metadata=metadata)  # type: ignore[arg-type]
        elif kind == _STRINGS:
            attrs[f.name] = fields.List(fields.Str(), metadata=metadata)
        else:
            attrs[f.name] = _TYPES[kind][0](metadata=metadata)
    return type(f"{cls.__name__}Schema", (Schema,), attrs)
