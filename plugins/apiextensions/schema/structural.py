"""Structural schemas: what a CRD version's ``openAPIV3Schema`` must be for the server to prune,
default and validate with it, with kube-apiserver's field paths and messages.

Three layers of apiextensions-apiserver, on the JSON form of the schema (as
``JSONSchemaPropsField`` decoded it, so every key is known and of its type, and nesting is bounded):

* :func:`_openapi` - ``ValidateCustomResourceDefinitionOpenAPISchema``: the keys Kubernetes does
  not support (``$ref``, ``definitions``, ``uniqueItems: true``...), types, ``properties`` with
  ``additionalProperties``, defaults where none may be, the ``x-kubernetes-*`` list and map rules;
* :func:`_invariants` and :func:`_completeness` - ``ValidateStructural``: every node has a type
  (or is int-or-string or preserves unknown fields), arrays have items, what ``allOf``/``anyOf``/
  ``oneOf``/``not`` say is also said outside them, ``metadata`` at the root is restricted to
  ``name`` and ``generateName``; these errors are sorted, as Kubernetes sorts them;
* :func:`_defaults` - ``ValidateDefaults``: defaults hold no pruned fields and validate against
  their schema.
"""

from __future__ import annotations

import copy
import re
from dataclasses import dataclass, replace
from typing import Any

from kplane.api import FieldError, forbidden, invalid, not_supported, required
from kplane.api import cel
from kplane.plugins.apiextensions.schema.pruning import prune
from kplane.plugins.apiextensions.schema.validation import SchemaValidator

OPENAPI_TYPES = ["array", "boolean", "integer", "number", "object", "string"]
_META_FIELDS = ("metadata", "kind", "apiVersion")
# JSONSchemaProps' Go fields in their order, with their JSON keys: the root of a schema with the
# status subresource may set only some (``allowedFieldsAtRootSchema``).
_GO_FIELDS = {
    "id": "ID", "$schema": "Schema", "$ref": "Ref", "description": "Description", "type": "Type", "format": "Format",
    "title": "Title", "default": "Default", "maximum": "Maximum", "exclusiveMaximum": "ExclusiveMaximum",
    "minimum": "Minimum", "exclusiveMinimum": "ExclusiveMinimum", "maxLength": "MaxLength", "minLength": "MinLength",
    "pattern": "Pattern", "maxItems": "MaxItems", "minItems": "MinItems", "uniqueItems": "UniqueItems",
    "multipleOf": "MultipleOf", "enum": "Enum", "maxProperties": "MaxProperties", "minProperties": "MinProperties",
    "required": "Required", "items": "Items", "allOf": "AllOf", "oneOf": "OneOf", "anyOf": "AnyOf", "not": "Not",
    "properties": "Properties", "additionalProperties": "AdditionalProperties", "patternProperties": "PatternProperties",
    "dependencies": "Dependencies", "additionalItems": "AdditionalItems", "definitions": "Definitions",
    "externalDocs": "ExternalDocs", "example": "Example", "nullable": "Nullable",
    "x-kubernetes-preserve-unknown-fields": "XPreserveUnknownFields", "x-kubernetes-embedded-resource": "XEmbeddedResource",
    "x-kubernetes-int-or-string": "XIntOrString", "x-kubernetes-list-map-keys": "XListMapKeys",
    "x-kubernetes-list-type": "XListType", "x-kubernetes-map-type": "XMapType", "x-kubernetes-validations": "XValidations",
}
_ALLOWED_AT_ROOT = ["Description", "Type", "Format", "Title", "Maximum", "ExclusiveMaximum", "Minimum", "ExclusiveMinimum",
                    "MaxLength", "MinLength", "Pattern", "MaxItems", "MinItems", "UniqueItems", "MultipleOf", "Required",
                    "Items", "Properties", "ExternalDocs", "Example", "XPreserveUnknownFields", "XValidations"]
_UNSUPPORTED = (("id", "id"), ("$schema", "schema"), ("$ref", "$ref"), ("patternProperties", "patternProperties"),
                ("dependencies", "dependencies"), ("additionalItems", "additionalItems"), ("definitions", "definitions"))
_ROOT, _ITEM, _FIELD = "root", "item", "field"
_EMPTY_TYPE = {_ROOT: "must not be empty at the root", _ITEM: "must not be empty for specified array items",
               _FIELD: "must not be empty for specified object fields"}
