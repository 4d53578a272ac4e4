"""Wire schemas of batch/v1: Job and CronJob."""

from __future__ import annotations

from kplane.api import LabelSelectorSchema, ObjectMetaSchema, Schema, fields
from kplane.plugins.core.v1.schemas import ObjectReferenceSchema, PodTemplateSpecSchema

META = {"description": "Standard object metadata: name, namespace, labels, annotations, and what the server records about the object."}


class PodFailurePolicyOnExitCodesRequirementSchema(Schema):
    """Which container exit codes a pod failure policy rule matches."""

    container_name = fields.Str(metadata={"description": "Only this container's exit code counts; all containers when unset."})
    operator = fields.Str(metadata={"omitempty": False, "description": "In or NotIn: whether the exit code must be among values or not."})
    values = fields.List(fields.Int32(), metadata={"list_type": "set", "description": (
        "The exit codes, sorted and without repeats, at most 255; In may not list 0."
    )})


class PodFailurePolicyOnPodConditionsPatternSchema(Schema):
    """A pod condition a pod failure policy rule matches."""

    type = fields.Str(metadata={"omitempty": False, "description": "The pod condition's type, such as DisruptionTarget."})
    status = fields.Str(metadata={"omitempty": False, "description": "The condition's status; defaults to True."})


class PodFailurePolicyRuleSchema(Schema):
    """What to do with a failed pod that matches: exactly one of onExitCodes and onPodConditions."""

    action = fields.Str(metadata={"omitempty": False, "description": (
        "FailJob fails the Job at once; FailIndex fails the pod's index; Ignore does not count the failure "
        "towards backoffLimit; Count counts it as usual."
    )})
    on_exit_codes = fields.Nested(PodFailurePolicyOnExitCodesRequirementSchema, metadata={"pointer": True, "description": (
        "Matches when a container exited with one of the given codes."
    )})
    on_pod_conditions = fields.List(fields.Nested(PodFailurePolicyOnPodConditionsPatternSchema), metadata={
        "list_type": "atomic", "description": "Matches when the pod has one of these conditions."})


class PodFailurePolicySchema(Schema):
    """How failed pods of a Job are handled, by rules tried in order; the first that matches decides."""

    rules = fields.List(fields.Nested(PodFailurePolicyRuleSchema), metadata={"list_type": "atomic", "omitempty": False,
                                                                               "description": "At most 20 rules."})


class SuccessPolicyRuleSchema(Schema):
    """When an Indexed Job counts as succeeded before all its indexes did."""

    succeeded_indexes = fields.Str(metadata={"description": "Indexes that must succeed, as \"1,3-5,7\"."})
    succeeded_count = fields.Int32(metadata={"description": "How many of those indexes must succeed."})


class SuccessPolicySchema(Schema):
    """Rules that declare an Indexed Job succeeded early."""

    rules = fields.List(fields.Nested(SuccessPolicyRuleSchema), metadata={"list_type": "atomic", "omitempty": False,
                                                                            "description": "At most 20 rules."})


class JobSpecSchema(Schema):
    """The desired state of a Job."""

    parallelism = fields.Int32(metadata={"description": "How many pods may run at once. Defaults to 1."})
    completions = fields.Int32(metadata={"description": (
        "How many pods must succeed. Unset: the first success, once no pod runs, completes the Job."
    )})
    active_deadline_seconds = fields.Int(metadata={"description": (
        "Seconds from startTime the Job may run before its pods are stopped and it fails with reason "
        "DeadlineExceeded."
    )})
    pod_failure_policy = fields.Nested(PodFailurePolicySchema, metadata={"pointer": True, "description": (
        "How failed pods are handled; needs restartPolicy Never."
    )})
    success_policy = fields.Nested(SuccessPolicySchema, metadata={"pointer": True, "description": (
        "When an Indexed Job succeeds before all its indexes did."
    )})
    backoff_limit = fields.Int32(metadata={"description": "How many pod failures the Job tolerates before it fails. Defaults to 6."})
    backoff_limit_per_index = fields.Int32(metadata={"description": "Failures tolerated per index of an Indexed Job."})
    max_failed_indexes = fields.Int32(metadata={"description": "Failed indexes tolerated before the Job fails, with backoffLimitPerIndex."})
    selector = fields.Nested(LabelSelectorSchema, metadata={"map_type": "atomic", "pointer": True, "description": (
        "Which pods belong to the Job. Normally the server generates it from the Job's uid."
    )})
    manual_selector = fields.Bool(metadata={"description": (
        "True: the selector and the template's labels are the client's, not generated. Leave it unset."
    )})
    template = fields.Nested(PodTemplateSpecSchema, metadata={"description": (
        "The pods to run; restartPolicy must be Never or OnFailure."
    )})
    ttl_seconds_after_finished = fields.Int32(metadata={"description": (
        "Seconds after the Job finished (Complete or Failed) when it is deleted, with its pods."
    )})
    completion_mode = fields.Str(metadata={"description": (
        "NonIndexed (the default): any completions successes complete it; Indexed: each index 0 to "
        "completions-1 must succeed once, and pods carry their index."
    )})
    suspend = fields.Bool(metadata={"description": "While true no pods run: active ones are deleted. Defaults to false."})
    pod_replacement_policy = fields.Str(metadata={"description": (
        "TerminatingOrFailed: replace a pod as soon as it is terminating; Failed: only once it has failed."
    )})
    managed_by = fields.Str(metadata={"description": (
        "The controller managing the Job; the built-in one manages those without it or with kubernetes.io/job-controller."
    )})


