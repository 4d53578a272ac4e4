"""Validation of apps kinds (``pkg/apis/apps/validation``), on internal objects."""

from __future__ import annotations

import re

from kplane.api import (
    FIELD_IMMUTABLE, FieldError, LabelSelector, camel_case, forbidden, invalid, label_selector_from_internal,
    not_supported, required, validate_label_selector,
)
from kplane.plugins.apps.types import (
    ControllerRevision, DaemonSetSpec, DaemonSetStatus, DaemonSetUpdateStrategy, DeploymentSpec, DeploymentStatus,
    DeploymentStrategy, ReplicaSetSpec, ReplicaSetStatus,
)
from kplane.plugins.core.types import PodTemplateSpec
from kplane.plugins.core.validation import validate_pod_spec

NON_NEGATIVE = "must be greater than or equal to 0"
STRATEGY_TYPES = ["Recreate", "RollingUpdate"]
DAEMON_SET_STRATEGY_TYPES = ["RollingUpdate", "OnDelete"]
_PERCENT = re.compile(r"^[0-9]+%$")


def _non_negative(value: int | None, path: str) -> list[FieldError]:
    return [invalid(path, value, NON_NEGATIVE)] if value is not None and value < 0 else []


def validate_selector_and_template(selector: LabelSelector | None, template: PodTemplateSpec, kind: str) -> list[FieldError]:
    """The selector is required, non-empty and must select the template's own labels."""
    if selector is None:
        return [required("spec.selector")]
    errs = validate_label_selector(selector, "spec.selector")
    if errs:
        return errs
    if not selector.match_labels and not selector.match_expressions:
        return [invalid("spec.selector", {}, f"empty selector is invalid for {kind}")]
    if not label_selector_from_internal(selector).matches(template.metadata.labels or {}):
        errs.append(invalid("spec.template.metadata.labels", template.metadata.labels or {}, "`selector` does not match template `labels`"))
    errs += validate_pod_spec(template.spec, "spec.template.spec")
    if template.spec.restart_policy and template.spec.restart_policy != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", template.spec.restart_policy, ["Always"]))
    return errs


def _int_or_percent(value: int | str | None, path: str) -> list[FieldError]:
    if value is None or isinstance(value, int):
        return _non_negative(value, path)
    if not _PERCENT.match(value):
        return [invalid(path, value, "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")]
    if int(value[:-1]) > 100:
        return [invalid(path, value, "must not be greater than 100%")]
    return []


#: kube's ``ValidatePositiveIntOrPercent`` with ``IsNotMoreThan100Percent``, shared with PodDisruptionBudgets.
validate_positive_int_or_percent = _int_or_percent


def _is_zero(value: int | str | None) -> bool:
    return value in (0, "0%")


