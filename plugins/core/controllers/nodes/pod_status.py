"""The pod statuses a kubelet reports, as pure functions of the pod: accepted (ContainerCreating),
running and Ready, stopped for a deletion, and the scheduler's Unschedulable condition.

A container whose image contains ``:fail`` (``nginx:fail``, ``busybox:fail-1``) never starts: it
waits with reason ImagePullBackOff, and its pod stays Pending and not Ready.
"""

from __future__ import annotations

import hashlib
from typing import Any

from kplane.api import clock
from kplane.api import ownership as own

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


def running_status(pod: Obj, pod_ip: str) -> Obj:
    """A pod whose containers run: Running and Ready, with container statuses and ``pod_ip``;
    held by a ``:fail`` image or by readiness gates whose conditions are not True."""
    spec, status = own.spec(pod), dict(pod.get("status") or {})
    uid, now = own.uid(pod), clock.now()
    init_failed = [c["name"] for c in spec.get("initContainers") or [] if FAIL_MARKER in (c.get("image") or "")]
    previous = {c.get("name"): c for c in status.get("containerStatuses") or []}
    if init_failed:
        containers = [_waiting(c, {"waiting": {"reason": "PodInitializing"}}) for c in spec.get("containers") or []]
    else:
        containers = [_container_status(uid, c, previous.get(c["name"]), now) for c in spec.get("containers") or []]
    unready = [c["name"] for c in containers if not c["ready"]]
    gates = [g.get("conditionType") for g in spec.get("readinessGates") or []]
    held = [g for g in gates if not any(c.get("type") == g and c.get("status") == "True" for c in status.get("conditions") or [])]
    if unready:
        ready_why = ("ContainersNotReady", _incomplete("unready", unready))
    else:
        ready_why = ("ReadinessGatesNotReady", f'corresponding condition of pod readiness gate "{held[0]}" does not exist.' if held else "")
    status.update(
        phase="Running" if all("running" in c["state"] for c in containers) else "Pending",
        podIP=pod_ip,
        conditions=_conditions(status, now, [
            ("Initialized", not init_failed, "ContainersNotInitialized", _incomplete("incomplete", init_failed)),
            ("Ready", not unready and not held, *ready_why),
            ("ContainersReady", not unready, "ContainersNotReady", _incomplete("unready", unready)),
            ("PodScheduled", True, "", ""),
        ]),
        containerStatuses=containers,
    )
    status["podIPs"] = [{"ip": status["podIP"]}]
    if spec.get("initContainers"):
        done = {c.get("name"): c for c in status.get("initContainerStatuses") or []}
        status["initContainerStatuses"] = [_init_status(uid, c, done.get(c["name"]), now) for c in spec["initContainers"]]
    return status


def stopped_status(pod: Obj) -> Obj:
    """The status of a pod whose containers were stopped for its deletion: each terminated (a
    running one with exit code 0; one that never started as the kubelet reports it), not ready, and
    the phase terminal, Succeeded when every container exited 0 (the kubelet of 1.27 on)."""
    status = dict(pod.get("status") or {})
    now = clock.now()
    containers = [_stopped(c, now) for c in status.get("containerStatuses") or []]
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


def _stopped(container: Obj, now: str) -> Obj:
    """A container status once its pod's containers are stopped; a terminated one stays as it is."""
    state = container.get("state") or {}
    if "terminated" in state:
        return container
    if "running" in state:
        terminated = {"exitCode": 0, "reason": "Completed", "startedAt": state["running"].get("startedAt"), "finishedAt": now,
                      "containerID": container.get("containerID")}
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
            condition.update(reason=reason, message=message)
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
    """A running container, unless its image fails to pull. A changed image restarts a running
    container, as the kubelet does."""
    if (failed := _pull_failure(container)) is not None:
        return failed
    image, image_id = _image(container.get("image") or "")
    previous = previous or {}
    was_running = "running" in (previous.get("state") or {})
    if was_running and previous.get("image") == image:
        return previous
    restarts = int(previous.get("restartCount") or 0) + (1 if was_running else 0)
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
