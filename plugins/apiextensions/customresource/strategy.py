"""The behaviour of custom resources (apiextensions-apiserver's ``registry/customresource``).

* Create sets ``metadata.generation`` to 1; an update bumps it when anything but ``metadata``
  (and ``status``, when the status subresource is on) changed.
* With the status subresource, the main resource ignores ``status`` (a create drops it, an
  update keeps the stored one) and ``/status`` changes nothing but ``status``.
* Validation is the version's schema (:mod:`kplane.plugins.apiextensions.schema.validation`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from kplane.api import AGE, NAME, Column, FieldError, RequestContext, Strategy, dig
from kplane.plugins.apiextensions.customresource.types import CustomResource
from kplane.plugins.apiextensions.schema.cel import RuleValidator
from kplane.plugins.apiextensions.schema.validation import SchemaValidator

@dataclasses.dataclass(slots=True)
class Definition:
    """What a CRD says about its resource's behaviour, per version where the CRD says it per version."""

    schemas: dict[str, dict[str, Any] | None]
    validators: dict[str, SchemaValidator]  # by version
    rules: dict[str, RuleValidator]  # by version
    status: bool = False  # the status subresource is on
    columns: tuple[Column, ...] = (NAME, AGE)
    selectable_fields: Mapping[str, str] = dataclasses.field(default_factory=dict)
    storage_version: str = ""

    def version(self, ctx: RequestContext) -> str:
        """The version a request's object was decoded in (the storage version for writes made in code)."""
        return ctx.version if ctx.version in self.validators else self.storage_version


def _without(content: dict[str, Any], *keys: str) -> dict[str, Any]:
    return {k: v for k, v in content.items() if k not in keys}


class CustomResourceStrategy(Strategy):
    def __init__(self, definition: Definition) -> None:
        self.definition = definition
        self.columns = definition.columns
        self.selectable_fields = definition.selectable_fields
        self.reset_fields = ("status",) if definition.status else ()

    def prepare_for_create(self, ctx: RequestContext, obj: CustomResource) -> None:
        if self.definition.status:
            obj.content.pop("status", None)
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: CustomResource, old: CustomResource) -> None:
        ignored: tuple[str, ...] = ()
        if self.definition.status:
            ignored = ("status",)
            obj.content.pop("status", None)
            if "status" in old.content:
                obj.content["status"] = old.content["status"]
        if _without(obj.content, *ignored) != _without(old.content, *ignored):
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: CustomResource) -> list[FieldError]:
        version = self.definition.version(ctx)
        return (self.definition.validators[version].validate(obj.content)
                + self.definition.rules[version].validate(obj.content, None))

    def validate_update(self, ctx: RequestContext, obj: CustomResource, old: CustomResource) -> list[FieldError]:
        version = self.definition.version(ctx)
        return (self.definition.validators[version].validate(obj.content)
                + self.definition.rules[version].validate(obj.content, old.content))


class CustomResourceStatusStrategy(CustomResourceStrategy):
    """``/status``: the object as stored, with the new ``status`` (and managedFields)."""

    def __init__(self, definition: Definition) -> None:
        super().__init__(definition)
        self.reset_fields = ("spec", "metadata")

    def prepare_for_update(self, ctx: RequestContext, obj: CustomResource, old: CustomResource) -> None:
        status = obj.content.get("status")
        managed = obj.metadata.managed_fields
        has_status = "status" in obj.content
        obj.content = {k: v for k, v in old.content.items() if k != "status"}
        if has_status:
            obj.content["status"] = status
        obj.metadata = dataclasses.replace(old.metadata, managed_fields=managed)


def column(definition: dict[str, Any]) -> Column:
    """One ``additionalPrinterColumns`` entry as a table column (simple JSON paths)."""
    path = (definition.get("jsonPath") or "").lstrip(".")
    return Column(definition.get("name") or "", definition.get("type") or "string", lambda o: dig(o, path, None),
                  description=definition.get("description") or "", priority=definition.get("priority") or 0,
                  format=definition.get("format") or "")
