"""Validation of apps kinds (``pkg/apis/apps/validation``), on internal objects."""

from __future__ import annotations

import re

from kplane.api import (
    FIELD_IMMUTABLE, FieldError, LabelSelector, camel_case, forbidden, invalid, label_selector_from_internal,
    not_supported, required, validate_annotations, validate_label_selector, validate_labels,
)
from kplane.plugins.apps.types import (
    ControllerRevision, DaemonSetSpec, DaemonSetStatus, DaemonSetUpdateStrategy, DeploymentSpec, DeploymentStatus,
    DeploymentStrategy, ReplicaSetSpec, ReplicaSetStatus, StatefulSetPersistentVolumeClaimRetentionPolicy, StatefulSetSpec,
    StatefulSetStatus, StatefulSetUpdateStrategy,
)
from kplane.plugins.core.types import PodTemplateSpec
from kplane.plugins.core.validation import validate_pod_spec

NON_NEGATIVE = "must be greater than or equal to 0"
STRATEGY_TYPES = ["Recreate", "RollingUpdate"]
DAEMON_SET_STRATEGY_TYPES = ["RollingUpdate", "OnDelete"]
_PERCENT = re.compile(r"^[0-9]+%$")


def _non_negative(value: int | None, path: str) -> list[FieldError]:
    return [invalid(path, value, NON_NEGATIVE)] if value is not None and value < 0 else []


def _validate_selector_matches(selector: LabelSelector | None, template: PodTemplateSpec, kind: str) -> tuple[list[FieldError], bool]:
    """The selector is required, valid, non-empty and must select the template's own labels;
    also whether it was usable, so that the template's spec is worth checking."""
    if selector is None:
        return [required("spec.selector")], False
    errs = validate_label_selector(selector, "spec.selector")
    if errs:
        return errs, False
    if not selector.match_labels and not selector.match_expressions:
        return [invalid("spec.selector", {}, f"empty selector is invalid for {kind}")], False
    if not label_selector_from_internal(selector).matches(template.metadata.labels or {}):
        errs.append(invalid("spec.template.metadata.labels", template.metadata.labels or {}, "`selector` does not match template `labels`"))
    return errs, True


def _validate_restart_always(template: PodTemplateSpec) -> list[FieldError]:
    if template.spec.restart_policy and template.spec.restart_policy != "Always":
        return [not_supported("spec.template.spec.restartPolicy", template.spec.restart_policy, ["Always"])]
    return []


def validate_selector_and_template(selector: LabelSelector | None, template: PodTemplateSpec, kind: str) -> list[FieldError]:
    """The selector matches the template, whose spec is a valid pod's that restarts Always."""
    errs, usable = _validate_selector_matches(selector, template, kind)
    if not usable:
        return errs
    return errs + validate_pod_spec(template.spec, "spec.template.spec") + _validate_restart_always(template)


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


STATEFUL_SET_UPDATABLE = ("replicas", "ordinals", "template", "update_strategy", "persistent_volume_claim_retention_policy",
                          "min_ready_seconds")
POD_MANAGEMENT_POLICIES = ("OrderedReady", "Parallel")
RETENTION_POLICIES = ["Retain", "Delete"]


def _validate_stateful_set_strategy(strategy: StatefulSetUpdateStrategy) -> list[FieldError]:
    path = "spec.updateStrategy"
    rolling = strategy.rolling_update
    if not strategy.type:
        return [required(path)]
    if strategy.type == "OnDelete":
        return [invalid(path + ".rollingUpdate", _value(rolling), "only allowed for updateStrategy 'RollingUpdate'")] if rolling else []
    if strategy.type != "RollingUpdate":
        return [invalid(path, _value(strategy), "must be 'RollingUpdate' or 'OnDelete'")]
    if rolling is None:
        return []
    errs = _non_negative(rolling.partition, path + ".rollingUpdate.partition")
    if rolling.max_unavailable is not None:
        errs += _int_or_percent(rolling.max_unavailable, path + ".rollingUpdate.maxUnavailable")
        if _is_zero(rolling.max_unavailable):
            errs.append(invalid(path + ".rollingUpdate.maxUnavailable", rolling.max_unavailable, "cannot be 0"))
    return errs


