"""Wire schemas of apps/v1."""

from __future__ import annotations

from kplane.api import LabelSelectorSchema, ObjectMetaSchema, Schema, fields
from kplane.plugins.core.v1.schemas import PodTemplateSpecSchema
from kplane.plugins.core.v1.volumes import PersistentVolumeClaimSchema


class RollingUpdateDeploymentSchema(Schema):
    """How fast a rolling update replaces old Pods with new ones."""

    max_unavailable = fields.IntOrString(metadata={"description": (
        "How many of the desired Pods may be unavailable during the update: a number, or a percentage of "
        "replicas rounded down. Defaults to 25%. Cannot be 0 when maxSurge is 0."
    )})
    max_surge = fields.IntOrString(metadata={"description": (
        "How many Pods may exist above the desired count during the update: a number, or a percentage of "
        "replicas rounded up. Defaults to 25%. Cannot be 0 when maxUnavailable is 0."
    )})


class DeploymentStrategySchema(Schema):
    """How a Deployment replaces its existing Pods when the template changes."""

    type = fields.Str(metadata={"description": (
        "Recreate stops every old Pod before starting new ones; RollingUpdate replaces them a few at a time. "
        "Defaults to RollingUpdate."
    )})
    rolling_update = fields.Nested(RollingUpdateDeploymentSchema, metadata={"pointer": True, "description": (
        "Tuning of a RollingUpdate; allowed only when type is RollingUpdate."
    )})


class DeploymentSpecSchema(Schema):
    """The desired state of a Deployment."""

    replicas = fields.Int32(metadata={"description": (
        "How many Pods should run. Defaults to 1; 0 stops every Pod but keeps the Deployment."
    )})
    selector = fields.Nested(LabelSelectorSchema, metadata={"map_type": "atomic", "pointer": True, "omitempty": False, "description": (
        "Which Pods belong to this Deployment, by label. It must match the template's labels and cannot "
        "change after creation."
    )})
    template = fields.Nested(PodTemplateSpecSchema, metadata={"description": (
        "The Pods to run. Changing it (unlike changing replicas) starts a new rollout."
    )})
    strategy = fields.Nested(DeploymentStrategySchema, metadata={"patch_strategy": "retainKeys", "description": (
        "How old Pods are replaced by new ones during a rollout."
    )})
    min_ready_seconds = fields.Int32(metadata={"description": (
        "How long a new Pod must stay ready, without any container crashing, before it counts as available. "
        "Defaults to 0: available as soon as it is ready."
    )})
    revision_history_limit = fields.Int32(metadata={"description": (
        "How many old ReplicaSets to keep so that a rollout can be undone. Defaults to 10."
    )})
    paused = fields.Bool(metadata={"description": "While true, changes to the template do not start a rollout."})
    progress_deadline_seconds = fields.Int32(metadata={"description": (
        "Seconds a rollout may go without progress before the Progressing condition turns False with reason "
        "ProgressDeadlineExceeded. The rollout itself goes on. Defaults to 600."
    )})


