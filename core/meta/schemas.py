"""Wire schemas of the shared meta types (``meta/v1``), used inside every kind's schema."""

from __future__ import annotations

from core.runtime import fields
from core.runtime.schema import Schema


class OwnerReferenceSchema(Schema):
    api_version = fields.Str()
    kind = fields.Str()
    name = fields.Str()
    uid = fields.Str()
    controller = fields.Bool()
    block_owner_deletion = fields.Bool()


class ManagedFieldsEntrySchema(Schema):
    manager = fields.Str()
    operation = fields.Str()
    api_version = fields.Str()
    time = fields.Time()
    fields_type = fields.Str()
    fields_v1 = fields.Dict(data_key="fieldsV1")
    subresource = fields.Str()


class ObjectMetaSchema(Schema):
    name = fields.Str()
    generate_name = fields.Str()
    namespace = fields.Str()
    self_link = fields.Str()
    uid = fields.Str()
    resource_version = fields.Str()
    generation = fields.Int()
    creation_timestamp = fields.Time()
    deletion_timestamp = fields.Time()
    deletion_grace_period_seconds = fields.Int()
    labels = fields.StrMap()
    annotations = fields.StrMap()
    owner_references = fields.List(fields.Nested(OwnerReferenceSchema), metadata=fields.merge_by("uid"))
    finalizers = fields.List(fields.Str(), metadata={"patch_strategy": "merge", "list_type": "set"})
    managed_fields = fields.List(fields.Nested(ManagedFieldsEntrySchema))


class LabelSelectorRequirementSchema(Schema):
    key = fields.Str()
    operator = fields.Str()
    values = fields.List(fields.Str())


class LabelSelectorSchema(Schema):
    match_labels = fields.StrMap()
    match_expressions = fields.List(fields.Nested(LabelSelectorRequirementSchema))


class ConditionSchema(Schema):
    type = fields.Str()
    status = fields.Str()
    observed_generation = fields.Int()
    last_transition_time = fields.Time()
    reason = fields.Str()
    message = fields.Str()
