"""Wire schemas of apiextensions.k8s.io/v1: CustomResourceDefinition.

``openAPIV3Schema`` is taken as the JSON it is (:class:`JSONSchemaPropsField`): what it may
hold is checked by :mod:`kplane.plugins.apiextensions.validation`, with the paths and messages
kube-apiserver gives, as one would for any other field of the spec.
"""

from __future__ import annotations

from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields


#: How deep schemas may nest and how many there may be in one ``openAPIV3Schema``. Kubernetes
#: has only its 3 MiB body limit; these bounds keep every walk over a schema (validation,
#: pruning, defaulting, OpenAPI) far from Python's recursion limit and quick, and are far above
#: real CRDs (the largest, with whole pod templates in several versions, nest about 30 deep and
#: hold some 20,000 schemas in a body near the 3 MiB limit).
MAX_SCHEMA_DEPTH = 100
MAX_SCHEMA_NODES = 100_000

_STRING, _NUMBER, _INTEGER, _BOOL, _ANY, _STRINGS = "string", "float64", "int64", "bool", "any", "[]string"
_SCHEMA, _SCHEMAS, _SCHEMA_MAP = "schema", "[]schema", "map[string]schema"
_SCHEMA_OR_BOOL, _SCHEMA_OR_ARRAY, _DEPENDENCIES = "schema-or-bool", "schema-or-array", "dependencies"
_DOCS, _RULES, _ANY_LIST = "externalDocs", "[]rule", "[]any"

#: The JSON keys of v1 ``JSONSchemaProps`` and what each holds.
PROPS: dict[str, str] = {
    "id": _STRING, "$schema": _STRING, "$ref": _STRING, "description": _STRING, "type": _STRING,
    "format": _STRING, "title": _STRING, "default": _ANY, "maximum": _NUMBER, "exclusiveMaximum": _BOOL,
    "minimum": _NUMBER, "exclusiveMinimum": _BOOL, "maxLength": _INTEGER, "minLength": _INTEGER,
    "pattern": _STRING, "maxItems": _INTEGER, "minItems": _INTEGER, "uniqueItems": _BOOL, "multipleOf": _NUMBER,
    "enum": _ANY_LIST, "maxProperties": _INTEGER, "minProperties": _INTEGER, "required": _STRINGS,
    "items": _SCHEMA_OR_ARRAY, "allOf": _SCHEMAS, "oneOf": _SCHEMAS, "anyOf": _SCHEMAS, "not": _SCHEMA,
    "properties": _SCHEMA_MAP, "additionalProperties": _SCHEMA_OR_BOOL, "patternProperties": _SCHEMA_MAP,
    "dependencies": _DEPENDENCIES, "additionalItems": _SCHEMA_OR_BOOL, "definitions": _SCHEMA_MAP,
    "externalDocs": _DOCS, "example": _ANY, "nullable": _BOOL, "x-kubernetes-preserve-unknown-fields": _BOOL,
    "x-kubernetes-embedded-resource": _BOOL, "x-kubernetes-int-or-string": _BOOL,
    "x-kubernetes-list-map-keys": _STRINGS, "x-kubernetes-list-type": _STRING, "x-kubernetes-map-type": _STRING,
    "x-kubernetes-validations": _RULES,
}
_RULE = {"rule": _STRING, "message": _STRING, "messageExpression": _STRING, "reason": _STRING,
         "fieldPath": _STRING, "optionalOldSelf": _BOOL}
_EXTERNAL_DOCS = {"description": _STRING, "url": _STRING}
_JSON_KIND = {dict: "object", list: "array", str: "string", bool: "bool", int: "number", float: "number"}