_INT_OR_STRING = [{"type": "integer"}, {"type": "string"}]
Schema = dict[str, Any]


@dataclass(frozen=True, slots=True)
class Options:
    """What is required of a schema: all of it on create; on an update, only what the stored CRD
    already met (``validationOptions``: an upgrade must not make stored CRDs unchangeable)."""

    allow_defaults: bool = True
    require_valid_property_type: bool = True
    require_pruned_defaults: bool = True
    require_atomic_set_type: bool = True
    require_map_list_keys: bool = True


@dataclass(frozen=True, slots=True)
class _Context:
    """Where a schema node is (``specStandardValidatorV3``): inside TypeMeta/ObjectMeta, and
    whether (and why not) it may have a default."""

    allow_defaults: bool
    why_no_defaults: str = ""
    inside_meta: bool = False


def validate_schema(schema: Schema, path: str, *, status_enabled: bool, options: Options = Options()) -> list[FieldError]:
    """Why ``schema``, the ``openAPIV3Schema`` at ``path``, is no valid structural schema
    (``validateCustomResourceDefinitionValidation``)."""
    errs: list[FieldError] = []
    if status_enabled:
        errs += _status_root(schema, path)
    if schema.get("nullable"):
        errs.append(forbidden(f"{path}.nullable", "nullable cannot be true at the root"))
    init_error = unsupported(schema)
    if init_error is None:
        structural = sorted(_invariants(schema, _ROOT, path) + _completeness(schema, path), key=str)
        errs += structural or _defaults(schema, path, options.require_pruned_defaults)
    errs += _openapi(schema, path, _Context(options.allow_defaults), True, options)
    if not errs and init_error is not None:
        errs.append(invalid(path, "", init_error))
    return errs


def is_structural(schema: Schema | None) -> bool:
    """Whether a stored schema is structural (``schemaIsNonStructural`` negated)."""
    return schema is None or (unsupported(schema) is None and not _invariants(schema, _ROOT, "") and not _completeness(schema, ""))


def walk(schema: Schema | None) -> list[Schema]:
    """Every schema node in ``schema``, itself first (``SchemaHas``' traversal)."""
    found: list[Schema] = []
    stack = [schema] if isinstance(schema, dict) else []
    while stack:
        node = stack.pop()
        found.append(node)
        items = node.get("items")
        stack += [x for x in (items if isinstance(items, list) else [items]) if isinstance(x, dict)]
        for key in ("allOf", "anyOf", "oneOf"):
            stack += [x for x in node.get(key) or () if isinstance(x, dict)]
        for key in ("not", "additionalProperties", "additionalItems"):
            if isinstance(node.get(key), dict):
                stack.append(node[key])
        for key in ("properties", "patternProperties", "definitions", "dependencies"):
            stack += [x for x in (node.get(key) or {}).values() if isinstance(x, dict)]
    return found


def has_defaults(schema: Schema | None) -> bool:
    """Whether ``schema`` declares a default anywhere (else defaulting never changes anything)."""
    return any("default" in node for node in walk(schema))


def has_invalid_types(schema: Schema | None) -> bool:
    return any(node.get("type") and node["type"] not in OPENAPI_TYPES for node in walk(schema))


def has_non_atomic_set(schema: Schema | None) -> bool:
    return any(_set_item_error(node, "") for node in walk(schema))


def has_invalid_map_list_keys(schema: Schema | None) -> bool:
    return any(_map_list_keys(node, "") for node in walk(schema))


def has_unpruned_defaults(schema: Schema | None) -> bool:
    """Whether a stored schema has a default with fields pruning drops (``schemaHasUnprunedDefaults``)."""
    if schema is None or not has_defaults(schema) or not is_structural(schema):
        return False
    return any(error.detail == "must not have unknown fields" for error in _defaults(schema, "", True))


