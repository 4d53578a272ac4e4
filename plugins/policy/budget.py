"""What the disruption controller and the eviction API share about a budget's status
(``k8s.io/component-helpers/apps/poddisruptionbudget``)."""

from __future__ import annotations

from kplane.plugins.policy.types import INSUFFICIENT_PODS, SUFFICIENT_PODS

#: How long an admitted eviction keeps its pod out of the healthy count if the pod does not go
#: (the controller's ``DeletionTimeout``).
DELETION_TIMEOUT = 120.0


def disruption_allowed(disruptions_allowed: int) -> tuple[str, str]:
    """The DisruptionAllowed condition's status and reason for that many allowed disruptions
    (``UpdateDisruptionAllowedCondition``)."""
    return ("True", SUFFICIENT_PODS) if disruptions_allowed > 0 else ("False", INSUFFICIENT_PODS)
