"""Validation of batch kinds (``pkg/apis/batch/validation``), on internal objects."""

from __future__ import annotations

import dataclasses

from kplane.api import (
    FIELD_IMMUTABLE, FieldError, FieldErrorType, LabelSelector, forbidden, invalid, label_selector_from_internal, not_supported,
    required, validate_label_selector,
)
from kplane.plugins.batch import cron
from kplane.plugins.batch.indexes import interval_error
from kplane.plugins.batch.types import CronJob, CronJobSpec, Job, JobSpec, JobStatus, PodFailurePolicy
from kplane.plugins.core.types import PodTemplateSpec
from kplane.plugins.core.validation import validate_pod_spec

NON_NEGATIVE = "must be greater than or equal to 0"
COMPLETION_MODES = ["NonIndexed", "Indexed"]
CONCURRENCY_POLICIES = ["Allow", "Forbid", "Replace"]
JOB_RESTART_POLICIES = ["OnFailure", "Never"]
POD_FAILURE_ACTIONS = ["Count", "FailIndex", "FailJob", "Ignore"]
REPLACEMENT_POLICIES = ["Failed", "TerminatingOrFailed"]
MAX_INDEXED_COMPLETIONS = 100_000
MAX_POD_FAILURE_RULES = 20
MAX_CRON_JOB_NAME = 52  # the Job's name gets "-" and up to 10 digits of scheduled minutes
CONTROLLER_UID = "batch.kubernetes.io/controller-uid"
LEGACY_CONTROLLER_UID = "controller-uid"
JOB_NAME = "batch.kubernetes.io/job-name"
LEGACY_JOB_NAME = "job-name"


def _non_negative(value: int | None, path: str) -> list[FieldError]:
    return [invalid(path, value, NON_NEGATIVE)] if value is not None and value < 0 else []


def _template(template: PodTemplateSpec, path: str) -> list[FieldError]:
    errs = validate_pod_spec(template.spec, f"{path}.spec")
    policy = template.spec.restart_policy
    if policy not in JOB_RESTART_POLICIES:
        errs.append(not_supported(f"{path}.spec.restartPolicy", policy or "", JOB_RESTART_POLICIES))
    return errs


def validate_job_spec(spec: JobSpec, path: str = "spec", *, template_only_selector: bool = False) -> list[FieldError]:
    """``validateJobSpec``: counts, the selector matching the template, the template's restart
    policy, Indexed's bounds and the pod failure policy."""
    errs: list[FieldError] = []
    for name in ("parallelism", "completions", "active_deadline_seconds", "backoff_limit", "ttl_seconds_after_finished",
                 "backoff_limit_per_index", "max_failed_indexes"):
        errs += _non_negative(getattr(spec, name), f"{path}.{_camel(name)}")
    if spec.active_deadline_seconds == 0:
        errs.append(invalid(f"{path}.activeDeadlineSeconds", 0, "must be greater than 0"))
    if not template_only_selector:
        errs += _selector(spec.selector, spec.template, path)
    errs += _template(spec.template, f"{path}.template")
    mode = spec.completion_mode
    if mode is not None and mode not in COMPLETION_MODES:
        errs.append(not_supported(f"{path}.completionMode", mode, COMPLETION_MODES))
    if mode == "Indexed":
        if spec.completions is None:
            errs.append(required(f"{path}.completions", "when completion mode is Indexed"))
        elif spec.completions > MAX_INDEXED_COMPLETIONS and spec.backoff_limit_per_index is None:
            errs.append(invalid(f"{path}.completions", spec.completions, f"must be less than or equal to {MAX_INDEXED_COMPLETIONS} when completion mode is Indexed"))
        if spec.parallelism is not None and spec.parallelism > MAX_INDEXED_COMPLETIONS:
            errs.append(invalid(f"{path}.parallelism", spec.parallelism, f"must be less than or equal to {MAX_INDEXED_COMPLETIONS} when completion mode is Indexed"))
    if spec.backoff_limit_per_index is not None and mode != "Indexed":
        errs.append(forbidden(f"{path}.backoffLimitPerIndex", "requires indexed completion mode"))
    if spec.max_failed_indexes is not None and spec.backoff_limit_per_index is None:
        errs.append(required(f"{path}.backoffLimitPerIndex", "when maxFailedIndexes is specified"))
    if spec.pod_replacement_policy is not None and spec.pod_replacement_policy not in REPLACEMENT_POLICIES:
        errs.append(not_supported(f"{path}.podReplacementPolicy", spec.pod_replacement_policy, REPLACEMENT_POLICIES))
    if spec.pod_failure_policy is not None:
        errs += _pod_failure_policy(spec.pod_failure_policy, spec, f"{path}.podFailurePolicy")
        if spec.pod_replacement_policy not in (None, "Failed"):
            errs.append(not_supported(f"{path}.podReplacementPolicy", spec.pod_replacement_policy, ["Failed"]))
    if spec.success_policy is not None:
        errs += _success_policy(spec, f"{path}.successPolicy")
    return errs


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(part.title() for part in rest)