class DeploymentConditionSchema(Schema):
    """One aspect of a Deployment's state at a point in time."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect: Available, Progressing or ReplicaFailure."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_update_time = fields.Time(metadata={"omitempty": False, "description": "When the controller last wrote this condition."})
    last_transition_time = fields.Time(metadata={"omitempty": False, "description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class DeploymentStatusSchema(Schema):
    """The observed state of a Deployment, written by the deployment controller."""

    observed_generation = fields.Int(metadata={"description": (
        "The metadata.generation the controller last acted on. While it is lower than the current generation, "
        "the rest of the status may be out of date."
    )})
    replicas = fields.Int32(metadata={"description": (
        "Pods of this Deployment (through its ReplicaSets) that are not terminating."
    )})
    updated_replicas = fields.Int32(metadata={"description": "Of those, the Pods made from the current template."})
    ready_replicas = fields.Int32(metadata={"description": "Pods whose Ready condition is True."})
    available_replicas = fields.Int32(metadata={"description": "Pods that have been ready for at least minReadySeconds."})
    unavailable_replicas = fields.Int32(metadata={"description": (
        "How many more Pods must become available for the Deployment to be fully available, including Pods "
        "not created yet."
    )})
    terminating_replicas = fields.Int32(metadata={"description": (
        "Pods that are shutting down (they have a deletionTimestamp) but are not gone yet."
    )})
    conditions = fields.List(fields.Nested(DeploymentConditionSchema), metadata=fields.merge_by("type", description=(
        "The latest observations of the Deployment's state, one per type."
    )))
    collision_count = fields.Int32(metadata={"description": (
        "Counts clashes between the names of new ReplicaSets and existing ones; it is mixed into the next "
        "name so that the name is unique."
    )})


class DeploymentSchema(Schema):
    """A Deployment runs a number of identical Pods from one template and rolls changes to that template out
    gradually, through ReplicaSets that it creates and scales.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(DeploymentSpecSchema, metadata={"description": (
        "The desired state: how many Pods, made from which template, and how to replace them when the "
        "template changes."
    )})
    status = fields.Nested(DeploymentStatusSchema, metadata={"description": (
        "The most recently observed state. Written by the controller; clients read it."
    )})


class ReplicaSetSpecSchema(Schema):
    """The desired state of a ReplicaSet."""

    replicas = fields.Int32(metadata={"description": "How many Pods should run. Defaults to 1."})
    min_ready_seconds = fields.Int32(metadata={"description": (
        "How long a new Pod must stay ready, without any container crashing, before it counts as available. "
        "Defaults to 0."
    )})
    selector = fields.Nested(LabelSelectorSchema, metadata={"map_type": "atomic", "pointer": True, "omitempty": False, "description": (
        "Which Pods count toward replicas, by label. It must match the template's labels."
    )})
    template = fields.Nested(PodTemplateSpecSchema, metadata={"description": (
        "The Pods created when there are fewer than replicas."
    )})


class ReplicaSetConditionSchema(Schema):
    """One aspect of a ReplicaSet's state at a point in time."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect, such as ReplicaFailure."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_transition_time = fields.Time(metadata={"omitempty": False, "description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class ReplicaSetStatusSchema(Schema):
    """The observed state of a ReplicaSet, written by the replica set controller."""

    replicas = fields.Int32(metadata={"omitempty": False, "description": "Pods of this ReplicaSet that are not terminating."})
    fully_labeled_replicas = fields.Int32(metadata={"description": (
        "Pods whose labels match all the template's labels, not only the selector."
    )})
    ready_replicas = fields.Int32(metadata={"description": "Pods whose Ready condition is True."})
    available_replicas = fields.Int32(metadata={"description": "Pods that have been ready for at least minReadySeconds."})
    terminating_replicas = fields.Int32(metadata={"description": "Pods that are shutting down but are not gone yet."})
    observed_generation = fields.Int(metadata={"description": "The metadata.generation the controller last acted on."})
    conditions = fields.List(fields.Nested(ReplicaSetConditionSchema), metadata=fields.merge_by("type", description=(
        "The latest observations of the ReplicaSet's state, one per type."
    )))


class ReplicaSetSchema(Schema):
    """A ReplicaSet keeps a given number of Pods matching its selector running, creating Pods from its template or
    deleting extra ones. Deployments manage ReplicaSets; create a Deployment rather than a ReplicaSet of your own.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(ReplicaSetSpecSchema, metadata={"description": (
        "The desired state: how many Pods, selected how, made from which template."
    )})
    status = fields.Nested(ReplicaSetStatusSchema, metadata={"description": (
        "The most recently observed state. Written by the controller; clients read it."
    )})