def field_at(schema: Schema | None, json_path: str) -> tuple[str, Schema | None]:
    """The field a selectable field's JSON path (``.spec.color``, no array notation) names and its
    schema (``cel.ValidFieldPath``); raises ValueError with Kubernetes' reason when it names none."""
    names: list[str] = []
    node = schema
    tokens = re.findall(r"'(?:[^'\\]|\\.)*'|[.\[\]]|[^.\[\]']+", json_path)
    i = 0
    while i < len(tokens):
        token = tokens[i]
        if token == "[":
            raise ValueError("array notation is not allowed")
        if token != ".":
            raise ValueError(f"expected [ or . but got: {token}")
        i += 1
        if i >= len(tokens):
            raise ValueError("unexpected end of JSON path")
        name = tokens[i]
        if node is None:
            raise ValueError("does not refer to a valid field")
        if node.get("properties"):
            if name not in node["properties"]:
                raise ValueError("does not refer to a valid field")
            names.append(f".{name}" if names else name)
            node = node["properties"][name]
        elif "additionalProperties" in node:
            names.append(f"[{name}]")
            additional = node["additionalProperties"]
            node = additional if isinstance(additional, dict) else None
        else:
            raise ValueError("does not refer to a valid field")
        i += 1
    return "".join(names), node


# -- ValidateCustomResourceDefinitionOpenAPISchema ------------------------------------------------

def _status_root(schema: Schema, path: str) -> list[FieldError]:
    """With the status subresource only some fields may be at the root (status is validated by
    ``properties.status`` alone), and the type must be object."""
    for key, name in _GO_FIELDS.items():
        value = schema.get(key)
        if value is None or value is False or value == "":
            continue
        if name == "Type":
            if value != "object":
                return [invalid(f"{path}.type", value, 'only "object" is allowed as the type at the root of the schema if the status subresource is enabled')]
            continue
        if name not in _ALLOWED_AT_ROOT:
            return [invalid(path, schema, f"only [{' '.join(_ALLOWED_AT_ROOT)}] fields are allowed at the root of the schema if the status subresource is enabled")]
    return []


def _openapi(schema: Schema, path: str, ctx: _Context, root: bool, options: Options) -> list[FieldError]:
    errs = _standard(schema, path, ctx, options)
    if schema.get("uniqueItems"):
        errs.append(forbidden(f"{path}.uniqueItems", "uniqueItems cannot be set to true since the runtime complexity becomes quadratic"))
    properties = schema.get("properties") or {}
    if "additionalProperties" in schema:
        additional = schema["additionalProperties"]
        if properties and (additional is False or isinstance(additional, dict)):
            errs.append(forbidden(f"{path}.additionalProperties", "additionalProperties and properties are mutual exclusive"))
        if isinstance(additional, dict):
            sub = replace(ctx, allow_defaults=False, why_no_defaults="inside additionalProperties applying to object metadata") if ctx.inside_meta else ctx
            errs += _openapi(additional, f"{path}.additionalProperties", sub, False, options)
    for name, prop in properties.items():
        sub = ctx
        if (root or schema.get("x-kubernetes-embedded-resource")) and name in _META_FIELDS:
            sub = replace(sub, inside_meta=True)
            if root:
                sub = replace(sub, allow_defaults=False, why_no_defaults=f"in top-level {name}")
        errs += _openapi(prop, f"{path}.properties[{name}]", sub, False, options)
    if isinstance(schema.get("not"), dict):
        errs += _openapi(schema["not"], f"{path}.not", ctx, False, options)
    for key in ("allOf", "oneOf", "anyOf"):
        for i, sub_schema in enumerate(schema.get(key) or ()):
            errs += _openapi(sub_schema, f"{path}.{key}[{i}]", ctx, False, options)
    for name, sub_schema in (schema.get("definitions") or {}).items():
        errs += _openapi(sub_schema, f"{path}.definitions[{name}]", ctx, False, options)
    items = schema.get("items")
    if isinstance(items, dict):
        errs += _openapi(items, f"{path}.items", ctx, False, options)
    elif isinstance(items, list):
        for i, sub_schema in enumerate(items):
            errs += _openapi(sub_schema, f"{path}.items[{i}]", ctx, False, options)
    for name, dependency in (schema.get("dependencies") or {}).items():
        if isinstance(dependency, dict):
            errs += _openapi(dependency, f"{path}.dependencies[{name}]", ctx, False, options)
    if schema.get("x-kubernetes-preserve-unknown-fields") is False:
        errs.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", False, "must be true or undefined"))
    errs += _list_and_map_types(schema, path, options)
    return errs


