"""batch/v1 Jobs and CronJobs against a real server with its controllers and simulated nodes:
validation and defaults, completions and parallelism, failures and backoffLimit, deadlines,
Indexed Jobs, suspend, podFailurePolicy, TTL after finished, CronJob runs, concurrency and
history; plus the pure parts (the cron parser, missed schedules, index intervals)."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator
from datetime import UTC, datetime, timedelta
from typing import Any
from zoneinfo import ZoneInfo

import aiohttp
import pytest
import pytest_asyncio

from kplane.core.meta import clock
from kplane.core.serving.apiserver import APIServer
from kplane.plugins.batch import cron
from kplane.plugins.batch.controllers.cronjob import most_recent_schedule
from kplane.plugins.batch.indexes import Indexes, interval_error
from tests.conftest import Client
from tests.servers import server_config
from tests.waiting import eventually

JOBS = "/apis/batch/v1/namespaces/default/jobs"
CRON_JOBS = "/apis/batch/v1/namespaces/default/cronjobs"
PODS = "/api/v1/namespaces/default/pods"
EVENTS = "/api/v1/namespaces/default/events"
SHARED = pytest.mark.asyncio(loop_scope="module")  # the module's server runs on the module's loop


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def api(tmp_path_factory: pytest.TempPathFactory) -> AsyncIterator[Client]:
    """One server for the module: short container run times and back-offs, so Jobs end quickly."""
    srv = APIServer(server_config(data_dir=tmp_path_factory.mktemp("jobs") / "state", port=0, run_controllers=True,
                                  plugin_settings={"core": {"simulated_run_seconds": 0.2, "simulated_restart_backoff": 0.2},
                                                   "batch": {"job_pod_failure_backoff": 0.1}}))
    await srv.start()
    try:
        async with aiohttp.ClientSession(base_url=srv.url) as session:
            yield Client(session)
    finally:
        await srv.stop()


def job(name: str, image: str = "busybox", policy: str = "Never", run: str = "0.2", **spec: Any) -> dict[str, Any]:
    return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name},
            "spec": {"template": {"metadata": {"annotations": {"kplane.io/run-seconds": run}},
                                  "spec": {"restartPolicy": policy, "containers": [{"name": "main", "image": image}]}}, **spec}}


async def create(api: Client, body: dict[str, Any], path: str = JOBS) -> dict[str, Any]:
    reply = await api.post(path, body)
    assert reply.status == 201, reply
    return reply.body


def condition(obj: dict[str, Any], kind: str) -> dict[str, Any] | None:
    return next((c for c in (obj.get("status") or {}).get("conditions") or [] if c["type"] == kind and c["status"] == "True"), None)


async def finished(api: Client, name: str, timeout: float = 15.0) -> dict[str, Any]:
    async def check() -> dict[str, Any] | None:
        body = (await api.get(f"{JOBS}/{name}")).body
        return body if condition(body, "Complete") or condition(body, "Failed") else None
    return await eventually(check, timeout, what=f"job {name} to finish")


async def pods_of(api: Client, name: str) -> list[dict[str, Any]]:
    return (await api.get(PODS, params={"labelSelector": f"batch.kubernetes.io/job-name={name}"})).body["items"]


async def reasons(api: Client, name: str) -> list[str]:
    items = (await api.get(EVENTS, params={"fieldSelector": f"involvedObject.name={name}"})).body["items"]
    return [e["reason"] for e in items]


# -- validation and defaults ---------------------------------------------------------------------
@SHARED
async def test_defaults_and_the_generated_selector(api: Client) -> None:
    body = job("defaults", run="600")
    body["spec"]["suspend"] = True
    made = await create(api, body)
    uid, spec = made["metadata"]["uid"], made["spec"]
    assert (spec["completions"], spec["parallelism"], spec["backoffLimit"]) == (1, 1, 6)
    assert spec["completionMode"] == "NonIndexed" and spec["podReplacementPolicy"] == "TerminatingOrFailed"
    assert spec["selector"] == {"matchLabels": {"batch.kubernetes.io/controller-uid": uid}}
    assert spec["template"]["metadata"]["labels"] == {"batch.kubernetes.io/controller-uid": uid, "controller-uid": uid,
                                                      "batch.kubernetes.io/job-name": "defaults", "job-name": "defaults"}
    assert made["metadata"]["labels"] == spec["template"]["metadata"]["labels"]


@SHARED
@pytest.mark.parametrize(("change", "field", "detail"), [
    (lambda b: b["spec"]["template"]["spec"].update(restartPolicy="Always"), "spec.template.spec.restartPolicy",
     'Unsupported value: "Always": supported values: "OnFailure", "Never"'),
    (lambda b: b["spec"].update(completionMode="Indexed", parallelism=2), "spec.completions", "when completion mode is Indexed"),
    (lambda b: b["spec"].update(parallelism=-1), "spec.parallelism", "must be greater than or equal to 0"),
    (lambda b: b["spec"].update(manualSelector=True, selector={"matchLabels": {"a": "b"}}), "spec.template.metadata.labels",
     "`selector` does not match template `labels`"),
    (lambda b: b["spec"].update(podFailurePolicy={"rules": [{"action": "FailJob", "onExitCodes": {"operator": "In", "values": [0]}}]}),
     "spec.podFailurePolicy.rules[0].onExitCodes.values[0]", "must not be 0 for the In operator"),
])
async def test_invalid_jobs_are_refused_with_kubes_causes(api: Client, change: Any, field: str, detail: str) -> None:
    body = job("invalid")
    change(body)
    reply = await api.post(JOBS, body)
    assert reply.status == 422, reply
    causes = reply.body["details"]["causes"]
    assert any(c["field"] == field and detail in c["message"] for c in causes), causes
    assert (await api.get(f"{JOBS}/invalid")).status == 404


@SHARED
async def test_the_template_is_immutable(api: Client) -> None:
    await create(api, job("fixed", run="600"))
    patch = {"spec": {"template": {"spec": {"containers": [{"name": "main", "image": "other"}]}}}}
    reply = await api.patch(f"{JOBS}/fixed", patch, content_type="application/strategic-merge-patch+json")
    assert reply.status == 422 and "spec.template: Invalid value" in reply.body["message"] and "field is immutable" in reply.body["message"]


@SHARED
@pytest.mark.parametrize(("spec", "field", "detail"), [
    ({"schedule": "61 * * * *"}, "spec.schedule", "end of range (61) above maximum (59): 61"),
    ({"schedule": "* * *"}, "spec.schedule", "expected exactly 5 fields, found 3: [* * *]"),
    ({"schedule": "TZ=UTC * * * * *"}, "spec.schedule", "cannot use TZ or CRON_TZ in schedule, use timeZone field instead"),
    ({"schedule": "@hourly", "timeZone": "Mars/Olympus"}, "spec.timeZone", "unknown time zone Mars/Olympus"),
    ({"schedule": "@hourly", "concurrencyPolicy": "Sometimes"}, "spec.concurrencyPolicy", 'Unsupported value: "Sometimes"'),
    ({"schedule": "@every 2562048h"}, "spec.schedule", 'time: invalid duration "2562048h"'),  # past Go's int64 nanoseconds
])
async def test_invalid_cron_jobs_are_refused(api: Client, spec: dict[str, Any], field: str, detail: str) -> None:
    body = cron_job("bad", **spec)
    reply = await api.post(CRON_JOBS, body)
    assert reply.status == 422, reply
    assert any(c["field"] == field and detail in c["message"] for c in reply.body["details"]["causes"]), reply


# -- the Job controller -------------------------------------------------------------------------
@SHARED
async def test_completions_and_parallelism_complete_the_job(api: Client) -> None:
    await create(api, job("work", completions=4, parallelism=2))
    done = await finished(api, "work")
    status = done["status"]
    assert condition(done, "Complete") and condition(done, "SuccessCriteriaMet")
    assert condition(done, "Complete")["reason"] == "CompletionsReached"
    assert status["succeeded"] == 4 and "failed" not in status and status["completionTime"] >= status["startTime"]
    pods = await pods_of(api, "work")
    assert len(pods) == 4 and all(p["status"]["phase"] == "Succeeded" and not p["metadata"].get("finalizers") for p in pods)
    assert all(p["metadata"]["ownerReferences"][0]["kind"] == "Job" for p in pods)
    await eventually(lambda: _has_reason(api, "work", "Completed"), what="the Completed event")
    assert "SuccessfulCreate" in await reasons(api, "work")


@SHARED
async def test_failures_past_the_backoff_limit_fail_the_job(api: Client) -> None:
    await create(api, job("flaky", image="busybox:exit-1", run="0", backoffLimit=1))
    done = await finished(api, "flaky")
    failed = condition(done, "Failed")
    assert failed and failed["reason"] == "BackoffLimitExceeded" and failed["message"] == "Job has reached the specified backoff limit"
    assert condition(done, "FailureTarget")["reason"] == "BackoffLimitExceeded"
    assert done["status"]["failed"] == 2 and "completionTime" not in done["status"]
    await eventually(lambda: _has_reason(api, "flaky", "BackoffLimitExceeded"), what="the failure's event")


@SHARED
async def test_on_failure_restarts_count_against_the_backoff_limit(api: Client) -> None:
    await create(api, job("restarts", image="busybox:exit-1", policy="OnFailure", run="0", backoffLimit=1))
    done = await finished(api, "restarts")
    assert condition(done, "Failed")["reason"] == "BackoffLimitExceeded"
    assert await eventually(lambda: _all_gone_or_finished(api, "restarts"), what="its pods to stop")


async def _all_gone_or_finished(api: Client, name: str) -> bool:
    return all(p["status"].get("phase") in ("Succeeded", "Failed") for p in await pods_of(api, name))


@SHARED
async def test_active_deadline_fails_the_job_and_stops_its_pods(api: Client) -> None:
    await create(api, job("slow", run="600", activeDeadlineSeconds=1))
    done = await finished(api, "slow")
    assert condition(done, "Failed")["reason"] == "DeadlineExceeded"
    assert condition(done, "Failed")["message"] == "Job was active longer than specified deadline"
    assert "active" not in done["status"] and done["status"]["failed"] == 1


@SHARED
async def test_indexed_job_runs_each_index_once(api: Client) -> None:
    await create(api, job("indexed", completions=3, parallelism=3, completionMode="Indexed"))
    done = await finished(api, "indexed")
    assert done["status"]["completedIndexes"] == "0-2" and done["status"]["succeeded"] == 3
    pods = await pods_of(api, "indexed")
    indexes = sorted(p["metadata"]["annotations"]["batch.kubernetes.io/job-completion-index"] for p in pods)
    assert indexes == ["0", "1", "2"]
    pod = next(p for p in pods if p["metadata"]["labels"]["batch.kubernetes.io/job-completion-index"] == "1")
    assert pod["metadata"]["name"].startswith("indexed-1-") and pod["spec"]["hostname"] == "indexed-1"
    assert pod["spec"]["containers"][0]["env"][0]["name"] == "JOB_COMPLETION_INDEX"


async def healthz_seconds(api: Client) -> float:
    """How long /healthz takes: the controllers share the server's event loop."""
    began = time.monotonic()
    assert (await api.get("/healthz")).status == 200
    return time.monotonic() - began


