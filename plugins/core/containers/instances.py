"""The Pod and container a streaming request names, and the container's instances as the kubelet
knows them: which one a log or an attach reads, when it started and ended, and what it wrote.

The container is picked as kube-apiserver's ``LogLocation``/``streamLocation`` pick it (the only
one, or the one named, with their 400 messages); the instance as the kubelet's
``validateContainerLogStatus`` does (running, terminated, the last terminated one, or a 400 saying
why there is none). An instance's output is its main process's (:mod:`.process`) from its
``startedAt`` on, each line stamped with the moment it was written.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass, replace
from datetime import UTC, datetime
from typing import Any, cast

from kplane.api import Registry, RequestContext, Store, WatchOptions, clock, errors, parse_field_selector
from kplane.plugins.core.containers import files, process

Obj = dict[str, Any]
#: Each line of an instance is a little later than the one before, so their order survives sorting.
LINE_STEP = 1e-6


async def get_pod(registry: Registry, ctx: RequestContext, name: str) -> Obj:
    return (await _pods(registry).get(replace(ctx, resource="pods", subresource=""), name)).obj


def _pods(registry: Registry) -> Store:
    store = registry.store("", "pods")
    assert store is not None  # the core plugin serves pods
    return store


def pick_container(pod: Obj, name: str) -> Obj:
    """The container ``name`` of ``pod`` (an init container too), or its only one."""
    spec = pod.get("spec") or {}
    containers, inits = spec.get("containers") or [], spec.get("initContainers") or []
    pod_name = (pod.get("metadata") or {}).get("name")
    if not name:
        if len(containers) == 1:
            return cast(Obj, containers[0])
        if not containers:
            raise errors.bad_request(f"a container name must be specified for pod {pod_name}")
        message = f"a container name must be specified for pod {pod_name}, choose one of: [{' '.join(c['name'] for c in containers)}]"
        if inits:
            message += f" or one of the init containers: [{' '.join(c['name'] for c in inits)}]"
        raise errors.bad_request(message)
    for container in [*containers, *inits]:
        if container.get("name") == name:
            return cast(Obj, container)
    raise errors.bad_request(f"container {name} is not valid for pod {pod_name}")


def container_status(pod: Obj, name: str) -> Obj | None:
    status = pod.get("status") or {}
    for entry in [*(status.get("containerStatuses") or []), *(status.get("initContainerStatuses") or [])]:
        if entry.get("name") == name:
            return cast(Obj, entry)
    return None


@dataclass(frozen=True, slots=True)
class Instance:
    """One run of a container: its id, when it started, and when it ended (None: it runs)."""

    container_id: str
    started: float
    finished: float | None


def instance(pod: Obj, name: str, *, previous: bool) -> Instance:
    """The instance a log of container ``name`` reads, as the kubelet picks it; 400 when there is none."""
    pod_name = (pod.get("metadata") or {}).get("name")
    status = container_status(pod, name)
    if status is None:
        raise errors.bad_request(f'container "{name}" in pod "{pod_name}" is not available')
    state, last = status.get("state") or {}, (status.get("lastState") or {}).get("terminated")
    if previous:
        if not last or not last.get("containerID"):
            raise errors.bad_request(f'previous terminated container "{name}" in pod "{pod_name}" not found')
        return _of(last)
    if state.get("running"):
        return Instance(str(status.get("containerID") or ""), _epoch(state["running"].get("startedAt")), None)
    if state.get("terminated"):
        terminated = state["terminated"]
        if terminated.get("containerID") or status.get("containerID"):
            return _of({"containerID": status.get("containerID"), **terminated})
        if last and last.get("containerID"):
            return _of(last)
        raise errors.bad_request(f'container "{name}" in pod "{pod_name}" is terminated')
    if last and last.get("containerID"):
        return _of(last)
    reason = (state.get("waiting") or {}).get("reason") or "ContainerCreating"
    why = {"ErrImagePull": "image can't be pulled", "ImagePullBackOff": "trying and failing to pull image"}.get(reason, reason)
    raise errors.bad_request(f'container "{name}" in pod "{pod_name}" is waiting to start: {why}')


def _epoch(moment: str | None) -> float:
    return clock.epoch(moment) if moment else clock.epoch(clock.now())


def _of(terminated: Obj) -> Instance:
    return Instance(str(terminated.get("containerID") or ""), _epoch(terminated.get("startedAt")),
                    _epoch(terminated.get("finishedAt") or terminated.get("startedAt")))


def same_instance(pod: Obj, name: str, known: Instance) -> Instance | None:
    """The instance ``known`` as ``pod`` now reports it (its end, once it has ended); None when
    it is no longer the current one (the container restarted)."""
    status = container_status(pod, name) or {}
    state = status.get("state") or {}
    if state.get("running") and str(status.get("containerID") or "") == known.container_id:
        return known
    for terminated in (state.get("terminated"), (status.get("lastState") or {}).get("terminated")):
        if terminated and str(terminated.get("containerID") or status.get("containerID") or "") == known.container_id:
            return replace(known, finished=_epoch(terminated.get("finishedAt")))
    return None


@dataclass(frozen=True, slots=True)
class Line:
    at: float  # seconds since the epoch
    stream: int
    data: bytes


def output(pod: Obj, container: Obj, sources: files.Sources, run: Instance) -> list[Line]:
    """What ``run`` of ``container`` wrote, line by line, each stamped; an ended run's lines are
    no later than its end (a process's run time the API server does not know ends there)."""
    ran = process.main_process(pod, container, default_seconds=process.MAX_RUN_SECONDS, sources=sources)
    lines: list[Line] = []
    for chunk in ran.output:
        at = run.started + chunk.seconds
        for piece in chunk.data.splitlines(keepends=True):
            at = max(at, lines[-1].at + LINE_STEP) if lines else at
            lines.append(Line(min(at, run.finished) if run.finished is not None else at, chunk.stream, piece))
    return lines


def timestamp(at: float) -> str:
    """RFC 3339 with nanoseconds, trailing zeros trimmed, as Go's ``time.RFC3339Nano``."""
    whole = int(at)
    nanos = int(round((at - whole) * 1e9))
    if nanos >= 1_000_000_000:
        whole, nanos = whole + 1, nanos - 1_000_000_000
    base = datetime.fromtimestamp(whole, UTC).strftime("%Y-%m-%dT%H:%M:%S")
    return f"{base}.{nanos:09d}".rstrip("0") + "Z" if nanos else base + "Z"


async def pod_changes(registry: Registry, ctx: RequestContext, pod: Obj) -> AsyncIterator[Obj | None]:
    """``pod`` each time it changes from now on; None once it is gone."""
    meta = pod.get("metadata") or {}
    options = WatchOptions(field_selector=parse_field_selector(f"metadata.name={meta.get('name')}"),
                           resource_version=str(meta.get("resourceVersion") or ""))
    events = await _pods(registry).watch(replace(ctx, resource="pods", subresource=""), options)
    try:
        async for event in events:
            if event.type == "DELETED":
                yield None
                return
            yield event.obj.obj
    finally:
        with contextlib.suppress(Exception):
            await events.aclose()  # type: ignore[attr-defined]


async def next_change(changes: AsyncIterator[Obj | None], pending: asyncio.Task[Obj | None] | None,
                      timeout: float | None) -> tuple[bool, Obj | None, asyncio.Task[Obj | None] | None]:
    """Wait up to ``timeout`` for the pod's next change: (changed, pod, the task still waiting)."""
    task = pending or asyncio.ensure_future(anext(changes, None))
    done, _ = await asyncio.wait([task], timeout=timeout)
    if not done:
        return False, None, task
    return True, task.result(), None


async def end_instance(registry: Registry, ctx: RequestContext, pod_name: str, name: str, run: Instance, code: int) -> None:
    """Report ``run`` of container ``name`` terminated with ``code``, as its kubelet would once an
    attached main process (an interactive shell) exits; a pod that never restarts then reaches
    its terminal phase when every container has ended. Nothing when another instance runs by now."""
    store = registry.store("", "pods", "status")
    assert store is not None  # the core plugin serves pods/status

    async def terminated(pod: Any) -> Any:
        now = clock.now()
        statuses = [dict(s) for s in pod.status.container_statuses or []]
        for status in statuses:
            if status.get("name") == name and str(status.get("containerID") or "") == run.container_id \
                    and "running" in (status.get("state") or {}):
                started = status["state"]["running"].get("startedAt")
                status.update(ready=False, started=False, state={"terminated": {
                    "exitCode": code, "reason": "Completed" if code == 0 else "Error", "startedAt": started,
                    "finishedAt": now, "containerID": run.container_id}})
        pod.status.container_statuses = statuses
        ended = [s["state"]["terminated"] for s in statuses if "terminated" in (s.get("state") or {})]
        if (pod.spec.restart_policy or "Always") == "Never" and statuses and len(ended) == len(statuses):
            pod.status.phase = "Succeeded" if all(t.get("exitCode") == 0 for t in ended) else "Failed"
        return pod

    with contextlib.suppress(errors.APIError):  # the pod went meanwhile
        await store.update(replace(ctx, resource="pods", subresource="status", name=pod_name), pod_name, terminated)