def _standard(schema: Schema, path: str, ctx: _Context, options: Options) -> list[FieldError]:
    """``specStandardValidatorV3.validate``: what OpenAPI v3 allows but Kubernetes does not."""
    errs: list[FieldError] = []
    kind = schema.get("type", "")
    if options.require_valid_property_type and kind and kind not in OPENAPI_TYPES:
        errs.append(not_supported(f"{path}.type", kind, OPENAPI_TYPES))
    if "default" in schema and not ctx.allow_defaults:
        detail = "must not be set" + (f" {ctx.why_no_defaults}" if ctx.why_no_defaults else "")
        errs.append(forbidden(f"{path}.default", detail))
    if schema.get("id"):
        errs.append(forbidden(f"{path}.id", "id is not supported"))
    for key in ("additionalItems", "patternProperties", "definitions", "dependencies", "$ref"):
        value = schema.get(key)
        if value is not None and (value != {} or key in ("additionalItems", "dependencies", "$ref")):
            errs.append(forbidden(f"{path}.{key}", f"{key} is not supported"))
    if kind == "null":
        errs.append(forbidden(f"{path}.type", "type cannot be set to null, use nullable as an alternative"))
    if isinstance(schema.get("items"), list) and schema["items"]:
        errs.append(forbidden(f"{path}.items", "items must be a schema object and not an array"))
    if ctx.inside_meta and schema.get("x-kubernetes-embedded-resource"):
        errs.append(forbidden(f"{path}.x-kubernetes-embedded-resource", "must not be used inside of resource meta"))
    return errs


def _type_must_be(schema: Schema, path: str, kind: str, because: str) -> list[FieldError]:
    if schema.get("type", "") == kind:
        return []
    detail = f"must be {kind} if {because} is specified"
    return [required(f"{path}.type", detail) if not schema.get("type") else invalid(f"{path}.type", schema["type"], detail)]


def _set_item_error(schema: Schema, path: str) -> list[FieldError]:
    """Items of a ``set`` list must be atomic."""
    items = schema.get("items")
    if schema.get("x-kubernetes-list-type") != "set" or not isinstance(items, dict):
        return []
    message = "must be atomic as item of a list with x-kubernetes-list-type=set"
    if items.get("type") == "array" and items.get("x-kubernetes-list-type", "atomic") != "atomic":
        return [invalid(f"{path}.items.x-kubernetes-list-type", items["x-kubernetes-list-type"], message)]
    if items.get("type") == "object" and items.get("x-kubernetes-map-type") != "atomic":
        return [invalid(f"{path}.items.x-kubernetes-map-type", items.get("x-kubernetes-list-type"), message)]
    return []


def _list_and_map_types(schema: Schema, path: str, options: Options) -> list[FieldError]:
    errs: list[FieldError] = []
    map_type, list_type = schema.get("x-kubernetes-map-type"), schema.get("x-kubernetes-list-type")
    keys = schema.get("x-kubernetes-list-map-keys") or []
    items = schema.get("items")
    if map_type is not None:
        errs += _type_must_be(schema, path, "object", "x-kubernetes-map-type")
        if map_type not in ("atomic", "granular"):
            errs.append(not_supported(f"{path}.x-kubernetes-map-type", map_type, ["atomic", "granular"]))
    if list_type is not None and schema.get("type", "") != "array":
        errs += _type_must_be(schema, path, "array", "x-kubernetes-list-type")
    elif options.require_atomic_set_type:
        errs += _set_item_error(schema, path)
    if list_type is not None and list_type not in ("atomic", "set", "map"):
        errs.append(not_supported(f"{path}.x-kubernetes-list-type", list_type, ["atomic", "set", "map"]))
    if keys:
        detail = "must be map if x-kubernetes-list-map-keys is non-empty"
        if list_type is None:
            errs.append(required(f"{path}.x-kubernetes-list-type", detail))
        elif list_type != "map":
            errs.append(invalid(f"{path}.x-kubernetes-list-type", list_type, detail))
    if list_type == "map":
        if not keys:
            errs.append(required(f"{path}.x-kubernetes-list-map-keys", "must not be empty if x-kubernetes-list-type is map"))
        if items is None:
            errs.append(required(f"{path}.items", "must have a schema if x-kubernetes-list-type is map"))
        elif isinstance(items, list):
            errs.append(invalid(f"{path}.items", items, "must only have a single schema if x-kubernetes-list-type is map"))
        elif items.get("type", "") != "object":
            errs.append(invalid(f"{path}.items.type", items.get("type", ""), "must be object if parent array's x-kubernetes-list-type is map"))
        else:
            seen: set[str] = set()
            for key in keys:
                prop = (items.get("properties") or {}).get(key)
                if prop is None:
                    errs.append(invalid(f"{path}.x-kubernetes-list-map-keys", keys, "entries must all be names of item properties"))
                elif prop.get("type") in ("array", "object"):
                    errs.append(invalid(f"{path}.items.properties[{key}].type", items.get("type", ""),
                                        "must be a scalar type if parent array's x-kubernetes-list-type is map"))
                if key in seen:
                    errs.append(invalid(f"{path}.x-kubernetes-list-map-keys", keys, "must not contain duplicate entries"))
                seen.add(key)
    if options.require_map_list_keys:
        errs += _map_list_keys(schema, path)
    return errs


