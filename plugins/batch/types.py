"""Internal types of the batch group: Job and CronJob (``k8s.io/api/batch/v1``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import LabelSelector, ObjectMeta
from kplane.plugins.core.types import ObjectReference, PodTemplateSpec


@dataclass(slots=True)
class PodFailurePolicyOnExitCodesRequirement:
    container_name: str | None = None
    operator: str = ""
    values: list[int] | None = None


@dataclass(slots=True)
class PodFailurePolicyOnPodConditionsPattern:
    type: str = ""
    status: str = ""


@dataclass(slots=True)
class PodFailurePolicyRule:
    action: str = ""
    on_exit_codes: PodFailurePolicyOnExitCodesRequirement | None = None
    on_pod_conditions: list[PodFailurePolicyOnPodConditionsPattern] | None = None


@dataclass(slots=True)
class PodFailurePolicy:
    rules: list[PodFailurePolicyRule] | None = None


@dataclass(slots=True)
class SuccessPolicyRule:
    succeeded_indexes: str | None = None
    succeeded_count: int | None = None


@dataclass(slots=True)
class SuccessPolicy:
    rules: list[SuccessPolicyRule] | None = None


@dataclass(slots=True)
class JobSpec:
    parallelism: int | None = None
    completions: int | None = None
    active_deadline_seconds: int | None = None
    pod_failure_policy: PodFailurePolicy | None = None
    success_policy: SuccessPolicy | None = None
    backoff_limit: int | None = None
    backoff_limit_per_index: int | None = None
    max_failed_indexes: int | None = None
    selector: LabelSelector | None = None
    manual_selector: bool | None = None
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)
    ttl_seconds_after_finished: int | None = None
    completion_mode: str | None = None
    suspend: bool | None = None
    pod_replacement_policy: str | None = None
    managed_by: str | None = None


@dataclass(slots=True)
class JobCondition:
    type: str = ""
    status: str = ""
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class UncountedTerminatedPods:
    succeeded: list[str] | None = None
    failed: list[str] | None = None


@dataclass(slots=True)
class JobStatus:
    conditions: list[JobCondition] | None = None
    start_time: str | None = None
    completion_time: str | None = None
    active: int | None = None
    succeeded: int | None = None
    failed: int | None = None
    terminating: int | None = None
    completed_indexes: str | None = None
    failed_indexes: str | None = None
    uncounted_terminated_pods: UncountedTerminatedPods | None = None
    ready: int | None = None


@dataclass(slots=True)
class Job:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: JobSpec = field(default_factory=JobSpec)
    status: JobStatus = field(default_factory=JobStatus)


@dataclass(slots=True)
class JobTemplateSpec:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: JobSpec = field(default_factory=JobSpec)


@dataclass(slots=True)
class CronJobSpec:
    schedule: str = ""
    time_zone: str | None = None
    starting_deadline_seconds: int | None = None
    concurrency_policy: str | None = None
    suspend: bool | None = None
    job_template: JobTemplateSpec = field(default_factory=JobTemplateSpec)
    successful_jobs_history_limit: int | None = None
    failed_jobs_history_limit: int | None = None


@dataclass(slots=True)
class CronJobStatus:
    active: list[ObjectReference] | None = None
    last_schedule_time: str | None = None
    last_successful_time: str | None = None


@dataclass(slots=True)
class CronJob:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: CronJobSpec = field(default_factory=CronJobSpec)
    status: CronJobStatus = field(default_factory=CronJobStatus)
