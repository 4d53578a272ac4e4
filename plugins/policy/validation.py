"""Validation of PodDisruptionBudgets (``pkg/apis/policy/validation``), on internal objects."""

from __future__ import annotations

from kplane.api import FieldError, invalid, not_supported, validate_label_selector
from kplane.plugins.apps.validation import validate_positive_int_or_percent
from kplane.plugins.policy.types import UNHEALTHY_POD_EVICTION_POLICIES, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus

NON_NEGATIVE = "must be greater than or equal to 0"


def validate_spec(spec: PodDisruptionBudgetSpec, path: str = "spec") -> list[FieldError]:
    """``ValidatePodDisruptionBudgetSpec``: one of minAvailable and maxUnavailable, each a
    non-negative number or a percentage up to 100%, a valid selector, a known policy."""
    errs: list[FieldError] = []
    if spec.min_available is not None and spec.max_unavailable is not None:
        errs.append(invalid(path, _spec_value(spec), "minAvailable and maxUnavailable cannot be both set"))
    errs += validate_positive_int_or_percent(spec.min_available, f"{path}.minAvailable")
    errs += validate_positive_int_or_percent(spec.max_unavailable, f"{path}.maxUnavailable")
    if spec.selector is not None:
        errs += validate_label_selector(spec.selector, f"{path}.selector")
    policy = spec.unhealthy_pod_eviction_policy
    if policy is not None and policy not in UNHEALTHY_POD_EVICTION_POLICIES:
        errs.append(not_supported(f"{path}.unhealthyPodEvictionPolicy", policy, UNHEALTHY_POD_EVICTION_POLICIES))
    return errs


def validate_status(status: PodDisruptionBudgetStatus, path: str = "status") -> list[FieldError]:
    """``ValidatePodDisruptionBudgetStatusUpdate`` for policy/v1: the counters are never negative."""
    errs: list[FieldError] = []
    for name, value in (("disruptionsAllowed", status.disruptions_allowed), ("currentHealthy", status.current_healthy),
                        ("desiredHealthy", status.desired_healthy), ("expectedPods", status.expected_pods)):
        if value is not None and value < 0:
            errs.append(invalid(f"{path}.{name}", value, NON_NEGATIVE))
    return errs


def _spec_value(spec: PodDisruptionBudgetSpec) -> dict[str, object]:
    """The two fields that clash, as the message shows them."""
    return {"minAvailable": spec.min_available, "maxUnavailable": spec.max_unavailable}
