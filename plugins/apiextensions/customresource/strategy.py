"""The behaviour of custom resources (apiextensions-apiserver's ``registry/customresource``).

* Create sets ``metadata.generation`` to 1; an update bumps it when anything but ``metadata``
  changed (``status`` too when the version has no status subresource).
* With the status subresource, the main resource ignores ``status`` (a create drops it, an
  update keeps the stored one) and ``/status`` changes nothing but ``status``: the rest of the
  object, ``metadata`` included, stays as stored, but for the managedFields of the write.
* A PUT must name the resourceVersion it replaces (``AllowUnconditionalUpdate`` is false).
* With the scale subresource, the replica counts and the selector must have their types
  (``ValidateScaleSpec``/``ValidateScaleStatus``), in Kubernetes' words.
* While the CRD is terminating no object is created (403, as ``forbidCreateAdmission``).
* Validation is the version's schema (:mod:`kplane.plugins.apiextensions.schema.validation`)
  and its CEL rules (root rules see ``apiVersion``, ``kind``, ``metadata.name`` and
  ``generateName``); on update, errors of values unchanged from the stored object ratchet
  away (CRDValidationRatcheting, on by default in Kubernetes 1.32).

A strategy serves one version of the CRD (its subresources, columns and selectable fields are
the version's); the one registered for every version is the storage version's, for writes made
in code.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import Any

from kplane.api import FieldError, FieldErrorType, RequestContext, Strategy, errors, invalid
from kplane.plugins.apiextensions.customresource.columns import go_float
from kplane.plugins.apiextensions.customresource.types import CustomResource
from kplane.plugins.apiextensions.schema.cel import RuleValidator, root_value
from kplane.plugins.apiextensions.schema.validation import SchemaValidator

MAX_INT32 = 2**31 - 1
TERMINATING = "create not allowed while custom resource definition is terminating"


@dataclasses.dataclass(slots=True)
class Definition:
    """What a CRD says of its resource in every version."""

    validators: dict[str, SchemaValidator]  # by version
    rules: dict[str, RuleValidator]  # by version
    storage_version: str = ""
    plural: str = ""
    group: str = ""
    kind: str = ""
    terminating: bool = False  # the CRD is being deleted

    def version(self, ctx: RequestContext) -> str:
        """The version a request's object was decoded in (the storage version for writes made in code)."""
        return ctx.version if ctx.version in self.validators else self.storage_version


@dataclasses.dataclass(frozen=True, slots=True)
class ScalePaths:
    """A version's scale subresource: where the counts and the selector are (leading dot kept,
    as Kubernetes names the field in its errors)."""

    spec_replicas: str
    status_replicas: str
    label_selector: str = ""

    @classmethod
    def of(cls, scale: Mapping[str, Any]) -> ScalePaths:
        return cls(scale.get("specReplicasPath") or "", scale.get("statusReplicasPath") or "",
                   scale.get("labelSelectorPath") or "")


@dataclasses.dataclass(frozen=True, slots=True)
class Behaviour:
    """What differs between a CRD's versions: subresources, columns, selectable fields."""

    status: bool = False
    scale: ScalePaths | None = None
    columns: tuple[Any, ...] = ()
    selectable_fields: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    warnings: tuple[str, ...] = ()  # a deprecated version's


class CustomResourceStrategy(Strategy):
    allow_unconditional_update = False

    def __init__(self, definition: Definition, behaviour: Behaviour) -> None:
        self.definition = definition
        self.behaviour = behaviour
        self.columns = behaviour.columns
        self.selectable_fields = behaviour.selectable_fields
        self.version_warnings = behaviour.warnings
        self.reset_fields = ("status",) if behaviour.status else ()

    def prepare_for_create(self, ctx: RequestContext, obj: CustomResource) -> None:
        if self.definition.terminating:
            raise errors.forbidden_error(self.definition.plural, self.definition.group, obj.metadata.name or "", TERMINATING)
        if self.behaviour.status:
            obj.content.pop("status", None)
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: CustomResource, old: CustomResource) -> None:
        if self.behaviour.status:
            if "status" in old.content:
                obj.content["status"] = old.content["status"]
            else:
                obj.content.pop("status", None)
        if obj.content != old.content:
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: CustomResource) -> list[FieldError]:
        version = self.definition.version(ctx)
        errs = self.definition.validators[version].validate(obj.content) + scale_errors(obj.content, self.behaviour.scale, spec=True)
        return errs + self.rule_errors(ctx, version, obj, None, errs)

    def validate_update(self, ctx: RequestContext, obj: CustomResource, old: CustomResource) -> list[FieldError]:
        version = self.definition.version(ctx)
        errs = (self.definition.validators[version].validate(obj.content, old.content)
                + scale_errors(obj.content, self.behaviour.scale, spec=True))
        return errs + self.rule_errors(ctx, version, obj, old, errs)

    def rule_errors(self, ctx: RequestContext, version: str, obj: CustomResource, old: CustomResource | None,
                    found: list[FieldError]) -> list[FieldError]:
        """The version's CEL rules on the whole object (and the stored one on update); the
        failures that ratchet become the request's warnings, as kube-apiserver sends them. Not run
        when schema validation ``found`` a wrong type, a missing or unsupported value or too long a
        one (``hasBlockingErr``): rules would see values their schema does not allow."""
        rules = self.definition.rules[version]
        if rules.root is None:
            return []
        if any(error.type in _BLOCKING for error in found):
            return [invalid("<nil>", "null", RULES_NOT_CHECKED)]  # field.Invalid(nil, nil, ...): Go prints the nil as "null"
        api_version = f"{self.definition.group}/{version}"
        def value(o: CustomResource) -> dict[str, Any]:
            meta = {"name": o.metadata.name, "generateName": o.metadata.generate_name}
            return root_value(api_version, self.definition.kind, meta, o.content)
        return rules.validate(value(obj), None if old is None else value(old), ctx.warnings)