class ControllerRevisionSchema(Schema):
    """ControllerRevision is an immutable snapshot of state data: StatefulSets and DaemonSets keep one per
    pod template they have run, so that an update can be rolled back. Clients seldom write them."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    data = fields.Raw(metadata={"description": (
        "The state this revision holds, as the controller that made it wrote it: for StatefulSets and "
        "DaemonSets a patch replacing spec.template. Cannot change."
    )})
    revision = fields.Int(metadata={"omitempty": False, "description": (
        "The revision's number among its owner's revisions; the highest is the newest."
    )})


class RollingUpdateDaemonSetSchema(Schema):
    """How fast a rolling update replaces a DaemonSet's Pods, node by node."""

    max_unavailable = fields.IntOrString(metadata={"description": (
        "How many nodes may be without an available Pod of the DaemonSet during the update: a number, or a "
        "percentage of the nodes that should run one, rounded up. Defaults to 1. Exactly one of maxUnavailable "
        "and maxSurge is non-zero."
    )})
    max_surge = fields.IntOrString(metadata={"description": (
        "On how many nodes a new Pod may start before the old one stops (both run for a while): a number, or a "
        "percentage of the nodes that should run one, rounded up. Defaults to 0."
    )})


class DaemonSetUpdateStrategySchema(Schema):
    """How a DaemonSet replaces its Pods when the template changes."""

    type = fields.Str(metadata={"description": (
        "RollingUpdate replaces old Pods node by node; OnDelete makes a new Pod only once an old one is deleted. "
        "Defaults to RollingUpdate."
    )})
    rolling_update = fields.Nested(RollingUpdateDaemonSetSchema, metadata={"pointer": True, "description": (
        "Tuning of a RollingUpdate; allowed only when type is RollingUpdate."
    )})


class DaemonSetSpecSchema(Schema):
    """The desired state of a DaemonSet."""

    selector = fields.Nested(LabelSelectorSchema, metadata={"map_type": "atomic", "pointer": True, "omitempty": False, "description": (
        "Which Pods belong to this DaemonSet, by label. It must match the template's labels and cannot change "
        "after creation."
    )})
    template = fields.Nested(PodTemplateSpecSchema, metadata={"description": (
        "The Pod to run on every eligible node: those its nodeSelector, node affinity and tolerations allow. "
        "Its restartPolicy must be Always."
    )})
    update_strategy = fields.Nested(DaemonSetUpdateStrategySchema, metadata={"description": (
        "How old Pods are replaced by new ones when the template changes."
    )})
    min_ready_seconds = fields.Int32(metadata={"description": (
        "How long a new Pod must stay ready, without any container crashing, before it counts as available. "
        "Defaults to 0."
    )})
    revision_history_limit = fields.Int32(metadata={"description": (
        "How many old ControllerRevisions to keep so that an update can be undone. Defaults to 10."
    )})


class DaemonSetConditionSchema(Schema):
    """One aspect of a DaemonSet's state at a point in time."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_transition_time = fields.Time(metadata={"description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class DaemonSetStatusSchema(Schema):
    """The observed state of a DaemonSet, written by the daemon set controller."""

    current_number_scheduled = fields.Int32(metadata={"omitempty": False, "description": (
        "Nodes that should run the daemon Pod and run at least one."
    )})
    number_misscheduled = fields.Int32(metadata={"omitempty": False, "description": (
        "Nodes that run the daemon Pod but should not."
    )})
    desired_number_scheduled = fields.Int32(metadata={"omitempty": False, "description": (
        "Nodes that should run the daemon Pod."
    )})
    number_ready = fields.Int32(metadata={"omitempty": False, "description": (
        "Nodes that should run the daemon Pod and whose Pod is Ready."
    )})
    observed_generation = fields.Int(metadata={"description": "The metadata.generation the controller last acted on."})
    updated_number_scheduled = fields.Int32(metadata={"description": "Nodes running a Pod of the current template."})
    number_available = fields.Int32(metadata={"description": (
        "Nodes that should run the daemon Pod and whose Pod has been ready for at least minReadySeconds."
    )})
    number_unavailable = fields.Int32(metadata={"description": (
        "Nodes that should run the daemon Pod and have none available."
    )})
    collision_count = fields.Int32(metadata={"description": (
        "Counts clashes between the names of new ControllerRevisions and existing ones; it is mixed into the "
        "next name so that the name is unique."
    )})
    conditions = fields.List(fields.Nested(DaemonSetConditionSchema), metadata=fields.merge_by("type", description=(
        "The latest observations of the DaemonSet's state, one per type."
    )))


class DaemonSetSchema(Schema):
    """A DaemonSet runs one copy of a Pod on every eligible node, as node agents (log collectors, network
    proxies, monitoring) need: a node that joins gets one, a node that leaves takes its Pod with it.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(DaemonSetSpecSchema, metadata={"description": (
        "The desired state: the Pod to run, on which nodes, and how to replace it when the template changes."
    )})
    status = fields.Nested(DaemonSetStatusSchema, metadata={"description": (
        "The most recently observed state. Written by the controller; clients read it."
    )})


