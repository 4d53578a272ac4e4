"""core/v1 ReplicationController and PodTemplate: wire schemas and defaulting
(``k8s.io/api/core/v1``, ``SetDefaults_ReplicationController``)."""

from __future__ import annotations

from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields
from kplane.plugins.core.v1.defaults import default_pod_spec
from kplane.plugins.core.v1.schemas import PodTemplateSpecSchema

_META = ("Standard object metadata: name, namespace, labels, annotations, and what the server records about "
         "the object.")


class ReplicationControllerSpecSchema(Schema):
    """The desired state of a ReplicationController."""

    replicas = fields.Int32(metadata={"description": "How many Pods should run. Defaults to 1."})
    min_ready_seconds = fields.Int32(metadata={"description": (
        "How long a new Pod must stay ready, without any container crashing, before it counts as available. "
        "Defaults to 0."
    )})
    selector = fields.StrMap(metadata={"map_type": "atomic", "description": (
        "The labels a Pod must have to count toward replicas. Defaults to the template's labels."
    )})
    template = fields.Nested(PodTemplateSpecSchema, metadata={"pointer": True, "description": (
        "The Pods created when there are fewer than replicas."
    )})


class ReplicationControllerConditionSchema(Schema):
    """One aspect of a ReplicationController's state at a point in time."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect, such as ReplicaFailure."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_transition_time = fields.Time(metadata={"description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class ReplicationControllerStatusSchema(Schema):
    """The observed state of a ReplicationController, written by the replication controller."""

    replicas = fields.Int32(metadata={"omitempty": False, "description": "Pods of this controller that are not terminating."})
    fully_labeled_replicas = fields.Int32(metadata={"description": (
        "Pods whose labels match all the template's labels, not only the selector."
    )})
    ready_replicas = fields.Int32(metadata={"description": "Pods whose Ready condition is True."})
    available_replicas = fields.Int32(metadata={"description": "Pods that have been ready for at least minReadySeconds."})
    observed_generation = fields.Int(metadata={"description": "The metadata.generation the controller last acted on."})
    conditions = fields.List(fields.Nested(ReplicationControllerConditionSchema), metadata=fields.merge_by("type", description=(
        "The latest observations of the controller's state, one per type."
    )))


class ReplicationControllerSchema(Schema):
    """A ReplicationController keeps a number of Pods matching its selector running. ReplicaSets, managed by
    Deployments, replace it; it is served for the manifests and clients that still use it.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(ReplicationControllerSpecSchema, metadata={"description": (
        "The desired state: how many Pods, selected how, made from which template."
    )})
    status = fields.Nested(ReplicationControllerStatusSchema, metadata={"description": (
        "The most recently observed state. Written by the controller; clients read it."
    )})


class PodTemplateSchema(Schema):
    """A PodTemplate is a named template of Pods, for tools and controllers that make Pods from one."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    template = fields.Nested(PodTemplateSpecSchema, metadata={"description": "The Pods made from this template."})


def default_replication_controller(rc: dict[str, Any]) -> None:
    """The selector and the controller's labels default to the template's labels; replicas to 1."""
    spec = rc.get("spec")
    if spec is None:
        spec = rc["spec"] = {}
    template = spec.get("template")
    labels = ((template or {}).get("metadata") or {}).get("labels")
    if labels:
        if not spec.get("selector"):
            spec["selector"] = dict(labels)
        metadata = rc.setdefault("metadata", {})
        if not metadata.get("labels"):
            metadata["labels"] = dict(labels)
    if spec.get("replicas") is None:
        spec["replicas"] = 1
    if template is not None:
        if template.get("spec") is None:
            template["spec"] = {}
        default_pod_spec(template["spec"])


def default_pod_template(template: dict[str, Any]) -> None:
    inner = template.get("template")
    if inner is None:
        inner = template["template"] = {}
    if inner.get("spec") is None:
        inner["spec"] = {}
    default_pod_spec(inner["spec"])