class _Decoder:
    """One ``openAPIV3Schema`` decoded as Go decodes ``JSONSchemaProps`` strictly: keys it does not
    know are dropped and reported (except below ``items``, ``additionalProperties``,
    ``additionalItems`` and ``dependencies``, whose Go types decode themselves leniently, so
    Kubernetes drops unknown keys there without a word); ``null`` is "not set"; a value of the
    wrong JSON type is an error. Nesting and size are bounded (:data:`MAX_SCHEMA_DEPTH`)."""

    def __init__(self) -> None:
        self.unknown: list[str] = []
        self.errors: dict[str, list[str]] = {}
        self.nodes = 0

    def error(self, path: str, message: str) -> None:
        self.errors.setdefault(path, []).append(message)

    def props(self, value: Any, path: str, depth: int, strict: bool) -> dict[str, Any] | None:
        if not isinstance(value, dict):
            self.error(path, f"cannot unmarshal {_JSON_KIND.get(type(value), 'value')} into Go value of type v1.JSONSchemaProps")
            return None
        self.nodes += 1
        if depth > MAX_SCHEMA_DEPTH or self.nodes > MAX_SCHEMA_NODES:
            if depth > MAX_SCHEMA_DEPTH:
                self.error(path, f"schemas may not nest more than {MAX_SCHEMA_DEPTH} levels deep")
            elif self.nodes == MAX_SCHEMA_NODES + 1:
                self.error(path, f"an openAPIV3Schema may not hold more than {MAX_SCHEMA_NODES} schemas")
            return None
        out: dict[str, Any] = {}
        for key, item in value.items():
            where = f"{path}.{key}" if path else key
            kind = PROPS.get(key)
            if kind is None:
                if strict:
                    self.unknown.append(where)
            elif item is not None:
                decoded = self.value(kind, item, where, depth, strict)
                if decoded is not None:
                    out[key] = decoded
        return out

    def value(self, kind: str, item: Any, where: str, depth: int, strict: bool) -> Any:
        if kind == _ANY:
            return item
        if kind == _SCHEMA:
            return self.props(item, where, depth + 1, strict)
        if kind == _SCHEMA_OR_BOOL:
            return item if isinstance(item, bool) else self.props(item, where, depth + 1, False)
        if kind == _SCHEMA_OR_ARRAY:
            if isinstance(item, list):
                return [self.props(x, f"{where}[{i}]", depth + 1, False) or {} for i, x in enumerate(item)]
            return self.props(item, where, depth + 1, False)
        if kind in (_SCHEMAS, _SCHEMA_MAP, _DEPENDENCIES, _RULES, _STRINGS, _ANY_LIST):
            return self.container(kind, item, where, depth, strict)
        if kind == _DOCS:
            return self.record(_EXTERNAL_DOCS, "v1.ExternalDocumentation", item, where, strict)
        if _fits(kind, item):
            return item
        self.error(where, f"cannot unmarshal {_JSON_KIND.get(type(item), 'value')} into Go value of type {kind}")
        return None

    def container(self, kind: str, item: Any, where: str, depth: int, strict: bool) -> Any:
        is_map = kind in (_SCHEMA_MAP, _DEPENDENCIES)
        if not isinstance(item, dict if is_map else list):
            go_type = {_SCHEMAS: "[]v1.JSONSchemaProps", _SCHEMA_MAP: "map[string]v1.JSONSchemaProps",
                       _DEPENDENCIES: "v1.JSONSchemaDependencies", _RULES: "v1.ValidationRules",
                       _STRINGS: "[]string", _ANY_LIST: "[]v1.JSON"}[kind]
            self.error(where, f"cannot unmarshal {_JSON_KIND.get(type(item), 'value')} into Go value of type {go_type}")
            return None
        if kind == _ANY_LIST:
            return item
        if kind == _STRINGS:
            for i, x in enumerate(item):
                if not isinstance(x, str):
                    self.error(f"{where}[{i}]", f"cannot unmarshal {_JSON_KIND.get(type(x), 'value')} into Go value of type string")
            return item
        if kind == _RULES:
            return [self.record(_RULE, "v1.ValidationRule", x, f"{where}[{i}]", strict) or {} for i, x in enumerate(item)]
        if kind == _SCHEMAS:
            return [self.props(x, f"{where}[{i}]", depth + 1, strict) or {} for i, x in enumerate(item)]
        if kind == _DEPENDENCIES:
            return {k: x if isinstance(x, list) else self.props(x, f"{where}.{k}", depth + 1, False) or {}
                    for k, x in item.items()}
        return {k: self.props(x, f"{where}.{k}", depth + 1, strict) or {} for k, x in item.items()}

    def record(self, keys: dict[str, str], go_type: str, item: Any, where: str, strict: bool) -> dict[str, Any] | None:
        if not isinstance(item, dict):
            self.error(where, f"cannot unmarshal {_JSON_KIND.get(type(item), 'value')} into Go value of type {go_type}")
            return None
        out = {}
        for key, x in item.items():
            kind = keys.get(key)
            if kind is None:
                if strict:
                    self.unknown.append(f"{where}.{key}")
            elif x is not None:
                if _fits(kind, x):
                    out[key] = x
                else:
                    self.error(f"{where}.{key}", f"cannot unmarshal {_JSON_KIND.get(type(x), 'value')} into Go value of type {kind}")
        return out


def _fits(kind: str, item: Any) -> bool:
    if kind == _STRING:
        return isinstance(item, str)
    if kind == _BOOL:
        return isinstance(item, bool)
    if kind == _INTEGER:
        return isinstance(item, int) and not isinstance(item, bool)
    return isinstance(item, (int, float)) and not isinstance(item, bool)  # _NUMBER


class JSONSchemaPropsField(fields.ReportsUnknown):
    """A JSONSchemaProps object, kept in its wire form as Go decodes it: unknown keys (``propertys``)
    are dropped and reported as unknown fields, for ``fieldValidation`` to decide about."""

    def load(self, value: Any) -> tuple[dict[str, Any], list[str]]:
        decoder = _Decoder()
        out = decoder.props(value, "", 0, True)
        if decoder.errors:
            raise self.invalid(decoder.errors)
        return out or {}, decoder.unknown


