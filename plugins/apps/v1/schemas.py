"""Wire schemas of apps/v1."""

from __future__ import annotations

from core.meta.schemas import LabelSelectorSchema, ObjectMetaSchema
from core.runtime import fields
from core.runtime.schema import Schema
from plugins.core.v1.schemas import PodTemplateSpecSchema


class RollingUpdateDeploymentSchema(Schema):
    max_unavailable = fields.IntOrString()
    max_surge = fields.IntOrString()


class DeploymentStrategySchema(Schema):
    type = fields.Str()
    rolling_update = fields.Nested(RollingUpdateDeploymentSchema)


class DeploymentSpecSchema(Schema):
    replicas = fields.Int()
    selector = fields.Nested(LabelSelectorSchema)
    template = fields.Nested(PodTemplateSpecSchema)
    strategy = fields.Nested(DeploymentStrategySchema, metadata={"patch_strategy": "retainKeys"})
    min_ready_seconds = fields.Int()
    revision_history_limit = fields.Int()
    paused = fields.Bool()
    progress_deadline_seconds = fields.Int()


class DeploymentConditionSchema(Schema):
    type = fields.Str()
    status = fields.Str()
    last_update_time = fields.Time()
    last_transition_time = fields.Time()
    reason = fields.Str()
    message = fields.Str()


class DeploymentStatusSchema(Schema):
    observed_generation = fields.Int()
    replicas = fields.Int()
    updated_replicas = fields.Int()
    ready_replicas = fields.Int()
    available_replicas = fields.Int()
    unavailable_replicas = fields.Int()
    terminating_replicas = fields.Int()
    conditions = fields.List(fields.Nested(DeploymentConditionSchema), metadata=fields.merge_by("type"))
    collision_count = fields.Int()


class DeploymentSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(DeploymentSpecSchema)
    status = fields.Nested(DeploymentStatusSchema)


class ReplicaSetSpecSchema(Schema):
    replicas = fields.Int()
    min_ready_seconds = fields.Int()
    selector = fields.Nested(LabelSelectorSchema)
    template = fields.Nested(PodTemplateSpecSchema)


class ReplicaSetConditionSchema(Schema):
    type = fields.Str()
    status = fields.Str()
    last_transition_time = fields.Time()
    reason = fields.Str()
    message = fields.Str()


class ReplicaSetStatusSchema(Schema):
    replicas = fields.Int()
    fully_labeled_replicas = fields.Int()
    ready_replicas = fields.Int()
    available_replicas = fields.Int()
    terminating_replicas = fields.Int()
    observed_generation = fields.Int()
    conditions = fields.List(fields.Nested(ReplicaSetConditionSchema), metadata=fields.merge_by("type"))


class ReplicaSetSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(ReplicaSetSpecSchema)
    status = fields.Nested(ReplicaSetStatusSchema)
