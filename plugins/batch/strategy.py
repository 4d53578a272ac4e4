"""Strategies of the batch group (``pkg/registry/batch/{job,cronjob}/strategy.go``).

Create clears status and sets generation 1; a Job without ``manualSelector`` gets its selector
generated from its uid, and its template the labels that selector and people look for
(``batch.kubernetes.io/controller-uid``, ``batch.kubernetes.io/job-name`` and their legacy
forms); a Job without labels of its own gets its template's, as kube's defaulting gives it on
every read. Updates keep the stored status and bump the generation when the spec changed; the
status subresource changes only status.
"""

from __future__ import annotations

import copy

from kplane.api import FieldError, LabelSelector, RequestContext, Strategy
from kplane.plugins.batch import printers, validation
from kplane.plugins.batch.types import CronJob, CronJobStatus, Job, JobStatus


def generate_selector(job: Job) -> None:
    """``generateSelector``: labels the user set are kept (validation refuses wrong ones)."""
    meta = job.spec.template.metadata
    labels = dict(meta.labels or {})
    for key in (validation.LEGACY_JOB_NAME, validation.JOB_NAME):
        labels.setdefault(key, job.metadata.name or "")
    for key in (validation.LEGACY_CONTROLLER_UID, validation.CONTROLLER_UID):
        labels.setdefault(key, job.metadata.uid or "")
    meta.labels = labels
    selector = job.spec.selector or LabelSelector()
    match = dict(selector.match_labels or {})
    match.setdefault(validation.CONTROLLER_UID, job.metadata.uid or "")
    selector.match_labels = match
    job.spec.selector = selector


class JobStrategy(Strategy):
    columns = printers.JOB_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: Job) -> None:
        obj.status = JobStatus()
        obj.metadata.generation = 1
        if not obj.spec.manual_selector:
            generate_selector(obj)
        if not obj.metadata.labels and obj.spec.template.metadata.labels:
            obj.metadata.labels = copy.deepcopy(obj.spec.template.metadata.labels)

    def prepare_for_update(self, ctx: RequestContext, obj: Job, old: Job) -> None:
        obj.status = old.status
        if obj.spec != old.spec:
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: Job) -> list[FieldError]:
        return validation.validate_job(obj)

    def validate_update(self, ctx: RequestContext, obj: Job, old: Job) -> list[FieldError]:
        return validation.validate_job_update(obj, old)


class JobStatusStrategy(Strategy):
    """``/status`` of Jobs: the spec stays as stored."""

    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: Job, old: Job) -> None:
        obj.spec = old.spec

    def validate_update(self, ctx: RequestContext, obj: Job, old: Job) -> list[FieldError]:
        return validation.validate_job_status(obj.status)


class CronJobStrategy(Strategy):
    columns = printers.CRON_JOB_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: CronJob) -> None:
        obj.status = CronJobStatus()
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: CronJob, old: CronJob) -> None:
        obj.status = old.status
        if obj.spec != old.spec:
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: CronJob) -> list[FieldError]:
        return validation.validate_cron_job(obj)

    def validate_update(self, ctx: RequestContext, obj: CronJob, old: CronJob) -> list[FieldError]:
        return validation.validate_cron_job(obj, old)


class CronJobStatusStrategy(Strategy):
    """``/status`` of CronJobs: the spec stays as stored."""

    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: CronJob, old: CronJob) -> None:
        obj.spec = old.spec