class CustomResourceDefinitionNamesSchema(Schema):
    """The names a custom resource is served under."""

    plural = fields.Str(metadata={"omitempty": False, "description": (
        "The plural name of the resource, in the URL: /apis/<group>/<version>/<plural>. Lowercase."
    )})
    singular = fields.Str(metadata={"description": "The singular name, lowercase. Defaults to the lowercased kind."})
    short_names = fields.List(fields.Str(), metadata={"description": (
        "Short names for the resource, as `kubectl get <shortname>` takes them. Lowercase."
    )})
    kind = fields.Str(metadata={"omitempty": False, "description": (
        "The serialized kind of the resource, normally CamelCase and singular."
    )})
    list_kind = fields.Str(metadata={"description": "The serialized kind of the list. Defaults to `<kind>List`."})
    categories = fields.List(fields.Str(), metadata={"description": (
        "Groupings the resource belongs to, such as `all`, for `kubectl get <category>`."
    )})


class CustomResourceValidationSchema(Schema):
    """How custom resources of a version are validated, pruned and defaulted."""

    open_api_v3_schema = JSONSchemaPropsField(data_key="openAPIV3Schema", metadata={"description": (
        "The OpenAPI v3 schema custom resources of this version are validated, pruned and defaulted with."
    ), "openapi": {"type": "object", "description": "A JSON Schema (OpenAPI v3 subset, structural).",
                   "x-kubernetes-preserve-unknown-fields": True}})


class CustomResourceSubresourceStatusSchema(Schema):
    """Enables the /status subresource: the main resource then ignores status changes and
    /status ignores everything else."""


class CustomResourceSubresourceScaleSchema(Schema):
    """Enables the /scale subresource (autoscaling/v1 Scale)."""

    spec_replicas_path = fields.Str(metadata={"omitempty": False, "description": (
        "The JSON path, such as `.spec.replicas`, of the desired replicas. Only paths under .spec."
    )})
    status_replicas_path = fields.Str(metadata={"omitempty": False, "description": (
        "The JSON path, such as `.status.replicas`, of the observed replicas. Only paths under .status."
    )})
    label_selector_path = fields.Str(metadata={"description": (
        "The JSON path, such as `.status.selector`, of the label selector in string form. Only paths "
        "under .status or .spec."
    )})


class CustomResourceSubresourcesSchema(Schema):
    """The subresources custom resources of a version serve."""

    status = fields.Nested(CustomResourceSubresourceStatusSchema, metadata={"pointer": True, "description": (
        "Enables the status subresource."
    )})
    scale = fields.Nested(CustomResourceSubresourceScaleSchema, metadata={"pointer": True, "description": (
        "Enables the scale subresource."
    )})


class CustomResourceColumnDefinitionSchema(Schema):
    """A column `kubectl get` shows for the custom resource."""

    name = fields.Str(metadata={"omitempty": False, "description": "The column's human-readable name."})
    type = fields.Str(metadata={"omitempty": False, "description": (
        "An OpenAPI type: integer, number, string, boolean or date."
    )})
    format = fields.Str(metadata={"description": "An optional OpenAPI format of the column's type."})
    description = fields.Str(metadata={"description": "A human-readable description of the column."})
    priority = fields.Int32(metadata={"description": (
        "0 for columns always shown; greater for those shown only with `-o wide`."
    )})
    json_path = fields.Str(data_key="jsonPath", metadata={"omitempty": False, "description": (
        "A simple JSON path (without array notation) evaluated against each custom resource."
    )})


class SelectableFieldSchema(Schema):
    """A field a field selector may name."""

    json_path = fields.Str(data_key="jsonPath", metadata={"omitempty": False, "description": (
        "A simple JSON path to a string, integer or boolean field, such as `.spec.color`."
    )})


class CustomResourceDefinitionVersionSchema(Schema):
    """One version of the custom resource."""

    name = fields.Str(metadata={"omitempty": False, "description": (
        "The version name, e.g. v1, v2beta1: served under /apis/<group>/<version>/."
    )})
    served = fields.Bool(metadata={"omitempty": False, "description": (
        "Whether this version is served by the REST API."
    )})
    storage = fields.Bool(metadata={"omitempty": False, "description": (
        "Whether objects are stored in this version. Exactly one version is."
    )})
    deprecated = fields.Bool(metadata={"description": "Whether requests for this version get a warning header."})
    deprecation_warning = fields.Str(metadata={"description": "Overrides the default warning for deprecated versions."})
    schema = fields.Nested(CustomResourceValidationSchema, metadata={"pointer": True, "description": (
        "The schema for validation, pruning and defaulting of this version."
    )})
    subresources = fields.Nested(CustomResourceSubresourcesSchema, metadata={"pointer": True, "description": (
        "The subresources this version serves."
    )})
    additional_printer_columns = fields.Nested(CustomResourceColumnDefinitionSchema, many=True, metadata={
        "list_type": "atomic", "description": "Columns `kubectl get` shows in addition to the name and age."})
    selectable_fields = fields.Nested(SelectableFieldSchema, many=True, metadata={
        "list_type": "atomic", "description": "Fields that may be used as field selectors (at most 8)."})


