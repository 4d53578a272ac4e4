"""Wire schemas of the shared meta types (``meta/v1``), used inside every kind's schema."""

from __future__ import annotations

from kplane.core.runtime import fields
from kplane.core.runtime.schema import Schema


class OwnerReferenceSchema(Schema):
    """Points at an object that owns this one. Once every owner is gone, the garbage collector deletes the dependent
    object.
    """

    api_version = fields.Str(metadata={"omitempty": False, "description": "API version of the owner."})
    kind = fields.Str(metadata={"omitempty": False, "description": "Kind of the owner."})
    name = fields.Str(metadata={"omitempty": False, "description": "Name of the owner."})
    uid = fields.Str(metadata={"omitempty": False, "description": "UID of the owner: a new object of the same name is a different owner."})
    controller = fields.Bool(metadata={"description": "True for the one owner that manages this object."})
    block_owner_deletion = fields.Bool(metadata={"description": (
        "When the owner is deleted in the foreground, it is not removed until this object is gone."
    )})


class ManagedFieldsEntrySchema(Schema):
    """The fields one manager set, and through which operation."""

    manager = fields.Str(metadata={"description": (
        "Name of the actor, from the fieldManager parameter of its requests."
    )})
    operation = fields.Str(metadata={"description": "Apply for server-side apply, Update for any other write."})
    api_version = fields.Str(metadata={"description": (
        "API version the object was written in when these fields were set."
    )})
    time = fields.Time(metadata={"description": "When the manager last changed one of these fields."})
    fields_type = fields.Str(metadata={"description": "Format of fieldsV1; always FieldsV1."})
    fields_v1 = fields.Dict(data_key="fieldsV1", metadata={"description": (
        "The fields this manager owns, as a tree of keys."
    )})
    subresource = fields.Str(metadata={"description": (
        "The subresource written through, such as status; empty for the object itself."
    )})


class ObjectMetaSchema(Schema):
    """Metadata every stored object carries: its identity, its labels and annotations, and what the server keeps
    track of.
    """

    name = fields.Str(metadata={"description": (
        "Unique among objects of the kind in the namespace (or the cluster, for cluster-scoped kinds). "
        "Required on create unless generateName is set; cannot be changed."
    )})
    generate_name = fields.Str(metadata={"description": (
        "When name is empty, a prefix from which the server makes a unique name by appending random "
        "characters."
    )})
    namespace = fields.Str(metadata={"description": (
        "The namespace the object lives in; empty for cluster-scoped kinds. Cannot be changed."
    )})
    self_link = fields.Str(metadata={"description": "Deprecated; not set."})
    uid = fields.Str(metadata={"description": (
        "Unique for all time, set by the server on create. An object deleted and created again under the same "
        "name gets a new UID."
    )})
    resource_version = fields.Str(metadata={"description": (
        "Opaque version of the object that changes on every write. Send it back on update to fail with a "
        "conflict if someone else wrote in between; start a watch from it."
    )})
    generation = fields.Int(metadata={"description": (
        "Incremented by the server whenever the desired state (usually spec) changes."
    )})
    creation_timestamp = fields.Time(metadata={"omitempty": False, "description": (
        "When the server created the object (RFC 3339, UTC). Read-only."
    )})
    deletion_timestamp = fields.Time(metadata={"description": (
        "When deletion was requested; the object goes once its finalizers are all removed. Set by the server "
        "only."
    )})
    deletion_grace_period_seconds = fields.Int(metadata={"description": (
        "Seconds the object was given to shut down when deletion was requested."
    )})
    labels = fields.StrMap(metadata={"description": (
        "Key/value pairs for organizing objects and selecting them with label selectors, as Deployments and "
        "Services do."
    )})
    annotations = fields.StrMap(metadata={"description": (
        "Key/value pairs for tools and people to attach information to the object; never used to select "
        "objects."
    )})
    owner_references = fields.List(fields.Nested(OwnerReferenceSchema), metadata=fields.merge_by("uid", description=(
        "Objects this one depends on. The garbage collector deletes it once they are all gone; at most one of "
        "them is its controller."
    )))
    finalizers = fields.List(fields.Str(), metadata={"patch_strategy": "merge", "list_type": "set", "description": (
        "Keys that must all be removed before a deleted object goes away; each stands for a cleanup some "
        "controller still has to do."
    )})
    managed_fields = fields.List(fields.Nested(ManagedFieldsEntrySchema), metadata={"description": (
        "Which manager set which fields, kept by the server for server-side apply. kubectl hides it unless "
        "--show-managed-fields is given."
    )})


class LabelSelectorRequirementSchema(Schema):
    """One condition on a label."""

    key = fields.Str(metadata={"omitempty": False, "description": "The label key."})
    operator = fields.Str(metadata={"omitempty": False, "description": "In, NotIn, Exists or DoesNotExist."})
    values = fields.List(fields.Str(), metadata={"description": (
        "The values for In and NotIn (at least one); must be empty for Exists and DoesNotExist."
    )})


class LabelSelectorSchema(Schema):
    """Selects objects by their labels. Every matchLabels entry and every matchExpressions condition must hold; an
    empty selector matches every object, a missing one none.
    """

    match_labels = fields.StrMap(metadata={"description": "Labels that must be present with exactly these values."})
    match_expressions = fields.List(fields.Nested(LabelSelectorRequirementSchema), metadata={"description": (
        "Conditions on labels, all of which must hold."
    )})


class ConditionSchema(Schema):
    """One aspect of an object's state at a point in time, in the standard form."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect, in CamelCase, such as Ready."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    observed_generation = fields.Int(metadata={"description": (
        "The metadata.generation the condition was computed from."
    )})
    last_transition_time = fields.Time(metadata={"omitempty": False, "description": "When status last changed."})
    reason = fields.Str(metadata={"omitempty": False, "description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"omitempty": False, "description": "Human-readable details of the last transition."})