#: Schema errors after which CEL rules are not evaluated (kube's ``hasBlockingErr``).
_BLOCKING = frozenset({FieldErrorType.NOT_SUPPORTED, FieldErrorType.REQUIRED, FieldErrorType.TOO_LONG,
                       FieldErrorType.TOO_MANY, FieldErrorType.TYPE_INVALID})
RULES_NOT_CHECKED = ("some validation rules were not checked because the object was invalid; "
                     "correct the existing errors to complete validation")


class CustomResourceStatusStrategy(CustomResourceStrategy):
    """``/status``: the object as stored, with the new ``status`` (and managedFields)."""

    def __init__(self, definition: Definition, behaviour: Behaviour) -> None:
        super().__init__(definition, behaviour)
        self.reset_fields = ("spec", "metadata")

    def prepare_for_update(self, ctx: RequestContext, obj: CustomResource, old: CustomResource) -> None:
        status = obj.content.get("status")
        managed = obj.metadata.managed_fields
        has_status = "status" in obj.content
        obj.content = {k: v for k, v in old.content.items() if k != "status"}
        if has_status:
            obj.content["status"] = status
        obj.metadata = dataclasses.replace(old.metadata, managed_fields=managed)

    def validate_update(self, ctx: RequestContext, obj: CustomResource, old: CustomResource) -> list[FieldError]:
        version = self.definition.version(ctx)
        errs = (self.definition.validators[version].validate(obj.content, old.content)
                + scale_errors(obj.content, self.behaviour.scale, spec=False))
        return errs + self.rule_errors(ctx, version, obj, old, errs)


# -- the scale subresource's fields ---------------------------------------------------------------
def scale_errors(content: Mapping[str, Any], scale: ScalePaths | None, *, spec: bool) -> list[FieldError]:
    """``ValidateScaleSpec`` (when ``spec``) and ``ValidateScaleStatus``: the counts are
    non-negative int32s, the selector a string, where they are set."""
    if scale is None:
        return []
    found: list[FieldError] = []
    for path in (scale.spec_replicas, scale.status_replicas) if spec else (scale.status_replicas,):
        try:
            replicas = nested(content, path, int)
        except TypeError as err:
            found.append(invalid(path, 0, str(err)))
            continue
        if replicas is not None and replicas < 0:
            found.append(invalid(path, replicas, "should be a non-negative integer"))
        elif replicas is not None and replicas > MAX_INT32:
            found.append(invalid(path, replicas, f"should be less than or equal to {MAX_INT32}"))
    if scale.label_selector:
        try:
            nested(content, scale.label_selector, str)
        except TypeError as err:
            found.append(invalid(scale.label_selector, "", str(err)))
    return found


def nested(content: Mapping[str, Any], path: str, kind: type) -> Any:
    """The value at ``path`` (``.spec.replicas``, read in an object without apiVersion, kind
    and metadata), None when absent; TypeError worded as unstructured's ``NestedInt64`` /
    ``NestedString`` when it, or a map on the way, has another type."""
    parts = path.lstrip(".").split(".")
    value: Any = content
    for index, part in enumerate(parts):
        if not isinstance(value, dict):
            shown = "." + ".".join(parts[:index])
            raise TypeError(f"{shown} accessor error: {go_value(value)} is of the type {go_type(value)}, "
                            "expected map[string]interface{}")
        if part not in value:
            return None
        value = value[part]
    if kind is int and (isinstance(value, bool) or not isinstance(value, int)) or kind is str and not isinstance(value, str):
        expected = "int64" if kind is int else "string"
        raise TypeError(f".{'.'.join(parts)} accessor error: {go_value(value)} is of the type {go_type(value)}, expected {expected}")
    return value


def go_type(value: Any) -> str:
    """Go's ``%T`` of a JSON value as unstructured holds it."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    return {int: "int64", float: "float64", str: "string", dict: "map[string]interface {}",
            list: "[]interface {}"}.get(type(value), type(value).__name__)


def go_value(value: Any) -> str:
    """Go's ``%v`` of a JSON value as unstructured holds it."""
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_value(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(map(go_value, value)) + "]"
    return str(value)