def _selector(selector: LabelSelector | None, template: PodTemplateSpec, path: str) -> list[FieldError]:
    if selector is None:
        return [required(f"{path}.selector")]
    errs = validate_label_selector(selector, f"{path}.selector")
    if errs:
        return errs
    if not label_selector_from_internal(selector).matches(template.metadata.labels or {}):
        errs.append(invalid(f"{path}.template.metadata.labels", template.metadata.labels or {}, "`selector` does not match template `labels`"))
    return errs


def _pod_failure_policy(policy: PodFailurePolicy, spec: JobSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.template.spec.restart_policy != "Never":
        errs.append(invalid("spec.template.spec.restartPolicy", spec.template.spec.restart_policy,
                            "only \"Never\" is supported when podFailurePolicy is specified"))
    rules = policy.rules or []
    if len(rules) > MAX_POD_FAILURE_RULES:
        return errs + [FieldError(FieldErrorType.TOO_MANY, f"{path}.rules", f"must have at most {MAX_POD_FAILURE_RULES} items", len(rules))]
    for i, rule in enumerate(rules):
        at = f"{path}.rules[{i}]"
        if rule.action not in POD_FAILURE_ACTIONS:
            errs.append(not_supported(f"{at}.action", rule.action, POD_FAILURE_ACTIONS))
        elif rule.action == "FailIndex" and spec.backoff_limit_per_index is None:
            errs.append(forbidden(f"{at}.action", "requires the backoffLimitPerIndex to be set"))
        if (rule.on_exit_codes is None) == (not rule.on_pod_conditions):
            errs.append(invalid(at, "", "specifying one of OnExitCodes and OnPodConditions is required"))
        if rule.on_exit_codes is not None:
            codes = rule.on_exit_codes
            if codes.operator not in ("In", "NotIn"):
                errs.append(not_supported(f"{at}.onExitCodes.operator", codes.operator, ["In", "NotIn"]))
            values = codes.values or []
            if not values:
                errs.append(invalid(f"{at}.onExitCodes.values", values, "at least one value is required"))
            if len(values) > 255:
                errs.append(invalid(f"{at}.onExitCodes.values", len(values), "must have at most 255 items"))
            for j, value in enumerate(values):
                if codes.operator == "In" and value == 0:
                    errs.append(invalid(f"{at}.onExitCodes.values[{j}]", value, "must not be 0 for the In operator"))
                if j and values[j - 1] >= value:
                    errs.append(invalid(f"{at}.onExitCodes.values[{j}]", value, "must be ordered" if values[j - 1] > value else "duplicate value"))
        for j, pattern in enumerate(rule.on_pod_conditions or []):
            if not pattern.type:
                errs.append(required(f"{at}.onPodConditions[{j}].type"))
            if pattern.status not in ("True", "False", "Unknown"):
                errs.append(not_supported(f"{at}.onPodConditions[{j}].status", pattern.status, ["False", "True", "Unknown"]))
    return errs


def _success_policy(spec: JobSpec, path: str) -> list[FieldError]:
    if spec.completion_mode != "Indexed":
        return [invalid("spec.completionMode", spec.completion_mode, "requires indexed completion mode")]
    errs: list[FieldError] = []
    rules = (spec.success_policy.rules if spec.success_policy else None) or []
    if not rules:
        errs.append(required(f"{path}.rules", "at least one rules must be specified when the successPolicy is specified"))
    for i, rule in enumerate(rules):
        at = f"{path}.rules[{i}]"
        if rule.succeeded_indexes is None and rule.succeeded_count is None:
            errs.append(required(at, "at least one of succeededCount or succeededIndexes must be specified"))
        if rule.succeeded_indexes is not None and (why := interval_error(rule.succeeded_indexes, spec.completions or 0)):
            errs.append(invalid(f"{at}.succeededIndexes", rule.succeeded_indexes, why))
        if rule.succeeded_count is not None and not 0 <= rule.succeeded_count <= (spec.completions or 0):
            errs.append(invalid(f"{at}.succeededCount", rule.succeeded_count, f"must be less than or equal to {spec.completions or 0} (the number of specified completions)"))
    return errs


def validate_generated_selector(job: Job) -> list[FieldError]:
    """``ValidateGeneratedSelector``: unless manualSelector, the template carries the Job's own
    uid and name labels and the selector selects that uid."""
    if job.spec.manual_selector:
        return []
    errs: list[FieldError] = []
    uid, name = job.metadata.uid or "", job.metadata.name or ""
    labels = job.spec.template.metadata.labels or {}
    if job.spec.selector is None:
        return errs
    for key, want in ((LEGACY_CONTROLLER_UID, uid), (CONTROLLER_UID, uid), (LEGACY_JOB_NAME, name), (JOB_NAME, name)):
        if key in labels and labels[key] != want:
            errs.append(invalid(f"spec.template.metadata.labels[{key}]", labels[key], f"must be '{want}'"))
    if (job.spec.selector.match_labels or {}).get(CONTROLLER_UID) != uid:
        errs.append(invalid("spec.selector.matchLabels", job.spec.selector.match_labels or {}, "`selector` not auto-generated"))
    return errs


def validate_job(job: Job) -> list[FieldError]:
    return validate_generated_selector(job) + validate_job_spec(job.spec)


# Parts of a suspended Job's template that may change before it ever ran (kube's
# JobMutableSchedulingDirectives): where its pods go, and their labels and annotations.
_SCHEDULING = ("node_selector", "tolerations", "affinity", "scheduling_gates")


def validate_job_update(job: Job, old: Job) -> list[FieldError]:
    errs = validate_job(job)
    if job.spec.selector != old.spec.selector:
        errs.append(invalid("spec.selector", job.spec.selector, FIELD_IMMUTABLE))
    for name in ("completion_mode", "pod_failure_policy", "success_policy", "backoff_limit_per_index", "managed_by"):
        if getattr(job.spec, name) != getattr(old.spec, name):
            errs.append(invalid(f"spec.{_camel(name)}", getattr(job.spec, name), FIELD_IMMUTABLE))
    if job.spec.completions != old.spec.completions:
        elastic = job.spec.completion_mode == "Indexed" and job.spec.completions == job.spec.parallelism \
            and old.spec.completions == old.spec.parallelism
        if not elastic:
            errs.append(invalid("spec.completions", job.spec.completions, FIELD_IMMUTABLE))
    if job.spec.template != old.spec.template and not _mutable_template_change(job, old):
        errs.append(invalid("spec.template", job.spec.template, FIELD_IMMUTABLE))
    return errs


def _mutable_template_change(job: Job, old: Job) -> bool:
    """Whether only the scheduling directives, labels and annotations changed, of a Job that is
    suspended and never started."""
    if not old.spec.suspend or old.status.start_time is not None:
        return False
    new_spec = job.spec.template.spec
    kept = dataclasses.replace(old.spec.template.spec, **{name: getattr(new_spec, name) for name in _SCHEDULING
                                                          if hasattr(new_spec, name)})
    return kept == new_spec


def validate_job_status(status: JobStatus) -> list[FieldError]:
    errs: list[FieldError] = []
    for name in ("active", "succeeded", "failed", "terminating", "ready"):
        errs += _non_negative(getattr(status, name), f"status.{name}")
    return errs


def validate_cron_job(cron_job: CronJob, old: CronJob | None = None) -> list[FieldError]:
    errs: list[FieldError] = []
    name = cron_job.metadata.name or ""
    if len(name) > MAX_CRON_JOB_NAME:
        errs.append(invalid("metadata.name", name, f"must be no more than {MAX_CRON_JOB_NAME} characters"))
    return errs + validate_cron_job_spec(cron_job.spec, old.spec if old is not None else None)


def validate_cron_job_spec(spec: CronJobSpec, old: CronJobSpec | None) -> list[FieldError]:
    errs: list[FieldError] = []
    if not spec.schedule:
        errs.append(required("spec.schedule"))
    else:
        try:
            cron.parse(spec.schedule)
        except cron.ScheduleError as err:
            errs.append(invalid("spec.schedule", spec.schedule, str(err)))
        tz_allowed = old is not None and "TZ" in old.schedule
        if tz_allowed and "TZ" in spec.schedule and spec.time_zone is not None:
            errs.append(invalid("spec.schedule", spec.schedule, "cannot use both timeZone field and TZ or CRON_TZ in schedule"))
        elif not tz_allowed and "TZ" in spec.schedule:
            errs.append(invalid("spec.schedule", spec.schedule, "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"))
    if spec.time_zone is not None:
        errs += _time_zone(spec.time_zone)
    errs += _non_negative(spec.starting_deadline_seconds, "spec.startingDeadlineSeconds")
    if not spec.concurrency_policy:
        errs.append(required("spec.concurrencyPolicy"))
    elif spec.concurrency_policy not in CONCURRENCY_POLICIES:
        errs.append(not_supported("spec.concurrencyPolicy", spec.concurrency_policy, CONCURRENCY_POLICIES))
    errs += _non_negative(spec.successful_jobs_history_limit, "spec.successfulJobsHistoryLimit")
    errs += _non_negative(spec.failed_jobs_history_limit, "spec.failedJobsHistoryLimit")
    template = spec.job_template.spec
    errs += validate_job_spec(template, "spec.jobTemplate.spec", template_only_selector=True)
    if template.manual_selector:
        errs.append(not_supported("spec.jobTemplate.spec.manualSelector", template.manual_selector, ["nil", "false"]))
    return errs


def _time_zone(zone: str) -> list[FieldError]:
    if not zone:
        return [invalid("spec.timeZone", zone, "timeZone must be nil or non-empty string")]
    if zone.lower() == "local":
        return [invalid("spec.timeZone", zone, "timeZone must be an explicit time zone as defined in https://www.iana.org/time-zones")]
    try:
        cron.load_zone(zone)
    except cron.ScheduleError as err:
        return [invalid("spec.timeZone", zone, str(err))]
    return []