def _map_list_keys(schema: Schema, path: str) -> list[FieldError]:
    """Items of ``set`` and ``map`` lists are not nullable; map keys are required or defaulted,
    and not nullable (``validateMapListKeysMapSet``)."""
    items, list_type = schema.get("items"), schema.get("x-kubernetes-list-type")
    if not isinstance(items, dict) or list_type not in ("set", "map"):
        return []
    errs = []
    if items.get("nullable"):
        errs.append(forbidden(f"{path}.items.nullable", f"cannot be nullable when x-kubernetes-list-type is {list_type}"))
    if list_type == "map":
        required_keys = set(items.get("required") or ())
        for key in schema.get("x-kubernetes-list-map-keys") or ():
            prop = (items.get("properties") or {}).get(key)
            if prop is None:
                continue
            if key not in required_keys and "default" not in prop:
                errs.append(required(f"{path}.items.properties[{key}].default",
                                     "this property is in x-kubernetes-list-map-keys, so it must have a default or be a required property"))
            if prop.get("nullable"):
                errs.append(forbidden(f"{path}.items.properties[{key}].nullable",
                                      "this property is in x-kubernetes-list-map-keys, so it cannot be nullable"))
    return errs


# -- NewStructural and ValidateStructural ---------------------------------------------------------

def unsupported(schema: Schema) -> str | None:
    """Why ``NewStructural`` cannot convert ``schema`` (fields the OpenAPI checks refuse anyway),
    or None."""
    for node in walk(schema):
        for key, name in _UNSUPPORTED:
            value = node.get(key)
            if value not in (None, "", {}) or (key == "additionalItems" and key in node):
                return f"OpenAPIV3Schema '{name}' is not supported"
        if isinstance(node.get("items"), list) and node["items"]:
            return "OpenAPIV3Schema 'items' must be a schema, but is an array"
        if node.get("x-kubernetes-preserve-unknown-fields") is False:
            return "internal error: 'x-kubernetes-preserve-unknown-fields' must be true or undefined"
    return None


def _invariants(s: Schema, level: str, path: str) -> list[FieldError]:
    """``validateStructuralInvariants`` of one node and what it holds."""
    errs: list[FieldError] = []
    kind = s.get("type", "")
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    preserve = bool(s.get("x-kubernetes-preserve-unknown-fields"))
    int_or_string = bool(s.get("x-kubernetes-int-or-string"))
    properties = s.get("properties") or {}
    if kind == "array" and not isinstance(s.get("items"), dict):
        errs.append(required(f"{path}.items", "must be specified"))
    if isinstance(s.get("items"), dict):
        errs += _invariants(s["items"], _ITEM, f"{path}.items")
    for name, prop in properties.items():
        errs += _invariants(prop, _FIELD, f"{path}.properties[{name}]")
    if "additionalProperties" in s:
        if level == _ROOT:
            errs.append(forbidden(f"{path}.additionalProperties", "must not be used at the root"))
        if isinstance(s["additionalProperties"], dict):
            errs += _invariants(s["additionalProperties"], _FIELD, f"{path}.additionalProperties")
    if int_or_string and preserve:
        errs.append(invalid(f"{path}.x-kubernetes-preserve-unknown-fields", True, "must be false if x-kubernetes-int-or-string is true"))
    if int_or_string and embedded:
        errs.append(invalid(f"{path}.x-kubernetes-embedded-resource", True, "must be false if x-kubernetes-int-or-string is true"))
    errs += _value_validation(s, _is_int_or_string(s.get("anyOf")), _is_int_or_string((s.get("allOf") or [{}])[0].get("anyOf")), path)
    if embedded and kind != "object":
        detail = "must be object if x-kubernetes-embedded-resource is true"
        errs.append(required(f"{path}.type", detail) if not kind else invalid(f"{path}.type", kind, detail))
    elif not kind and not int_or_string and not preserve:
        errs.append(required(f"{path}.type", _EMPTY_TYPE[level]))
    if embedded and "additionalProperties" in s:
        errs.append(forbidden(f"{path}.additionalProperties", "must not be used if x-kubernetes-embedded-resource is set"))
    if level == _ROOT and kind and kind != "object":
        errs.append(invalid(f"{path}.type", kind, "must be object at the root"))
    check_metadata = level == _ROOT or embedded
    for name in ("kind", "apiVersion"):
        if name in properties and check_metadata and properties[name].get("type", "") != "string":
            errs.append(invalid(f"{path}.properties[{name}].type", properties[name].get("type", ""), "must be string"))
    if "metadata" in properties:
        errs += _metadata(properties["metadata"], check_metadata, level, f"{path}.properties[metadata]")
    if embedded and not preserve and not properties:
        errs.append(required(f"{path}.properties", "must not be empty if x-kubernetes-embedded-resource is true without x-kubernetes-preserve-unknown-fields"))
    return errs