@SHARED
async def test_an_indexed_job_of_two_billion_completions_costs_what_it_runs(api: Client) -> None:
    await create(api, job("vast", completions=2**31 - 1, parallelism=2, completionMode="Indexed", backoffLimitPerIndex=1))
    worst = 0.0

    async def some_done() -> str | None:
        nonlocal worst
        worst = max(worst, await healthz_seconds(api))
        done = ((await api.get(f"{JOBS}/vast")).body.get("status") or {}).get("completedIndexes") or ""
        return done if len(Indexes.parse(done, 2**31 - 1)) >= 4 else None

    done = await eventually(some_done, what="four indexes to complete")
    assert worst < 0.5, f"/healthz took {worst:.2f}s"
    assert done.startswith("0-")  # the lowest pending indexes first, as intervals
    assert (await api.delete(f"{JOBS}/vast", params={"propagationPolicy": "Background"})).status == 200
    await eventually(lambda: _no_pods(api, "vast"), what="its pods to go")


@SHARED
async def test_suspend_and_resume(api: Client) -> None:
    await create(api, job("paused", run="600", suspend=True))
    suspended = await eventually(lambda: _with_condition(api, "paused", "Suspended"), what="the Suspended condition")
    assert suspended["status"].get("active", 0) == 0 and await pods_of(api, "paused") == []
    assert (await api.patch(f"{JOBS}/paused", {"spec": {"suspend": False}})).status == 200
    resumed = await eventually(lambda: _active(api, "paused"), what="a pod to run")
    suspended_now = next(c for c in resumed["status"]["conditions"] if c["type"] == "Suspended")
    assert suspended_now["status"] == "False" and suspended_now["reason"] == "JobResumed" and resumed["status"]["startTime"]
    assert (await api.patch(f"{JOBS}/paused", {"spec": {"suspend": True}})).status == 200
    await eventually(lambda: _with_condition(api, "paused", "Suspended"), what="suspended again")
    await eventually(lambda: _no_active_pods(api, "paused"), what="its pod deleted")