def _validate_retention(policy: StatefulSetPersistentVolumeClaimRetentionPolicy | None) -> list[FieldError]:
    if policy is None:
        return []
    errs: list[FieldError] = []
    for name in ("when_deleted", "when_scaled"):
        value = getattr(policy, name)
        if value not in RETENTION_POLICIES:
            errs.append(not_supported(f"spec.persistentVolumeClaimRetentionPolicy.{camel_case(name)}", value or "", RETENTION_POLICIES))
    return errs


def validate_stateful_set_spec(spec: StatefulSetSpec) -> list[FieldError]:
    """``ValidateStatefulSetSpec``. As in Kubernetes, the template's pod spec is not validated
    here (its volume mounts may name claim templates, which only the pods get as volumes): a bad
    one shows as the controller's FailedCreate events."""
    errs: list[FieldError] = []
    if not spec.pod_management_policy:
        errs.append(required("spec.podManagementPolicy"))
    elif spec.pod_management_policy not in POD_MANAGEMENT_POLICIES:
        errs.append(invalid("spec.podManagementPolicy", spec.pod_management_policy, "must be 'OrderedReady' or 'Parallel'"))
    errs += _validate_stateful_set_strategy(spec.update_strategy)
    errs += _validate_retention(spec.persistent_volume_claim_retention_policy)
    errs += _non_negative(spec.replicas, "spec.replicas") + _non_negative(spec.min_ready_seconds, "spec.minReadySeconds")
    errs += _non_negative(spec.revision_history_limit, "spec.revisionHistoryLimit")
    if spec.ordinals is not None:
        errs += _non_negative(spec.ordinals.start, "spec.ordinals.start")
    selector_errs, _ = _validate_selector_matches(spec.selector, spec.template, "statefulset")
    errs += selector_errs
    errs += validate_labels(spec.template.metadata.labels, "spec.template.labels")
    errs += validate_annotations(spec.template.metadata.annotations, "spec.template.annotations")
    if spec.template.spec.restart_policy != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", spec.template.spec.restart_policy or "", ["Always"]))
    if spec.template.spec.active_deadline_seconds is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in StatefulSet is not Supported"))
    return errs


def validate_stateful_set_update(spec: StatefulSetSpec, old: StatefulSetSpec) -> list[FieldError]:
    """Only some fields of a StatefulSet's spec may change (``ValidateStatefulSetUpdate``)."""
    if any(getattr(spec, name) != getattr(old, name) for name in StatefulSetSpec.__slots__ if name not in STATEFUL_SET_UPDATABLE):
        return [forbidden("spec", "updates to statefulset spec for fields other than 'replicas', 'ordinals', 'template', "
                                  "'updateStrategy', 'persistentVolumeClaimRetentionPolicy' and 'minReadySeconds' are forbidden")]
    return []


def validate_stateful_set_status(status: StatefulSetStatus, old: StatefulSetStatus) -> list[FieldError]:
    """``ValidateStatefulSetStatusUpdate``: counters not negative nor above replicas, available
    not above ready, the collision count never lowered."""
    errs: list[FieldError] = []
    for name in ("replicas", "ready_replicas", "current_replicas", "updated_replicas", "available_replicas",
                 "observed_generation", "collision_count"):
        errs += _non_negative(getattr(status, name), "status." + camel_case(name))
    replicas = status.replicas or 0
    for name in ("ready_replicas", "current_replicas", "updated_replicas", "available_replicas"):
        if (getattr(status, name) or 0) > replicas:
            errs.append(invalid("status." + camel_case(name), getattr(status, name), "cannot be greater than status.replicas"))
    if (status.available_replicas or 0) > (status.ready_replicas or 0):
        errs.append(invalid("status.availableReplicas", status.available_replicas, "cannot be greater than status.readyReplicas"))
    if old.collision_count is not None and (status.collision_count is None or status.collision_count < old.collision_count):
        errs.append(invalid("status.collisionCount", status.collision_count or 0, "cannot be decremented"))
    return errs


def _value(obj: object) -> object:
    """A nested spec part as its JSON-ish form, for a message."""
    if obj is None or not hasattr(obj, "__slots__"):
        return obj
    return {camel_case(name): _value(getattr(obj, name)) for name in obj.__slots__ if getattr(obj, name) is not None}