def _metadata(s: Schema, check: bool, level: str, path: str) -> list[FieldError]:
    errs = []
    if check and s.get("type", "") != "object":
        errs.append(invalid(f"{path}.type", s.get("type", ""), "must be object"))
    if level == _ROOT:
        rest = {k: v for k, v in _nonzero(s).items() if k not in ("type", "default")}
        names = set(rest.get("properties") or {})
        if names and names <= {"name", "generateName"}:
            del rest["properties"]
        if rest:
            errs.append(forbidden(path, "must not specify anything other than name and generateName, but metadata is implicitly specified"))
    return errs


def _nonzero(s: Schema) -> Schema:
    """``s`` without the keys whose values are Go's zero values (unset, as Go compares them)."""
    return {k: v for k, v in s.items() if v is not False and v != "" and not (k == "properties" and not v)}


def _is_int_or_string(any_of: Any) -> bool:
    return isinstance(any_of, list) and [_nonzero(x) for x in any_of] == _INT_OR_STRING


def _value_validation(v: Schema, skip_any_of: bool, skip_first_all_of_any_of: bool, path: str) -> list[FieldError]:
    """``validateValueValidation``: the junctors' schemas may only validate values, and a
    ``pattern`` must be a regular expression."""
    errs: list[FieldError] = []
    if not skip_any_of:
        for i, nested in enumerate(v.get("anyOf") or ()):
            errs += _nested(nested, False, f"{path}.anyOf[{i}]")
    for i, nested in enumerate(v.get("allOf") or ()):
        errs += _nested(nested, skip_first_all_of_any_of and i == 0, f"{path}.allOf[{i}]")
    for i, nested in enumerate(v.get("oneOf") or ()):
        errs += _nested(nested, False, f"{path}.oneOf[{i}]")
    if isinstance(v.get("not"), dict):
        errs += _nested(v["not"], False, f"{path}.not")
    if v.get("pattern"):
        problem = cel.regex.compile_error(v["pattern"])
        if problem:
            errs.append(invalid(f"{path}.pattern", v["pattern"], f"must be a valid regular expression, but isn't: {problem}"))
    return errs


def _nested(v: Schema, skip_any_of: bool, path: str) -> list[FieldError]:
    """``validateNestedValueValidation``: a schema under a junctor."""
    errs = _value_validation(v, skip_any_of, False, path)
    if isinstance(v.get("items"), dict):
        errs += _nested(v["items"], False, f"{path}.items")
    for name, prop in (v.get("properties") or {}).items():
        errs += _nested(prop, False, f"{path}.properties[{name}]")
    if v.get("type"):
        errs.append(forbidden(f"{path}.type", "must be empty to be structural"))
    if "additionalProperties" in v and v["additionalProperties"] is not False:
        errs.append(forbidden(f"{path}.additionalProperties", "must be undefined to be structural"))
    checks = (("default", "default" in v, "must be undefined"), ("title", v.get("title"), "must be empty"),
              ("description", v.get("description"), "must be empty"), ("nullable", v.get("nullable"), "must be false"),
              ("x-kubernetes-preserve-unknown-fields", v.get("x-kubernetes-preserve-unknown-fields"), "must be false"),
              ("x-kubernetes-embedded-resource", v.get("x-kubernetes-embedded-resource"), "must be false"),
              ("x-kubernetes-int-or-string", v.get("x-kubernetes-int-or-string"), "must be false"),
              ("x-kubernetes-list-map-keys", v.get("x-kubernetes-list-map-keys"), "must be empty"),
              ("x-kubernetes-list-type", "x-kubernetes-list-type" in v, "must be undefined"),
              ("x-kubernetes-map-type", "x-kubernetes-map-type" in v, "must be undefined"),
              ("x-kubernetes-validations", v.get("x-kubernetes-validations"), "must be empty"))
    errs += [forbidden(f"{path}.{key}", f"{why} to be structural") for key, present, why in checks if present]
    if "metadata" in (v.get("properties") or {}):
        errs.append(forbidden(f"{path}.properties[metadata]", "must not be specified in a nested context"))
    return errs