async def _with_condition(api: Client, name: str, kind: str) -> dict[str, Any] | None:
    body = (await api.get(f"{JOBS}/{name}")).body
    return body if condition(body, kind) else None


async def _active(api: Client, name: str) -> dict[str, Any] | None:
    body = (await api.get(f"{JOBS}/{name}")).body
    return body if body["status"].get("active") else None


async def _no_active_pods(api: Client, name: str) -> bool:
    return not [p for p in await pods_of(api, name) if p["status"].get("phase") not in ("Succeeded", "Failed")]


@SHARED
async def test_pod_failure_policy_fail_job_and_ignore(api: Client) -> None:
    rules = [{"action": "FailJob", "onExitCodes": {"containerName": "main", "operator": "In", "values": [42]}}]
    await create(api, job("policy", image="busybox:exit-42", run="0", podFailurePolicy={"rules": rules}))
    done = await finished(api, "policy")
    failed = condition(done, "Failed")
    assert failed["reason"] == "PodFailurePolicy" and "failed with exit code 42 matching FailJob rule at index 0" in failed["message"]
    assert done["status"]["failed"] == 1
    ignore = [{"action": "Ignore", "onExitCodes": {"operator": "In", "values": [3]}}]
    await create(api, job("ignored", image="busybox:exit-3", run="0", backoffLimit=0, podFailurePolicy={"rules": ignore}))
    await eventually(lambda: _pods_at_least(api, "ignored", 3), what="ignored failures replaced")
    body = (await api.get(f"{JOBS}/ignored")).body
    assert not condition(body, "Failed") and not body["status"].get("failed")
    assert (await api.delete(f"{JOBS}/ignored", params={"propagationPolicy": "Background"})).status == 200