class PersistentVolumeClaimTemplateSchema(PersistentVolumeClaimSchema):
    """A claim each replica gets a copy of, named ``<template>-<statefulset>-<ordinal>``."""

    api_version = fields.Str(metadata={"description": "v1, when written; the claims made are v1 PersistentVolumeClaims."})
    kind = fields.Str(metadata={"description": "PersistentVolumeClaim, when written."})


class RollingUpdateStatefulSetStrategySchema(Schema):
    """How a rolling update of a StatefulSet proceeds."""

    partition = fields.Int32(metadata={"pointer": True, "description": (
        "Pods with an ordinal at or above this number are updated; those below keep (and are recreated "
        "with) the current revision. Defaults to 0."
    )})
    max_unavailable = fields.IntOrString(metadata={"description": (
        "How many Pods may be unavailable during the update: a number, or a percentage of replicas rounded "
        "down, at least 1. Defaults to 1."
    )})


class StatefulSetUpdateStrategySchema(Schema):
    """How a StatefulSet replaces its Pods when the template changes."""

    type = fields.Str(metadata={"description": (
        "RollingUpdate replaces Pods one ordinal at a time, highest first; OnDelete makes a new Pod only "
        "when one is deleted. Defaults to RollingUpdate."
    )})
    rolling_update = fields.Nested(RollingUpdateStatefulSetStrategySchema, metadata={"pointer": True, "description": (
        "Tuning of a RollingUpdate; allowed only when type is RollingUpdate."
    )})


class StatefulSetPersistentVolumeClaimRetentionPolicySchema(Schema):
    """What becomes of the claims made from volumeClaimTemplates."""

    when_deleted = fields.Str(metadata={"description": (
        "Retain keeps the claims when the StatefulSet is deleted; Delete has them collected with it. Defaults "
        "to Retain."
    )})
    when_scaled = fields.Str(metadata={"description": (
        "Retain keeps the claims of Pods removed by a scale-down; Delete has them collected with those Pods. "
        "Defaults to Retain."
    )})


class StatefulSetOrdinalsSchema(Schema):
    """The numbers the replicas' names end in."""

    start = fields.Int32(metadata={"description": "The ordinal of the first replica. Defaults to 0."})


