"""Wire schemas of apiextensions.k8s.io/v1: CustomResourceDefinition.

``openAPIV3Schema`` is taken as the JSON it is (:class:`JSONSchemaPropsField`): what it may
hold is checked by :mod:`kplane.plugins.apiextensions.validation`, with the paths and messages
kube-apiserver gives, as one would for any other field of the spec.
"""

from __future__ import annotations

from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields


class JSONSchemaPropsField(fields.Raw):
    """A JSONSchemaProps object, kept in its wire form."""

    default_error_messages = {"invalid": "must be a JSON object"}

    def _deserialize(self, value: Any, attr: str | None, data: Any, **kwargs: Any) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.make_error("invalid")
        return value


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