def _validate_strategy(strategy: DeploymentStrategy | None) -> list[FieldError]:
    if strategy is None:
        return []
    errs: list[FieldError] = []
    if strategy.type not in STRATEGY_TYPES:
        errs.append(not_supported("spec.strategy.type", strategy.type or "", STRATEGY_TYPES) if strategy.type else required("spec.strategy.type"))
    rolling = strategy.rolling_update
    if strategy.type == "Recreate" and rolling is not None:
        errs.append(forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"))
    if strategy.type == "RollingUpdate" and rolling is not None:
        errs += _int_or_percent(rolling.max_unavailable, "spec.strategy.rollingUpdate.maxUnavailable")
        errs += _int_or_percent(rolling.max_surge, "spec.strategy.rollingUpdate.maxSurge")
        if _is_zero(rolling.max_unavailable) and _is_zero(rolling.max_surge):
            errs.append(invalid("spec.strategy.rollingUpdate.maxUnavailable", rolling.max_unavailable, "may not be 0 when `maxSurge` is 0"))
    return errs


def validate_deployment_spec(spec: DeploymentSpec) -> list[FieldError]:
    errs = _non_negative(spec.replicas, "spec.replicas")
    errs += validate_selector_and_template(spec.selector, spec.template, "deployment")
    errs += _validate_strategy(spec.strategy)
    errs += _non_negative(spec.min_ready_seconds, "spec.minReadySeconds")
    errs += _non_negative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    if spec.progress_deadline_seconds is not None:
        errs += _non_negative(spec.progress_deadline_seconds, "spec.progressDeadlineSeconds")
        if spec.progress_deadline_seconds <= (spec.min_ready_seconds or 0):
            errs.append(invalid("spec.progressDeadlineSeconds", spec.progress_deadline_seconds, "must be greater than minReadySeconds"))
    return errs


def validate_replica_set_spec(spec: ReplicaSetSpec) -> list[FieldError]:
    errs = _non_negative(spec.replicas, "spec.replicas") + _non_negative(spec.min_ready_seconds, "spec.minReadySeconds")
    return errs + validate_selector_and_template(spec.selector, spec.template, "replicaset")


def validate_selector_unchanged(new: LabelSelector | None, old: LabelSelector | None) -> list[FieldError]:
    if new != old:
        return [invalid("spec.selector", _selector_value(new), FIELD_IMMUTABLE)]
    return []


def _selector_value(selector: LabelSelector | None) -> object:
    """The selector as its JSON, for the message."""
    if selector is None:
        return None
    expressions = [{"key": e.key, "operator": e.operator, "values": e.values or []} for e in selector.match_expressions or ()]
    return {"matchLabels": selector.match_labels or {}, "matchExpressions": expressions}


def validate_status(status: DeploymentStatus | ReplicaSetStatus | DaemonSetStatus) -> list[FieldError]:
    """Counters are never negative (``ValidateDeploymentStatus``/``ValidateReplicaSetStatus``/``validateDaemonSetStatus``)."""
    errs: list[FieldError] = []
    for name in ("observed_generation", "replicas", "updated_replicas", "ready_replicas", "available_replicas",
                 "unavailable_replicas", "terminating_replicas", "fully_labeled_replicas", "collision_count",
                 "current_number_scheduled", "number_misscheduled", "desired_number_scheduled", "number_ready",
                 "updated_number_scheduled", "number_available", "number_unavailable"):
        errs += _non_negative(getattr(status, name, None), "status." + camel_case(name))
    return errs


def validate_controller_revision(revision: ControllerRevision) -> list[FieldError]:
    """``ValidateControllerRevision``: the data is mandatory and the number not negative."""
    errs = [required("data", "data is mandatory")] if revision.data is None else []
    return errs + _non_negative(revision.revision, "revision")


def validate_controller_revision_update(revision: ControllerRevision, old: ControllerRevision) -> list[FieldError]:
    """Only the number may change (the history renumbers a revision rolled back to), never the data."""
    errs = validate_controller_revision(revision)
    if revision.data != old.data:
        errs.append(invalid("data", revision.data, FIELD_IMMUTABLE))
    return errs


def _percent_or_int_value(value: int | str | None) -> int:
    """``getIntOrPercentValue``: the number, or a valid percentage's number; 0 for anything else."""
    if isinstance(value, int):
        return value
    if isinstance(value, str) and _PERCENT.match(value):
        return int(value[:-1])
    return 0


def _validate_daemon_set_strategy(strategy: DaemonSetUpdateStrategy) -> list[FieldError]:
    """``ValidateDaemonSetUpdateStrategy``: exactly one of maxUnavailable and maxSurge is non-zero."""
    path = "spec.updateStrategy"
    if strategy.type == "OnDelete":
        return []
    if strategy.type != "RollingUpdate":
        return [not_supported(path, {"type": strategy.type or ""}, DAEMON_SET_STRATEGY_TYPES)]
    rolling = strategy.rolling_update
    if rolling is None:
        return [required(path + ".rollingUpdate")]
    errs = _int_or_percent(rolling.max_unavailable, path + ".rollingUpdate.maxUnavailable")
    errs += _int_or_percent(rolling.max_surge, path + ".rollingUpdate.maxSurge")
    unavailable, surge = _percent_or_int_value(rolling.max_unavailable) != 0, _percent_or_int_value(rolling.max_surge) != 0
    if unavailable and surge:
        errs.append(invalid(path + ".rollingUpdate.maxSurge", rolling.max_surge, "may not be set when maxUnavailable is non-zero"))
    elif not unavailable and not surge:
        errs.append(required(path + ".rollingUpdate.maxUnavailable", "cannot be 0 when maxSurge is 0"))
    return errs


def validate_daemon_set_spec(spec: DaemonSetSpec) -> list[FieldError]:
    """``ValidateDaemonSetSpec``: a selector of the template's labels, an Always pod without a deadline."""
    errs = validate_selector_and_template(spec.selector, spec.template, "daemonset")
    if spec.template.spec.active_deadline_seconds is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in DaemonSet is not Supported"))
    errs += _non_negative(spec.min_ready_seconds, "spec.minReadySeconds")
    errs += _validate_daemon_set_strategy(spec.update_strategy)
    return errs + _non_negative(spec.revision_history_limit, "spec.revisionHistoryLimit")


def validate_daemon_set_status_update(status: DaemonSetStatus, old: DaemonSetStatus) -> list[FieldError]:
    """``ValidateDaemonSetStatusUpdate``: counters not negative, and the collision count never goes down."""
    errs = validate_status(status)
    if (status.collision_count or 0) < (old.collision_count or 0):
        errs.append(invalid("status.collisionCount", status.collision_count or 0, "cannot be decremented"))
    return errs