async def _pods_at_least(api: Client, name: str, count: int) -> bool:
    return len(await pods_of(api, name)) >= count


@SHARED
async def test_ttl_after_finished_deletes_the_job_and_its_pods(api: Client) -> None:
    await create(api, job("brief", ttlSecondsAfterFinished=0))
    await eventually(lambda: _gone(f"{JOBS}/brief", api), what="the Job to be deleted")
    await eventually(lambda: _no_pods(api, "brief"), what="its pods to go")


async def _gone(path: str, api: Client) -> bool:
    return (await api.get(path)).status == 404


async def _no_pods(api: Client, name: str) -> bool:
    return await pods_of(api, name) == []


@SHARED
async def test_deleting_a_job_releases_its_running_pods(api: Client) -> None:
    await create(api, job("doomed", run="600", parallelism=2, completions=2))
    await eventually(lambda: _active(api, "doomed"), what="pods to run")
    assert (await api.delete(f"{JOBS}/doomed", params={"propagationPolicy": "Background"})).status == 200
    await eventually(lambda: _no_pods(api, "doomed"), what="its pods, finalizer removed, to go")


# -- the CronJob controller ---------------------------------------------------------------------
def cron_job(name: str, **spec: Any) -> dict[str, Any]:
    template = {"spec": {"template": {"metadata": {"annotations": {"kplane.io/run-seconds": "0.2"}},
                                      "spec": {"restartPolicy": "Never", "containers": [{"name": "main", "image": "busybox"}]}}}}
    return {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": name},
            "spec": {"schedule": "*/5 * * * *", "jobTemplate": template, **spec}}


