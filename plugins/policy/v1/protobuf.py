"""Protobuf tables of policy/v1 PodDisruptionBudget (``kubectl create pdb``) and Eviction
(``kubectl drain``'s body of ``pods/eviction``).

Field numbers are those of ``k8s.io/api`` v0.32 ``policy/v1/generated.proto``; see
:mod:`kplane.core.runtime.protobuf` for the format.
"""

from __future__ import annotations

from kplane.api import CONDITION, DELETE_OPTIONS, INT_OR_STRING, LABEL_SELECTOR, OBJECT_META, TIME, Field, Message

POD_DISRUPTION_BUDGET_SPEC = Message(
    "PodDisruptionBudgetSpec",
    {
        1: Field("minAvailable", INT_OR_STRING),
        2: Field("selector", LABEL_SELECTOR),
        3: Field("maxUnavailable", INT_OR_STRING),
        4: Field("unhealthyPodEvictionPolicy", "string", pointer=True),
    },
)

POD_DISRUPTION_BUDGET_STATUS = Message(
    "PodDisruptionBudgetStatus",
    {
        1: Field("observedGeneration", "int64"),
        2: Field("disruptedPods", TIME, map=True),
        3: Field("disruptionsAllowed", "int32"),
        4: Field("currentHealthy", "int32"),
        5: Field("desiredHealthy", "int32"),
        6: Field("expectedPods", "int32"),
        7: Field("conditions", CONDITION, repeated=True),
    },
)

POD_DISRUPTION_BUDGET = Message(
    "PodDisruptionBudget",
    {1: Field("metadata", OBJECT_META), 2: Field("spec", POD_DISRUPTION_BUDGET_SPEC), 3: Field("status", POD_DISRUPTION_BUDGET_STATUS)},
)

EVICTION = Message("Eviction", {1: Field("metadata", OBJECT_META), 2: Field("deleteOptions", DELETE_OPTIONS)})