class ServiceReferenceSchema(Schema):
    """A Service a webhook is reached through."""

    namespace = fields.Str(metadata={"omitempty": False, "description": "The Service's namespace."})
    name = fields.Str(metadata={"omitempty": False, "description": "The Service's name."})
    path = fields.Str(metadata={"description": "A URL path requests are sent to."})
    port = fields.Int32(metadata={"description": "The Service's port (default 443)."})


class WebhookClientConfigSchema(Schema):
    """How to reach a webhook: `url` or `service`, and the CA to verify it with."""

    url = fields.Str(metadata={"description": "https://host[:port]/path; not with service."})
    service = fields.Nested(ServiceReferenceSchema, metadata={"pointer": True, "description": (
        "The Service the webhook runs behind; not with url."
    )})
    ca_bundle = fields.Bytes(metadata={"description": "PEM CA bundle to verify the webhook's serving certificate."})


class WebhookConversionSchema(Schema):
    """How to call a conversion webhook."""

    client_config = fields.Nested(WebhookClientConfigSchema, metadata={"pointer": True, "description": (
        "How to reach the webhook. Required when the strategy is Webhook."
    )})
    conversion_review_versions = fields.List(fields.Str(), metadata={
        "omitempty": False, "list_type": "atomic", "description": (
            "The ConversionReview versions the webhook accepts, in order of preference (v1)."
        )})


class CustomResourceConversionSchema(Schema):
    """How custom resources convert between versions."""

    strategy = fields.Str(metadata={"omitempty": False, "description": (
        "None (only apiVersion changes) or Webhook."
    )})
    webhook = fields.Nested(WebhookConversionSchema, metadata={"pointer": True, "description": (
        "The webhook to call; required when the strategy is Webhook."
    )})


class CustomResourceDefinitionSpecSchema(Schema):
    """The resource a CustomResourceDefinition defines."""

    group = fields.Str(metadata={"omitempty": False, "description": (
        "The API group of the resource: /apis/<group>/..."
    )})
    names = fields.Nested(CustomResourceDefinitionNamesSchema, metadata={"description": (
        "The names the resource is served under."
    )})
    scope = fields.Str(metadata={"omitempty": False, "description": "Cluster or Namespaced."})
    versions = fields.Nested(CustomResourceDefinitionVersionSchema, many=True, metadata={
        "omitempty": False, "list_type": "atomic", "description": (
            "The versions served. Exactly one is the storage version."
        )})
    conversion = fields.Nested(CustomResourceConversionSchema, metadata={"pointer": True, "description": (
        "How objects convert between versions."
    )})
    preserve_unknown_fields = fields.Bool(metadata={"description": (
        "Must be false in v1 (deprecated): use x-kubernetes-preserve-unknown-fields in schemas instead."
    )})


class CustomResourceDefinitionConditionSchema(Schema):
    """One aspect of a CustomResourceDefinition's state: Established, NamesAccepted, ..."""

    type = fields.Str(metadata={"omitempty": False, "description": "Established, NamesAccepted, NonStructuralSchema, Terminating, ..."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_transition_time = fields.Time(metadata={"description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class CustomResourceDefinitionStatusSchema(Schema):
    """What the server says of a CustomResourceDefinition."""

    conditions = fields.Nested(CustomResourceDefinitionConditionSchema, many=True, metadata={
        "list_type": "map", "list_map_keys": ["type"], "description": "The CRD's conditions."})
    accepted_names = fields.Nested(CustomResourceDefinitionNamesSchema, metadata={"description": (
        "The names actually served; they differ from spec.names while those conflict."
    )})
    stored_versions = fields.List(fields.Str(), metadata={"description": (
        "Every version objects were ever stored in. Remove a version from spec.versions only once it "
        "is gone from here (after migrating the stored objects)."
    )})


class CustomResourceDefinitionSchema(Schema):
    """A CustomResourceDefinition adds a resource to the API at run time: its name must be
    `<spec.names.plural>.<spec.group>`."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    spec = fields.Nested(CustomResourceDefinitionSpecSchema, metadata={"description": "The resource it defines."})
    status = fields.Nested(CustomResourceDefinitionStatusSchema, metadata={"description": "What the server says of it."})
