"""Table columns of the batch kinds, as ``kubectl get`` shows them on a cluster (``printJob``,
``printCronJob`` of ``pkg/printers/internalversion``)."""

from __future__ import annotations

import time
from typing import Any

from kplane.api import AGE, NAME, Column, age, clock, dig, format_label_selector, get_condition, human_duration

Obj = dict[str, Any]


def _has(obj: Obj, kind: str) -> bool:
    return (get_condition(obj.get("status") or {}, kind) or {}).get("status") == "True"


def job_status(obj: Obj) -> str:
    """What the Job came to, in printJob's order of precedence."""
    if _has(obj, "Complete"):
        return "Complete"
    if _has(obj, "Failed"):
        return "Failed"
    if obj["metadata"].get("deletionTimestamp"):
        return "Terminating"
    for kind in ("Suspended", "FailureTarget", "SuccessCriteriaMet"):
        if _has(obj, kind):
            return kind
    return "Running"


def _completions(obj: Obj) -> str:
    succeeded = dig(obj, "status.succeeded", 0)
    completions = dig(obj, "spec.completions")
    if completions is not None:
        return f"{succeeded}/{completions}"
    parallelism = dig(obj, "spec.parallelism", 0)
    return f"{succeeded}/1 of {parallelism}" if parallelism > 1 else f"{succeeded}/1"


def _duration(obj: Obj) -> str:
    started, completed = dig(obj, "status.startTime"), dig(obj, "status.completionTime")
    if not started:
        return ""
    end = clock.epoch(completed) if completed else time.time()
    return human_duration(end - clock.epoch(started))


def _containers(spec: Obj) -> list[Obj]:
    return spec.get("containers") or []


def _wide(template_spec: str, selector: str) -> tuple[Column, Column, Column]:
    return (
        Column("Containers", "string", lambda o: ",".join(c.get("name", "") for c in _containers(dig(o, template_spec, {}))),
               priority=1, description="Names of each container in the template."),
        Column("Images", "string", lambda o: ",".join(c.get("image", "") for c in _containers(dig(o, template_spec, {}))),
               priority=1, description="Images referenced by each container in the template."),
        Column("Selector", "string", lambda o: format_label_selector(dig(o, selector)) or "<none>", priority=1,
               description="A label query over pods that should match the pod count. Normally, the system sets this field for you."),
    )


JOB_COLUMNS = (
    NAME,
    Column("Status", "string", job_status, description="Status of the job."),
    Column("Completions", "string", _completions, description="The number of pods which reached phase Succeeded."),
    Column("Duration", "string", _duration, description="Time required to complete the job."),
    AGE,
    *_wide("spec.template.spec", "spec.selector"),
)


def _last_schedule(obj: Obj) -> str:
    last = dig(obj, "status.lastScheduleTime")
    return age(last) if last else "<none>"


CRON_JOB_COLUMNS = (
    NAME,
    Column("Schedule", "string", lambda o: dig(o, "spec.schedule", ""), description="The schedule in Cron format, see https://en.wikipedia.org/wiki/Cron."),
    Column("Timezone", "string", lambda o: dig(o, "spec.timeZone") or "<none>", description="The time zone name for the given schedule."),
    Column("Suspend", "boolean", lambda o: bool(dig(o, "spec.suspend", False)), description="This flag tells the controller to suspend subsequent executions."),
    Column("Active", "integer", lambda o: len(dig(o, "status.active", [])), description="A list of pointers to currently running jobs."),
    Column("Last Schedule", "string", _last_schedule, description="Information when was the last time the job was successfully scheduled."),
    AGE,
    *_wide("spec.jobTemplate.spec.template.spec", "spec.jobTemplate.spec.selector"),
)
