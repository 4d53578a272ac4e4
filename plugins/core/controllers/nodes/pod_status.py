"""The pod statuses a kubelet reports, as pure functions of the pod: accepted (ContainerCreating),
running and Ready, then (:mod:`.container_state`) containers exiting, restarting or staying
terminated as ``restartPolicy`` says, with the phase that follows (Running, or Succeeded/Failed
once no container runs again), stopped for a deletion, and the scheduler's Unschedulable condition.

A container whose image contains ``:fail`` (``nginx:fail``, ``busybox:fail-1``) never starts: it
waits with reason ImagePullBackOff, and its pod stays Pending and not Ready.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kplane.api import clock
from kplane.api import ownership as own
from kplane.plugins.core.containers.process import main_process
from kplane.plugins.core.controllers.nodes.container_state import advance

Obj = dict[str, Any]

FAIL_MARKER = ":fail"
TERMINAL = ("Succeeded", "Failed")


def accepted_status(pod: Obj, host_ip: str) -> Obj:
    """A pod its node has taken on: Pending, its containers ContainerCreating (PodInitializing
    while it has init containers), with hostIP and startTime."""
    spec, status = own.spec(pod), dict(pod.get("status") or {})
    init = spec.get("initContainers") or []
    now = clock.now()
    waiting = {"waiting": {"reason": "PodInitializing" if init else "ContainerCreating"}}
    status.update(
        phase="Pending",
        hostIP=host_ip,
        hostIPs=[{"ip": host_ip}],
        startTime=status.get("startTime") or now,
        conditions=_conditions(status, now, [
            ("Initialized", not init, "ContainersNotInitialized", _incomplete("incomplete", [c["name"] for c in init])),
            ("Ready", False, "ContainersNotReady", _incomplete("unready", [c["name"] for c in spec.get("containers") or []])),
            ("ContainersReady", False, "ContainersNotReady", _incomplete("unready", [c["name"] for c in spec.get("containers") or []])),
            ("PodScheduled", True, "", ""),
        ]),
        containerStatuses=[_waiting(c, waiting) for c in spec.get("containers") or []],
    )
    if init:
        status["initContainerStatuses"] = [_waiting(c, {"waiting": {"reason": "PodInitializing"}}) for c in init]
    return status


def running_status(pod: Obj, pod_ip: str, *, now: float, default_seconds: float, backoff: float) -> tuple[Obj, float | None]:
    """A pod whose containers were started: each running, exited or restarting at ``now`` (seconds
    since the epoch; :mod:`.container_state`), Ready while all run, the phase the kubelet's
    ``getPhase`` gives, with ``pod_ip``; held by a ``:fail`` image or by readiness gates whose
    conditions are not True. Also the seconds until a container changes next (None: none will)."""
    spec, status = own.spec(pod), dict(pod.get("status") or {})
    uid, stamp = own.uid(pod), clock.now()
    init_failed = [c["name"] for c in spec.get("initContainers") or [] if FAIL_MARKER in (c.get("image") or "")]
    previous = {c.get("name"): c for c in status.get("containerStatuses") or []}
    wakes: list[float] = []
    if init_failed:
        containers = [_waiting(c, {"waiting": {"reason": "PodInitializing"}}) for c in spec.get("containers") or []]
    else:
        containers = []
        for c in spec.get("containers") or []:
            started = _container_status(uid, c, previous.get(c["name"]), stamp)
            if "waiting" not in started["state"] or started["state"]["waiting"].get("reason") != "ImagePullBackOff":
                started, wake = advance(pod, c, started, now=now, default_seconds=default_seconds, backoff=backoff,
                                        container_id=lambda restarts, name=c["name"]: _container_id(uid, name, restarts))
                if wake is not None:
                    wakes.append(wake)
            containers.append(started)
    phase = _phase(spec.get("restartPolicy") or "Always", containers, bool(init_failed))
    unready = [c["name"] for c in containers if not c["ready"]]
    gates = [g.get("conditionType") for g in spec.get("readinessGates") or []]
    held = [g for g in gates if not any(c.get("type") == g and c.get("status") == "True" for c in status.get("conditions") or [])]
    if phase in TERMINAL:
        ready_why = ("PodCompleted", "")
    elif unready:
        ready_why = ("ContainersNotReady", _incomplete("unready", unready))
    else:
        ready_why = ("ReadinessGatesNotReady", f'corresponding condition of pod readiness gate "{held[0]}" does not exist.' if held else "")
    status.update(
        phase=phase,
        podIP=pod_ip,
        conditions=_conditions(status, stamp, [
            ("Initialized", not init_failed, "ContainersNotInitialized", _incomplete("incomplete", init_failed)),
            ("Ready", not unready and not held and phase not in TERMINAL, *ready_why),
            ("ContainersReady", not unready and phase not in TERMINAL, *(ready_why if phase in TERMINAL else
                                                                         ("ContainersNotReady", _incomplete("unready", unready)))),
            ("PodScheduled", True, "", ""),
        ]),
        containerStatuses=containers,
    )
    status["podIPs"] = [{"ip": status["podIP"]}]
    if spec.get("initContainers"):
        done = {c.get("name"): c for c in status.get("initContainerStatuses") or []}
        status["initContainerStatuses"] = [_init_status(uid, c, done.get(c["name"]), stamp) for c in spec["initContainers"]]
    return status, min(wakes, default=None)


def _phase(policy: str, containers: list[Obj], init_failed: bool) -> str:
    """The kubelet's ``getPhase``: Pending while a container waits without having run; Running
    while one runs (or, with restartPolicy Always, will run again); once none runs, Succeeded if
    every container exited 0, Failed under restartPolicy Never, else Running (OnFailure retries)."""
    if init_failed or not containers:
        return "Pending"
    states = [c["state"] for c in containers]
    if any("waiting" in s and not (c.get("lastState") or {}).get("terminated") for s, c in zip(states, containers)):
        return "Pending"
    if any("running" in s for s in states) or policy == "Always":
        return "Running"
    if all(s.get("terminated", {}).get("exitCode") == 0 for s in states):
        return "Succeeded"
    return "Failed" if policy == "Never" else "Running"


def stopped_status(pod: Obj, *, default_seconds: float) -> Obj:
    """The status of a pod whose containers were stopped for its deletion: each terminated (one
    that runs until stopped with exit code 0; one stopped before its process would exit on its own,
    as a Job's, killed with 137; one that never started as the kubelet reports it), not ready, and
    the phase terminal, Succeeded when every container exited 0 (the kubelet of 1.27 on)."""
    status = dict(pod.get("status") or {})
    now = clock.now()
    spec = {c["name"]: c for c in own.spec(pod).get("containers") or []}
    containers = [_stopped(c, now, main_process(pod, spec.get(c.get("name"), {}), default_seconds=default_seconds).exit_code is None)
                  for c in status.get("containerStatuses") or []]
    succeeded = bool(containers) and all(c["state"]["terminated"]["exitCode"] == 0 for c in containers)
    unready = ("PodCompleted", "") if succeeded else ("ContainersNotReady", _incomplete("unready", [c["name"] for c in containers]))
    status.update(
        phase="Succeeded" if succeeded else "Failed",
        conditions=_conditions(status, now, [("Ready", False, *unready), ("ContainersReady", False, *unready)]),
        containerStatuses=containers,
    )
    return status


def unschedulable_status(pod: Obj, why: str) -> Obj:
    """What the scheduler reports on a pod no node fits: PodScheduled False, Unschedulable."""
    status = dict(pod.get("status") or {})
    status["conditions"] = _conditions(status, clock.now(), [("PodScheduled", False, "Unschedulable", why)])
    return status


def _stopped(container: Obj, now: str, graceful: bool) -> Obj:
    """A container status once its pod's containers are stopped; a terminated one stays as it is.
    A ``graceful`` one (a server) exits 0 when stopped; another is killed (137)."""
    state = container.get("state") or {}
    if "terminated" in state:
        return container
    if "running" in state:
        code = 0 if graceful else 137
        terminated = {"exitCode": code, "reason": "Completed" if code == 0 else "Error", "startedAt": state["running"].get("startedAt"),
                      "finishedAt": now, "containerID": container.get("containerID")}
    else:  # never started: what the kubelet reports for a container it could not find at termination
        terminated = {"exitCode": 137, "reason": "ContainerStatusUnknown",
                      "message": "The container could not be located when the pod was terminated"}
    terminated = {k: v for k, v in terminated.items() if v is not None}
    return {**container, "ready": False, "started": False, "state": {"terminated": terminated}}


def _conditions(status: Obj, now: str, wanted: list[tuple[str, bool, str, str]]) -> list[Obj]:
    """``wanted`` (type, true?, reason and message when false) merged into the pod's conditions;
    a condition whose status is unchanged keeps its lastTransitionTime. Each is written whole, as a
    kubelet's Go PodCondition is (``lastProbeTime`` is a ``metav1.Time`` value: ``null``), so that
    it compares equal to the stored one."""
    current = {c.get("type"): c for c in status.get("conditions") or []}
    merged = [c for c in status.get("conditions") or [] if c.get("type") not in {w[0] for w in wanted}]
    for kind, true, reason, message in wanted:
        value = "True" if true else "False"
        old = current.get(kind) or {}
        since = old.get("lastTransitionTime") if old.get("status") == value else None
        condition: Obj = {"type": kind, "status": value, "lastProbeTime": None, "lastTransitionTime": since or now}
        if not true and reason:
            condition["reason"] = reason
            if message:
                condition["message"] = message
        merged.append(condition)
    return merged


def _incomplete(what: str, names: list[str]) -> str:
    return f"containers with {what} status: [{' '.join(names)}]"


def _image(image: str) -> tuple[str, str]:
    """The image as containerd reports it, and its image ID: ``docker.io/library/nginx:1.25`` and
    ``docker.io/library/nginx@sha256:<digest>`` (a made-up digest unless the image names one)."""
    name, _, digest = image.partition("@")
    tag = ""
    if ":" in name.rsplit("/", 1)[-1]:
        name, tag = name.rsplit(":", 1)
    first, slash, _ = name.partition("/")
    if not slash:
        name = f"docker.io/library/{name}"
    elif "." not in first and ":" not in first and first != "localhost":
        name = f"docker.io/{name}"
    digest = digest or "sha256:" + hashlib.sha256(f"{name}:{tag or 'latest'}".encode()).hexdigest()
    return (f"{name}@{digest}" if "@" in image else f"{name}:{tag or 'latest'}"), f"{name}@{digest}"


def _container_id(pod_uid: str, name: str, restarts: int) -> str:
    return "containerd://" + hashlib.sha256(f"{pod_uid}/{name}/{restarts}".encode()).hexdigest()


def _waiting(container: Obj, state: Obj) -> Obj:
    return {"name": container["name"], "image": container.get("image", ""), "imageID": "", "ready": False, "started": False,
            "restartCount": 0, "state": state, "lastState": {}}


def _pull_failure(container: Obj) -> Obj | None:
    """The status of a container whose image contains ``:fail``: waiting in ImagePullBackOff."""
    raw = container.get("image") or ""
    if FAIL_MARKER not in raw:
        return None
    return _waiting(container, {"waiting": {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{raw}"'}})


def _container_status(pod_uid: str, container: Obj, previous: Obj | None, now: str) -> Obj:
    """A container started, unless its image fails to pull; one that has started already stays
    as it is (running, exited or waiting to restart: :mod:`.container_state` carries it on). A
    changed image restarts it, as the kubelet does."""
    if (failed := _pull_failure(container)) is not None:
        return failed
    image, image_id = _image(container.get("image") or "")
    previous = previous or {}
    state = previous.get("state") or {}
    has_run = "running" in state or "terminated" in state or bool((previous.get("lastState") or {}).get("terminated"))
    if has_run and previous.get("image") == image:
        return previous
    restarts = int(previous.get("restartCount") or 0) + (1 if has_run else 0)
    return {"name": container["name"], "image": image, "imageID": image_id, "containerID": _container_id(pod_uid, container["name"], restarts),
            "ready": True, "started": True, "restartCount": restarts, "state": {"running": {"startedAt": now}}, "lastState": {}}


def _init_status(pod_uid: str, container: Obj, previous: Obj | None, now: str) -> Obj:
    """An init container that ran to completion, or one stuck pulling a ``:fail`` image."""
    if (failed := _pull_failure(container)) is not None:
        return failed
    image, image_id = _image(container.get("image") or "")
    if previous and previous.get("image") == image and "terminated" in (previous.get("state") or {}):
        return previous
    terminated = {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now, "containerID": _container_id(pod_uid, container["name"], 0)}
    return {"name": container["name"], "image": image, "imageID": image_id, "containerID": terminated["containerID"], "ready": True,
            "started": False, "restartCount": 0, "state": {"terminated": terminated}, "lastState": {}}