async def missed_a_run(api: Client, name: str, minutes: int = 11, schedule: str | None = None) -> None:
    """Tell the controller the last run was ``minutes`` ago, so that a run is due now; a second
    run within the same minute needs another ``schedule``, whose times differ from the first's."""
    if schedule is not None:
        assert (await api.patch(f"{CRON_JOBS}/{name}", {"spec": {"schedule": schedule}})).status == 200
    for _ in range(20):  # the controller writes the status too: a 409 is read again
        body = (await api.get(f"{CRON_JOBS}/{name}")).body
        body["status"]["lastScheduleTime"] = clock.at(datetime.now(UTC) - timedelta(minutes=minutes))
        written = await api.put(f"{CRON_JOBS}/{name}/status", body)
        if written.status != 409:
            break
    assert written.status == 200, written.body


async def jobs_of(api: Client, name: str) -> list[dict[str, Any]]:
    items = (await api.get(JOBS)).body["items"]
    return [j for j in items if any(r["name"] == name and r["kind"] == "CronJob" for r in j["metadata"].get("ownerReferences") or [])]


@SHARED
async def test_cron_job_runs_a_missed_schedule_and_keeps_history(api: Client) -> None:
    made = await create(api, cron_job("nightly", successfulJobsHistoryLimit=1), CRON_JOBS)
    assert made["spec"]["concurrencyPolicy"] == "Allow" and made["spec"]["failedJobsHistoryLimit"] == 1
    await missed_a_run(api, "nightly")
    first = (await eventually(lambda: jobs_of(api, "nightly"), 30, what="a Job"))[0]
    scheduled = datetime.fromisoformat(first["metadata"]["annotations"]["batch.kubernetes.io/cronjob-scheduled-timestamp"])
    assert first["metadata"]["name"] == f"nightly-{int(scheduled.timestamp()) // 60}" and scheduled.minute % 5 == 0
    done = await finished(api, first["metadata"]["name"], timeout=30)

    async def saw_it() -> dict[str, Any] | None:
        body = (await api.get(f"{CRON_JOBS}/nightly")).body
        return body if body["status"].get("lastSuccessfulTime") and not body["status"].get("active") else None
    await eventually(saw_it, 30, what="the CronJob to see its Job complete")
    # The history keeps the latest start times, and start times are whole seconds: a second run
    # starting within the first's second would tie, and kube breaks ties by name, which puts a
    # run scheduled minutes earlier first. So the second run starts a second later.
    started = clock.parse(done["status"]["startTime"])
    await asyncio.sleep(max((started + timedelta(seconds=1) - datetime.now(UTC)).total_seconds(), 0) + 0.05)
    await missed_a_run(api, "nightly", minutes=6, schedule="1-59/5 * * * *")

    async def replaced() -> list[dict[str, Any]] | None:
        jobs = await jobs_of(api, "nightly")
        names = [j["metadata"]["name"] for j in jobs if not j["metadata"].get("deletionTimestamp")]
        return jobs if names and first["metadata"]["name"] not in names else None
    await eventually(replaced, timeout=40, what="a second run, and the first deleted past the history limit")
    await eventually(lambda: _has_reason(api, "nightly", "SuccessfulDelete"), 30, what="the deletion's event")
    assert {"SuccessfulCreate", "SawCompletedJob"} <= set(await reasons(api, "nightly"))


@SHARED
async def test_an_int64_starting_deadline_is_no_deadline(api: Client) -> None:
    await create(api, cron_job("patient", startingDeadlineSeconds=2**63 - 1), CRON_JOBS)
    await missed_a_run(api, "patient")
    await eventually(lambda: jobs_of(api, "patient"), what="the missed run started")
    assert not any(r == "MissSchedule" for r in await reasons(api, "patient"))
    assert (await api.delete(f"{CRON_JOBS}/patient", params={"propagationPolicy": "Background"})).status == 200


@SHARED
async def test_forbid_skips_a_run_while_one_is_active(api: Client) -> None:
    body = cron_job("single", concurrencyPolicy="Forbid")
    body["spec"]["jobTemplate"]["spec"]["template"]["metadata"]["annotations"]["kplane.io/run-seconds"] = "600"
    await create(api, body, CRON_JOBS)
    await missed_a_run(api, "single")
    await eventually(lambda: jobs_of(api, "single"), what="a Job")
    await eventually(lambda: _cron_active(api, "single"), what="an active Job")
    await missed_a_run(api, "single", minutes=6, schedule="1-59/5 * * * *")
    await eventually(lambda: _has_reason(api, "single", "JobAlreadyActive"), what="the skipped run")
    assert len(await jobs_of(api, "single")) == 1