class JobConditionSchema(Schema):
    """One aspect of a Job's state at a point in time."""

    type = fields.Str(metadata={"omitempty": False, "description": (
        "Complete, Failed, Suspended, FailureTarget or SuccessCriteriaMet."
    )})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_probe_time = fields.Time(metadata={"description": "When the condition was last checked."})
    last_transition_time = fields.Time(metadata={"description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class UncountedTerminatedPodsSchema(Schema):
    """Pods that finished but are not yet counted in succeeded or failed (their finalizer is still being removed)."""

    succeeded = fields.List(fields.Str(), metadata={"list_type": "set", "description": "UIDs of succeeded pods."})
    failed = fields.List(fields.Str(), metadata={"list_type": "set", "description": "UIDs of failed pods."})


class JobStatusSchema(Schema):
    """The observed state of a Job, written by the job controller."""

    conditions = fields.List(fields.Nested(JobConditionSchema), metadata=fields.merge_by("type", list_type="atomic", description=(
        "The latest observations of the Job's state; Complete or Failed once it finished."
    )))
    start_time = fields.Time(metadata={"description": "When the controller started the Job (again after a resume)."})
    completion_time = fields.Time(metadata={"description": "When the Job completed; only for a Complete one."})
    active = fields.Int32(metadata={"description": "Pods pending or running and not terminating."})
    succeeded = fields.Int32(metadata={"description": "Pods that succeeded."})
    failed = fields.Int32(metadata={"description": "Pods that failed."})
    terminating = fields.Int32(metadata={"description": "Pods terminating: being deleted, not yet finished."})
    completed_indexes = fields.Str(metadata={"description": "Indexes of an Indexed Job that succeeded, as \"1,3-5,7\"."})
    failed_indexes = fields.Str(metadata={"description": "Indexes that failed, with backoffLimitPerIndex."})
    uncounted_terminated_pods = fields.Nested(UncountedTerminatedPodsSchema, metadata={"pointer": True, "description": (
        "Finished pods the controller has not counted yet."
    )})
    ready = fields.Int32(metadata={"description": "Active pods whose Ready condition is True."})


class JobSchema(Schema):
    """A Job runs pods until a number of them succeeded, retrying failures up to a limit."""

    metadata = fields.Nested(ObjectMetaSchema, metadata=META)
    spec = fields.Nested(JobSpecSchema, metadata={"description": "What to run, how many times, and how many at once."})
    status = fields.Nested(JobStatusSchema, metadata={"description": "The most recently observed state. Written by the controller."})


class JobTemplateSpecSchema(Schema):
    """The Jobs a CronJob creates."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Labels and annotations of the Jobs created."})
    spec = fields.Nested(JobSpecSchema, metadata={"description": "The spec of the Jobs created."})


class CronJobSpecSchema(Schema):
    """When and how a CronJob runs its Jobs."""

    schedule = fields.Str(metadata={"omitempty": False, "description": (
        "When to run, in cron format: minute hour day-of-month month day-of-week, or @hourly, @daily, ..."
    )})
    time_zone = fields.Str(metadata={"description": "The time zone of the schedule (an IANA name); the controller's when unset."})
    starting_deadline_seconds = fields.Int(metadata={"description": (
        "Seconds after a scheduled time a late Job may still start; a run missed by more is skipped."
    )})
    concurrency_policy = fields.Str(metadata={"description": (
        "Allow (the default): Jobs may overlap; Forbid: skip a run while one is active; Replace: replace the active one."
    )})
    suspend = fields.Bool(metadata={"description": "While true no new Jobs start. Defaults to false."})
    job_template = fields.Nested(JobTemplateSpecSchema, metadata={"description": "The Job to create at each scheduled time."})
    successful_jobs_history_limit = fields.Int32(metadata={"description": "How many finished, successful Jobs to keep. Defaults to 3."})
    failed_jobs_history_limit = fields.Int32(metadata={"description": "How many failed Jobs to keep. Defaults to 1."})


class CronJobStatusSchema(Schema):
    """The observed state of a CronJob, written by the cronjob controller."""

    active = fields.List(fields.Nested(ObjectReferenceSchema), metadata={"list_type": "atomic", "description": "The Jobs running now."})
    last_schedule_time = fields.Time(metadata={"description": "The last time a Job was scheduled."})
    last_successful_time = fields.Time(metadata={"description": "The last time a Job completed successfully."})


class CronJobSchema(Schema):
    """A CronJob creates Jobs on a repeating schedule."""

    metadata = fields.Nested(ObjectMetaSchema, metadata=META)
    spec = fields.Nested(CronJobSpecSchema, metadata={"description": "The schedule and the Job to run."})
    status = fields.Nested(CronJobStatusSchema, metadata={"description": "The most recently observed state. Written by the controller."})
