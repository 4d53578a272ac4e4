"""The batch API group: Job and CronJob at batch/v1, the Job, CronJob and TTL-after-finished
controllers.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from typing import Any

from kplane.api import ControllerManager, PluginOptions, Registry, Scheme, ServerConfig, hookimpl, parse_duration
from kplane.plugins.batch import strategy, types
from kplane.plugins.batch.controllers.cronjob import CronJobController
from kplane.plugins.batch.controllers.job import JobController
from kplane.plugins.batch.controllers.job.controller import DEFAULT_POD_FAILURE_BACKOFF
from kplane.plugins.batch.controllers.ttl import TTLAfterFinishedController
from kplane.plugins.batch.v1 import defaults, protobuf, schemas

GROUP = "batch"
POD_FAILURE_BACKOFF = "job_pod_failure_backoff"


def _backoff(text: str) -> float:
    """A Go duration of at least 100ms (argparse names this function in its message)."""
    seconds = parse_duration(text)
    if not 0.1 <= seconds <= 600:
        raise ValueError(text)
    return seconds


@hookimpl
def kplane_add_options(parser: PluginOptions) -> None:
    parser.add_argument("--job-pod-failure-backoff", dest=POD_FAILURE_BACKOFF, type=_backoff, default=DEFAULT_POD_FAILURE_BACKOFF,
                        metavar="DURATION",
                        help="how long the Job controller waits before replacing a failed pod, doubled per failure since "
                             f"the last success, at most 10m (default {DEFAULT_POD_FAILURE_BACKOFF:g}s, as kube's)")


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="Job", plural="jobs", internal=types.Job, versions={"v1": schemas.JobSchema},
                    storage_version="v1", categories=["all"], plugin=plugin_name)
    scheme.add_kind(group=GROUP, kind="CronJob", plural="cronjobs", internal=types.CronJob, versions={"v1": schemas.CronJobSchema},
                    storage_version="v1", short_names=["cj"], categories=["all"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "Job", defaults.default_job)
    scheme.add_defaulter(GROUP, "v1", "CronJob", defaults.default_cron_job)
    scheme.add_protobuf(GROUP, "v1", "Job", protobuf.JOB)  # `kubectl create job`
    scheme.add_protobuf(GROUP, "v1", "CronJob", protobuf.CRON_JOB)  # `kubectl create cronjob`


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "jobs", strategy.JobStrategy())
    registry.add_strategy(GROUP, "jobs", strategy.JobStatusStrategy(), subresource="status")
    registry.add_strategy(GROUP, "cronjobs", strategy.CronJobStrategy())
    registry.add_strategy(GROUP, "cronjobs", strategy.CronJobStatusStrategy(), subresource="status")


def _settings(config: ServerConfig | None) -> dict[str, Any]:
    return ((config.plugin_settings if config is not None else None) or {}).get("batch") or {}


@hookimpl
def kplane_register_controllers(manager: ControllerManager, config: ServerConfig | None) -> None:
    backoff = float(_settings(config).get(POD_FAILURE_BACKOFF) or DEFAULT_POD_FAILURE_BACKOFF)
    manager.add("job", JobController(manager.client_for("job-controller"), manager.informers, pod_failure_backoff=backoff))
    manager.add("cronjob", CronJobController(manager.client_for("cronjob-controller"), manager.informers))
    manager.add("ttl-after-finished", TTLAfterFinishedController(manager.client_for("ttl-after-finished-controller"), manager.informers))