async def _cron_active(api: Client, name: str) -> bool:
    return bool((await api.get(f"{CRON_JOBS}/{name}")).body["status"].get("active"))


async def _has_reason(api: Client, name: str, reason: str) -> bool:
    return reason in await reasons(api, name)


@SHARED
async def test_suspended_cron_job_starts_nothing(api: Client) -> None:
    await create(api, cron_job("resting", suspend=True), CRON_JOBS)
    await missed_a_run(api, "resting")
    await create(api, job("marker"))  # the controllers have seen the status change once this Job is done
    await finished(api, "marker")
    assert await jobs_of(api, "resting") == []


# -- pure parts ---------------------------------------------------------------------------------
def test_cron_parser_follows_robfig() -> None:
    schedule = cron.parse("*/15 9-17 * * mon-fri")
    friday = datetime(2024, 3, 8, 17, 50, tzinfo=UTC)
    assert schedule.next(friday) == datetime(2024, 3, 11, 9, 0, tzinfo=UTC)
    assert cron.parse("@monthly").next(friday) == datetime(2024, 4, 1, tzinfo=UTC)
    assert cron.parse("0 0 13 * 5").next(friday) == datetime(2024, 3, 13, tzinfo=UTC)  # day of month OR day of week
    assert cron.parse("0 0 * * 5").next(friday) == datetime(2024, 3, 15, tzinfo=UTC)
    assert cron.parse("30 2 * * *").next(friday, ZoneInfo("Europe/Berlin")) == datetime(2024, 3, 9, 1, 30, tzinfo=UTC)
    assert cron.parse("@every 90s").next(friday) == friday + timedelta(seconds=90)
    assert cron.parse("0 0 30 2 *").next(friday) is None
    for spec, message in (("@often", "unrecognized descriptor: @often"), ("1-2-3 * * * *", "too many hyphens: 1-2-3"),
                          ("5-1 * * * *", "beginning of range (5) beyond end of range (1): 5-1"),
                          ("x * * * *", 'failed to parse int from x: strconv.Atoi: parsing "x": invalid syntax')):
        with pytest.raises(cron.ScheduleError, match=rf"^{message.replace('(', '[(]').replace(')', '[)]')}"):
            cron.parse(spec)


def test_most_recent_schedule_skips_to_the_latest_missed_time() -> None:
    now = datetime(2024, 3, 8, 12, 7, 30, tzinfo=UTC)
    created = {"metadata": {"creationTimestamp": "2024-03-01T00:00:00Z"}, "spec": {}, "status": {}}
    found, missed = most_recent_schedule(created, now, cron.parse("*/5 * * * *"), UTC)
    assert found == datetime(2024, 3, 8, 12, 5, tzinfo=UTC) and missed > 100
    late = {**created, "spec": {"startingDeadlineSeconds": 60}}
    assert most_recent_schedule(late, now, cron.parse("*/5 * * * *"), UTC) == (None, 0)
    recent = {**created, "status": {"lastScheduleTime": "2024-03-08T12:05:00Z"}}
    assert most_recent_schedule(recent, now, cron.parse("*/5 * * * *"), UTC) == (None, 0)


def test_index_intervals() -> None:
    done = Indexes.parse("5,0-2,x,7-9,40", 8)  # sorted, cut at completions, the unparseable left out
    assert str(done) == "0-2,5,7" and len(done) == 5 and 5 in done and 6 not in done
    done.add(6)
    done.add(3)
    assert str(done) == "0-3,5-7" and done.first_missing(3, 8, skip={4}) == []
    huge = Indexes.parse("0-2147483640,2147483642", 2**31 - 1)  # one pair, not two billion ints
    assert len(huge) == 2147483642 and huge.first_missing(5, 2**31 - 1, skip={2147483641}) == [2147483643, 2147483644, 2147483645, 2147483646]
    assert interval_error("1,0", 5) == "non-increasing order, previous: 1, current: 0"
    assert interval_error("0-9", 5) == "too large: 9"
