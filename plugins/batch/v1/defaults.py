"""batch/v1 defaulting (``pkg/apis/batch/v1/defaults.go``); a template's spec gets what every
PodSpec gets (``SetObjectDefaults_Job``, ``SetObjectDefaults_CronJob``)."""

from __future__ import annotations

from typing import Any

from kplane.plugins.core.v1.defaults import default_pod_spec

MAX_INT32 = 2**31 - 1


def _child(obj: dict[str, Any], key: str) -> dict[str, Any]:
    if obj.get(key) is None:
        obj[key] = {}
    return obj[key]


def default_job_spec(spec: dict[str, Any]) -> None:
    """``SetDefaults_Job``'s spec part, shared with a CronJob's jobTemplate."""
    if spec.get("completions") is None and spec.get("parallelism") is None:
        spec["completions"] = 1
    if spec.get("parallelism") is None:
        spec["parallelism"] = 1
    if spec.get("backoff_limit") is None:
        spec["backoff_limit"] = MAX_INT32 if spec.get("backoff_limit_per_index") is not None else 6
    if spec.get("completion_mode") is None:
        spec["completion_mode"] = "NonIndexed"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    policy = spec.get("pod_failure_policy")
    for rule in (policy or {}).get("rules") or []:
        for pattern in rule.get("on_pod_conditions") or []:
            if not pattern.get("status"):
                pattern["status"] = "True"
    if spec.get("pod_replacement_policy") is None:
        spec["pod_replacement_policy"] = "Failed" if policy is not None else "TerminatingOrFailed"
    template = _child(spec, "template")
    default_pod_spec(_child(template, "spec"))


def default_job(job: dict[str, Any]) -> None:
    default_job_spec(_child(job, "spec"))


def default_cron_job(cron_job: dict[str, Any]) -> None:
    spec = _child(cron_job, "spec")
    if not spec.get("concurrency_policy"):
        spec["concurrency_policy"] = "Allow"
    if spec.get("suspend") is None:
        spec["suspend"] = False
    if spec.get("successful_jobs_history_limit") is None:
        spec["successful_jobs_history_limit"] = 3
    if spec.get("failed_jobs_history_limit") is None:
        spec["failed_jobs_history_limit"] = 1
    default_job_spec(_child(_child(spec, "job_template"), "spec"))