def _completeness(s: Schema, path: str) -> list[FieldError]:
    """``validateStructuralCompleteness``: what the root's junctors describe is described outside them."""
    return _junctors_complete(s, s, path, path)


def _junctors_complete(v: Schema, s: Schema | None, s_path: str, v_path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if isinstance(v.get("not"), dict):
        errs += _nested_complete(v["not"], s, s_path, f"{v_path}.not")
    for key in ("allOf", "anyOf", "oneOf"):
        for i, nested in enumerate(v.get(key) or ()):
            errs += _nested_complete(nested, s, s_path, f"{v_path}.{key}[{i}]")
    return errs


def _nested_complete(v: Schema, s: Schema | None, s_path: str, v_path: str) -> list[FieldError]:
    if s is None:
        return [required(s_path, f"because it is defined in {v_path}")]
    errs = _junctors_complete(v, s, s_path, v_path)
    if isinstance(v.get("items"), dict):
        items = s.get("items")
        errs += _nested_complete(v["items"], items if isinstance(items, dict) else None, f"{s_path}.items", f"{v_path}.items")
    properties = s.get("properties") or {}
    for name, prop in (v.get("properties") or {}).items():
        where = f"{s_path}.properties[{name}]"
        if name not in properties:
            errs.append(required(where, f"because it is defined in {v_path}.properties[{name}]"))
        else:
            errs += _nested_complete(prop, properties[name], where, f"{v_path}.properties[{name}]")
    return errs


# -- ValidateDefaults ------------------------------------------------------------------------------

def _defaults(schema: Schema, path: str, require_pruned: bool) -> list[FieldError]:
    """Defaults must hold no field pruning drops and must be valid values of their schema; the
    root is a resource root."""
    return _default_node({**schema, "x-kubernetes-embedded-resource": True}, path, require_pruned, False)


def _default_node(s: Schema, path: str, require_pruned: bool, inside_meta: bool) -> list[FieldError]:
    errs: list[FieldError] = []
    embedded = bool(s.get("x-kubernetes-embedded-resource"))
    if embedded:
        inside_meta = False
    if "default" in s:
        value = s["default"]
        if not inside_meta and require_pruned and _pruned(value, s, embedded) != value:
            errs.append(invalid(f"{path}.default", value, "must not have unknown fields"))
        else:
            node = {k: v for k, v in s.items() if k != "default"}
            holder = {"type": "object", "properties": {"default": node}}
            for error in SchemaValidator(holder).validate({"default": copy.deepcopy(value)}):
                errs.append(replace(error, field=f"{path}.{error.field}" if error.field else path))
    if isinstance(s.get("items"), dict):
        errs += _default_node(s["items"], f"{path}.items", require_pruned, inside_meta)
    for name, prop in (s.get("properties") or {}).items():
        meta = inside_meta or (embedded and name in _META_FIELDS)
        errs += _default_node(prop, f"{path}.properties[{name}]", require_pruned, meta)
    return errs


def _pruned(value: Any, schema: Schema, resource_root: bool) -> Any:
    """A copy of ``value`` as pruning with ``schema`` leaves it."""
    copied = copy.deepcopy(value)
    if isinstance(copied, dict):
        prune(copied, schema, from_storage=True, resource=resource_root)
        return copied
    holder = {"value": copied}
    prune(holder, {"properties": {"value": schema}}, from_storage=True, resource=False)
    return holder["value"]
