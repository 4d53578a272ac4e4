"""Wire schemas of policy/v1: PodDisruptionBudget, and Eviction (``pods/eviction``'s body)."""

from __future__ import annotations

from kplane.api import ConditionSchema, LabelSelectorSchema, ObjectMetaSchema, Schema, deleteoptions, fields


class PodDisruptionBudgetSpecSchema(Schema):
    """How many of the selected Pods may be disrupted (evicted) at a time."""

    min_available = fields.IntOrString(metadata={"description": (
        "Evictions are allowed only while at least this many (or this percentage) of the selected Pods stay "
        "healthy after them. Exclusive with maxUnavailable."
    )})
    selector = fields.Nested(LabelSelectorSchema, metadata={"map_type": "atomic", "pointer": True, "description": (
        "The Pods the budget covers. A null selector selects no Pods; an empty one selects every Pod of the "
        "namespace."
    )})
    max_unavailable = fields.IntOrString(metadata={"description": (
        "Evictions are allowed only while at most this many (or this percentage) of the expected Pods are "
        "unavailable after them. Exclusive with minAvailable."
    )})
    unhealthy_pod_eviction_policy = fields.Str(metadata={"description": (
        "When a running but not Ready Pod may be evicted: IfHealthyBudget (only while the budget is met) or "
        "AlwaysAllow. Defaults to IfHealthyBudget."
    )})


class PodDisruptionBudgetStatusSchema(Schema):
    """What the disruption controller last computed for the budget."""

    observed_generation = fields.Int(metadata={"description": (
        "The metadata.generation this status was computed for. Evictions wait until it is current."
    )})
    disrupted_pods = fields.Dict(keys=fields.Str(), values=fields.Time(), metadata={"description": (
        "Pods whose eviction was admitted but that the controller has not yet seen go, by name, with the "
        "time of the eviction. They do not count as healthy."
    )})
    disruptions_allowed = fields.Int32(metadata={"omitempty": False, "description": (
        "How many more Pods may be disrupted now."
    )})
    current_healthy = fields.Int32(metadata={"omitempty": False, "description": "Selected Pods that are Ready now."})
    desired_healthy = fields.Int32(metadata={"omitempty": False, "description": "The fewest healthy Pods the budget allows."})
    expected_pods = fields.Int32(metadata={"omitempty": False, "description": (
        "How many Pods are expected: the selected Pods, or the replicas of their controllers."
    )})
    conditions = fields.List(fields.Nested(ConditionSchema), metadata=fields.merge_by("type", description=(
        "DisruptionAllowed: True when disruptionsAllowed is above 0 (reason SufficientPods), else False "
        "(InsufficientPods, or SyncFailed when the controller could not compute the status)."
    )))


class PodDisruptionBudgetSchema(Schema):
    """A PodDisruptionBudget limits how many Pods of a set may be down at once through voluntary disruptions:
    the eviction API (``kubectl drain``) refuses an eviction that would break it.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(PodDisruptionBudgetSpecSchema, metadata={"description": "The budget: which Pods, how many."})
    status = fields.Nested(PodDisruptionBudgetStatusSchema, metadata={"description": (
        "The most recently observed state. Written by the disruption controller and the eviction API."
    )})


class EvictionSchema(Schema):
    """Eviction evicts a Pod: POSTed to its ``eviction`` subresource, it deletes the Pod unless a
    PodDisruptionBudget forbids it (429)."""

    api_version = fields.Str(data_key="apiVersion")
    kind = fields.Str()
    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "The name and namespace of the Pod to evict."})
    delete_options = fields.Nested(deleteoptions.schema(), metadata={"description": "The options of the Pod's deletion."})