class StatefulSetSpecSchema(Schema):
    """The desired state of a StatefulSet."""

    replicas = fields.Int32(metadata={"pointer": True, "description": (
        "How many Pods should run, named <statefulset>-0, -1, ... Defaults to 1."
    )})
    selector = fields.Nested(LabelSelectorSchema, metadata={"map_type": "atomic", "pointer": True, "omitempty": False, "description": (
        "Which Pods belong to this StatefulSet, by label. It must match the template's labels and cannot "
        "change after creation."
    )})
    template = fields.Nested(PodTemplateSpecSchema, metadata={"description": (
        "The Pods to run; each gets a stable name, hostname and the claims of volumeClaimTemplates."
    )})
    volume_claim_templates = fields.List(fields.Nested(PersistentVolumeClaimTemplateSchema), metadata={"list_type": "atomic", "description": (
        "Claims every Pod gets one of each, mounted as the volume of the template's name. Cannot change."
    )})
    service_name = fields.Str(metadata={"description": (
        "The headless Service giving the Pods their DNS names (<pod>.<serviceName>.<namespace>.svc): the "
        "Pods' subdomain. Cannot change."
    )})
    pod_management_policy = fields.Str(metadata={"description": (
        "OrderedReady creates Pods one at a time in ordinal order, each once the one before is Ready, and "
        "removes them in reverse; Parallel creates and removes them all at once. Defaults to OrderedReady. "
        "Cannot change."
    )})
    update_strategy = fields.Nested(StatefulSetUpdateStrategySchema, metadata={"patch_strategy": "retainKeys", "description": (
        "How Pods are replaced when the template changes."
    )})
    revision_history_limit = fields.Int32(metadata={"pointer": True, "description": (
        "How many ControllerRevisions to keep beyond those in use, so that an update can be undone. Defaults to 10."
    )})
    min_ready_seconds = fields.Int32(metadata={"description": (
        "How long a new Pod must stay ready before it counts as available. Defaults to 0."
    )})
    persistent_volume_claim_retention_policy = fields.Nested(StatefulSetPersistentVolumeClaimRetentionPolicySchema, metadata={"pointer": True, "description": (
        "Whether the claims made from volumeClaimTemplates are deleted with the StatefulSet or with the Pods a "
        "scale-down removes."
    )})
    ordinals = fields.Nested(StatefulSetOrdinalsSchema, metadata={"pointer": True, "description": (
        "The numbering of the replicas."
    )})


class StatefulSetConditionSchema(Schema):
    """One aspect of a StatefulSet's state at a point in time."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_transition_time = fields.Time(metadata={"description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class StatefulSetStatusSchema(Schema):
    """The observed state of a StatefulSet, written by the statefulset controller."""

    observed_generation = fields.Int(metadata={"description": "The metadata.generation the controller last acted on."})
    replicas = fields.Int32(metadata={"omitempty": False, "description": "Pods the controller has made that exist."})
    ready_replicas = fields.Int32(metadata={"description": "Of those, the Pods whose Ready condition is True."})
    current_replicas = fields.Int32(metadata={"description": "Pods made from the template of currentRevision."})
    updated_replicas = fields.Int32(metadata={"description": "Pods made from the template of updateRevision."})
    current_revision = fields.Str(metadata={"description": (
        "The ControllerRevision of the Pods below the rollout (ordinals under the partition, or all once "
        "a rollout is done)."
    )})
    update_revision = fields.Str(metadata={"description": "The ControllerRevision of the current template."})
    collision_count = fields.Int32(metadata={"pointer": True, "description": (
        "Counts clashes between ControllerRevision names; it is mixed into the next name so that it is unique."
    )})
    conditions = fields.List(fields.Nested(StatefulSetConditionSchema), metadata=fields.merge_by("type", description=(
        "The latest observations of the StatefulSet's state, one per type."
    )))
    available_replicas = fields.Int32(metadata={"omitempty": False, "description": (
        "Pods that have been ready for at least minReadySeconds."
    )})


class StatefulSetSchema(Schema):
    """A StatefulSet runs Pods with a stable identity: each has a name and hostname ending in its ordinal and
    claims of its own made from volumeClaimTemplates, kept across rescheduling; Pods are created, updated and
    removed in ordinal order.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(StatefulSetSpecSchema, metadata={"description": (
        "The desired state: how many Pods, from which template, with which claims, updated how."
    )})
    status = fields.Nested(StatefulSetStatusSchema, metadata={"description": (
        "The most recently observed state. Written by the controller; clients read it."
    )})
