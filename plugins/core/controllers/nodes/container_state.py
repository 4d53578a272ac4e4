"""A simulated container's state over time, as a kubelet reports it: running, then, when its main
process exits (:func:`kplane.plugins.core.containers.process.main_process`), terminated with the
exit code (reason Completed for 0, else Error), and restarted as the pod's ``restartPolicy`` says.

Restarts follow the kubelet's crash-loop back-off: the first restart is immediate, each later one
waits ``backoff`` seconds doubled per restart already made (10 s, 20 s, 40 s ... at most 5 min
with the kubelet's default), the container waiting meanwhile in CrashLoopBackOff with the exit in
``lastState``. Everything is a pure function of the pod, its stored status and the time ``now``
(seconds since the epoch), so the kubelet can be restarted at any point; each function also says
in how many seconds the state changes next, for the kubelet to look again then.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kplane.api import clock
from kplane.plugins.core.containers.process import main_process

Obj = dict[str, Any]

MAX_BACKOFF = 300.0  # the kubelet's MaxContainerBackOff
CRASH_LOOP = "CrashLoopBackOff"
_MAX_STEPS = 16  # transitions worked out in one look; more only with a zero run time and back-off


def restarts_after(policy: str, exit_code: int) -> bool:
    """Whether the kubelet starts a container again after it exited with ``exit_code``."""
    return policy == "Always" or (policy == "OnFailure" and exit_code != 0)


def backoff_delay(restarts: int, backoff: float) -> float:
    """How long the kubelet waits before the restart after ``restarts`` restarts already made."""
    return 0.0 if restarts == 0 else min(backoff * 2 ** (restarts - 1), max(MAX_BACKOFF, backoff))


def go_duration(seconds: float) -> str:
    """``seconds`` as Go's ``time.Duration.String`` writes it: ``10s``, ``1m20s``, ``5m0s``, ``200ms``."""
    if seconds < 1:
        return f"{round(seconds * 1000)}ms"
    minutes, secs = divmod(round(seconds), 60)
    hours, minutes = divmod(minutes, 60)
    if hours:
        return f"{hours}h{minutes}m{secs}s"
    return f"{minutes}m{secs}s" if minutes else f"{secs}s"


def advance(pod: Obj, container: Obj, status: Obj, *, now: float, default_seconds: float, backoff: float,
            container_id: Any) -> tuple[Obj, float | None]:
    """``status`` (a running, terminated or crash-looping container's) carried forward to ``now``,
    and the seconds until it changes next (None: not on its own). ``container_id(restarts)`` names
    the container of each run."""
    policy = (pod.get("spec") or {}).get("restartPolicy") or "Always"
    for _ in range(_MAX_STEPS):
        state = status.get("state") or {}
        restarts = int(status.get("restartCount") or 0)
        if "running" in state:
            process = main_process(pod, container, default_seconds=default_seconds)
            if process.exit_code is None:
                return status, None
            ends = clock.epoch(state["running"].get("startedAt")) + process.seconds
            if ends > now:
                return status, ends - now
            exited = {"exitCode": process.exit_code, "reason": "Completed" if process.exit_code == 0 else "Error",
                      "startedAt": state["running"].get("startedAt"), "finishedAt": _at(ends),
                      "containerID": status.get("containerID")}
            exited = {k: v for k, v in exited.items() if v is not None}
            if not restarts_after(policy, process.exit_code):
                return {**status, "ready": False, "started": False, "state": {"terminated": exited}}, None
            status = {**status, "ready": False, "started": False, "lastState": {"terminated": exited},
                      "state": {"waiting": {"reason": CRASH_LOOP, "message": _crash_message(pod, container, restarts, backoff)}}}
            continue
        last = (status.get("lastState") or {}).get("terminated")
        if state.get("waiting", {}).get("reason") == CRASH_LOOP and last:
            due = clock.epoch(last.get("finishedAt")) + backoff_delay(restarts, backoff)
            if due > now:
                return status, due - now
            status = {**status, "ready": True, "started": True, "restartCount": restarts + 1,
                      "containerID": container_id(restarts + 1), "state": {"running": {"startedAt": _at(due)}}}
            continue
        return status, None
    return status, 0.0


def _at(seconds: float) -> str:
    return clock.at(datetime.fromtimestamp(seconds, UTC))


def _crash_message(pod: Obj, container: Obj, restarts: int, backoff: float) -> str:
    """The kubelet's message while a container waits to be restarted."""
    meta = pod["metadata"]
    delay = go_duration(backoff_delay(restarts, backoff) or backoff)
    return (f"back-off {delay} restarting failed container={container['name']} "
            f"pod={meta['name']}_{meta.get('namespace', '')}({meta.get('uid', '')})")
