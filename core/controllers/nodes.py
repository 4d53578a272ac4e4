"""Simulated nodes, like kwok: Nodes with no machine behind them, so Pods get scheduled and "run".

Without kubelets, every Pod would stay Pending forever and nothing built on readiness (ReplicaSet
status, rollouts, ``kubectl wait``) could be tried. :class:`SimulatedNodes` plays three parts, all
through the API like the real components:

* the **kubelets**: it registers ``count`` Nodes (``kplane-node-1`` ...) with capacity, a Ready
  condition, an InternalIP ``10.244.0.<n>`` and node info, and renews their heartbeats;
* the **scheduler**: a Pending pod without ``spec.nodeName`` (and for ``default-scheduler``) is bound,
  through ``pods/binding``, to the fitting Node with the fewest pods. A Node fits when it is Ready,
  not cordoned, matches the pod's nodeSelector, has no taint the pod does not tolerate, and has room;
* the **kubelet's pod status**: a pod bound to one of these Nodes first reports ContainerCreating,
  then, ``ready_delay`` seconds later, Running and Ready with container statuses, a pod IP from the
  node's podCIDR (``10.244.<n>.0/24``), hostIP and startTime.

Nothing is ever contacted: the addresses are made up. A container whose image contains ``:fail``
(``nginx:fail``, ``busybox:fail-1``) never starts: it waits with reason ImagePullBackOff, and its pod
stays Pending and not Ready, to try out failure paths.
"""

from __future__ import annotations

import asyncio
import hashlib
import logging
import uuid
from collections import Counter
from collections.abc import Callable
from typing import Any

import aiohttp

from kplane.core.client.cache import object_key
from kplane.core.client.events import NORMAL, WARNING, EventRecorder
from kplane.core.client.informer import Handlers, SharedInformerFactory, wait_synced
from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.client.workqueue import WorkQueue
from kplane.core.controllers import ownership as own
from kplane.core.controllers.worker import work
from kplane.core.meta import clock
from kplane.core.patching.mediatypes import STRATEGIC_MERGE_PATCH

log = logging.getLogger(__name__)
Obj = dict[str, Any]

SCHEDULER = "default-scheduler"
SIMULATED_LABEL = "kplane.io/simulated-node"
FAIL_MARKER = ":fail"
NODE_NAME_INDEX = "spec.nodeName"
TERMINAL = ("Succeeded", "Failed")
CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
KUBELET_PORT = 10250
NODE_CONDITIONS = (  # type, status, reason, message: what a healthy kubelet reports
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


class NoAddressLeft(Exception):
    """Every pod IP of a node's podCIDR is taken (only pods bound by hand can get there)."""


class SimulatedNodes:
    """Registers the Nodes, keeps them alive, schedules pods onto Nodes and runs those bound to its own."""

    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, count: int = 3, ready_delay: float = 0.2,
                 prefix: str = "kplane-node-", heartbeat: float = 10.0, workers: int = 4) -> None:
        if not 0 <= count <= 250:
            raise ValueError("simulated nodes: count must be between 0 and 250 (one 10.244.<n>.0/24 each)")
        self.client = client
        self.informers = informers
        self.ready_delay = ready_delay
        self.heartbeat = heartbeat
        self.workers = workers
        self.nodes = client.resource("", "v1", "nodes")
        self.managed = {f"{prefix}{n}": n for n in range(1, count + 1)}  # node name -> its number
        self.pod_informer = informers.informer("", "v1", "pods")
        self.node_informer = informers.informer("", "v1", "nodes")
        self.pod_informer.indexer.add_indexer(NODE_NAME_INDEX, lambda pod: [own.spec(pod).get("nodeName") or ""])
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, SCHEDULER)
        self._boot_id = str(uuid.uuid4())
        self._binding: dict[str, str] = {}  # pod uid -> node: bound, not yet seen bound by the informer
        self._accepted: dict[str, float] = {}  # pod uid -> loop time its node accepted it
        self._ips: dict[str, str] = {}  # pod uid -> pod IP given out

    async def run(self) -> None:
        kubelet_version = await self._kubelet_version()
        await self._register_all(kubelet_version)
        self.pod_informer.add_handlers(Handlers(on_add=self._pod_added, on_update=self._pod_updated, on_delete=self._pod_deleted))
        self.node_informer.add_handlers(Handlers(on_add=self._node_changed, on_update=lambda _, node: self._node_changed(node)))
        self.informers.start()
        self.recorder.start()
        await wait_synced(self.pod_informer, self.node_informer)
        workers = [asyncio.create_task(self._work()) for _ in range(self.workers)]
        try:
            while True:
                await asyncio.sleep(self.heartbeat)
                await self._heartbeat(kubelet_version)
        finally:
            self.queue.shutdown()
            for worker in workers:
                worker.cancel()
            await self.recorder.stop(timeout=1.0)

    # -- the kubelets' Nodes ----------------------------------------------------------------
    async def _kubelet_version(self) -> str:
        """The server's version, as a kubelet of the same release would report."""
        try:
            return str((await self.client.request("GET", "/version"))["gitVersion"])
        except (ApiError, aiohttp.ClientError, KeyError, TypeError):
            return "v0.0.0"

    async def _register_all(self, kubelet_version: str) -> None:
        """Create the Nodes (or report them Ready again, after a restart), retrying until it works."""
        while True:
            try:
                for name in self.managed:
                    await self._register(name, kubelet_version)
                return
            except (ApiError, aiohttp.ClientError) as err:
                log.warning("simulated nodes: registration failed (%s); retrying", err)
                await asyncio.sleep(1.0)

    async def _register(self, name: str, kubelet_version: str) -> None:
        node = self._node(name, kubelet_version)
        try:
            await self.nodes.create(node)
        except ApiError as err:
            if err.code != 409:
                raise
            await self.nodes.patch(name, {"status": node["status"]}, content_type=STRATEGIC_MERGE_PATCH, subresource="status")

    async def _heartbeat(self, kubelet_version: str) -> None:
        """Renew each Node's conditions, as a kubelet's status update does; re-register deleted Nodes."""
        now = clock.now()
        conditions = [{"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": now} for t, s, r, m in NODE_CONDITIONS]
        for name in self.managed:
            try:
                await self.nodes.patch(name, {"status": {"conditions": conditions}}, content_type=STRATEGIC_MERGE_PATCH, subresource="status")
            except ApiError as err:
                if err.code != 404:
                    log.warning("simulated node %s: heartbeat failed: %s", name, err)
                    continue
                try:
                    await self._register(name, kubelet_version)
                except ApiError as again:
                    log.warning("simulated node %s: registration failed: %s", name, again)
            except aiohttp.ClientError as err:
                log.warning("simulated node %s: heartbeat failed: %s", name, err)

    def _node(self, name: str, kubelet_version: str) -> Obj:
        number = self.managed[name]
        cidr = f"10.244.{number}.0/24"
        now = clock.now()
        machine = uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.kplane")
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", SIMULATED_LABEL: "true",
            }},
            "spec": {"podCIDR": cidr, "podCIDRs": [cidr], "providerID": f"kplane://{name}"},
            "status": {
                "capacity": dict(CAPACITY),
                "allocatable": dict(CAPACITY),
                "conditions": [
                    {"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": now, "lastTransitionTime": now}
                    for t, s, r, m in NODE_CONDITIONS
                ],
                "addresses": [{"type": "InternalIP", "address": _host_ip(number)}, {"type": "Hostname", "address": name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": KUBELET_PORT}},
                "nodeInfo": {
                    "machineID": machine.hex, "systemUUID": str(machine), "bootID": self._boot_id,
                    "kernelVersion": "6.8.0-kplane", "osImage": "kplane simulated node", "containerRuntimeVersion": "kplane://1.0.0",
                    "kubeletVersion": kubelet_version, "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64",
                },
            },
        }

    # -- events to work ---------------------------------------------------------------------
    def _pod_added(self, pod: Obj) -> None:
        ip = (pod.get("status") or {}).get("podIP")
        if ip and own.spec(pod).get("nodeName") in self.managed:
            self._ips[own.uid(pod)] = ip  # given out before a restart: keep it taken
        self._enqueue(pod)

    def _pod_updated(self, old: Obj, pod: Obj) -> None:
        if own.spec(pod).get("nodeName"):
            self._binding.pop(own.uid(pod), None)
        self._enqueue(pod)

    def _pod_deleted(self, pod: Obj) -> None:
        uid = own.uid(pod)
        for taken in (self._binding, self._accepted, self._ips):
            taken.pop(uid, None)
        if own.spec(pod).get("nodeName"):
            self._enqueue_unscheduled()  # room on a node for a pod that did not fit

    def _node_changed(self, node: Obj) -> None:
        self._enqueue_unscheduled()

    def _enqueue_unscheduled(self) -> None:
        for pod in self.pod_informer.indexer.by_index(NODE_NAME_INDEX, ""):
            self._enqueue(pod)

    def _enqueue(self, pod: Obj) -> None:
        node = own.spec(pod).get("nodeName")
        if node in self.managed or (not node and _wants_scheduling(pod)):
            self.queue.add(object_key(pod))

    async def _work(self) -> None:
        await work(self.queue, self._sync, name="simulated nodes: pod", retryable=(NoAddressLeft,))

    async def _sync(self, key: str) -> None:
        pod = self.pod_informer.indexer.get(key)
        if pod is None:
            return
        node = own.spec(pod).get("nodeName")
        if pod["metadata"].get("deletionTimestamp"):
            if node in self.managed:
                await self._terminate(pod, node)
            return
        if (pod.get("status") or {}).get("phase") in TERMINAL:
            return
        if not node:
            if _wants_scheduling(pod) and own.uid(pod) not in self._binding:
                await self._schedule(pod)
        elif node in self.managed:
            await self._run(key, pod, node)

    # -- the scheduler ----------------------------------------------------------------------
    async def _schedule(self, pod: Obj) -> None:
        meta = pod["metadata"]
        node, why = self._pick_node(pod)
        if node is None:
            if await self._write_status(pod, "", lambda p, _: _unschedulable_status(p, why)):
                self.recorder.event(_pod_ref(pod), WARNING, "FailedScheduling", why)
            return
        self._binding[meta["uid"]] = node  # counted on the node from now on
        binding = {"apiVersion": "v1", "kind": "Binding", "metadata": {"name": meta["name"], "namespace": meta["namespace"], "uid": meta["uid"]},
                   "target": {"apiVersion": "v1", "kind": "Node", "name": node}}
        try:
            await self.client.request("POST", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}/binding", binding)
        except ApiError as err:
            self._binding.pop(meta["uid"], None)
            if err.code in (404, 409):
                return  # gone, or bound meanwhile: the informer brings what happened
            raise
        self.recorder.event(_pod_ref(pod), NORMAL, "Scheduled", f"Successfully assigned {meta['namespace']}/{meta['name']} to {node}")

    def _pick_node(self, pod: Obj) -> tuple[str | None, str]:
        """The fitting node with the fewest pods (by name on ties), or None and why none fits."""
        nodes = self.node_informer.indexer.list()
        misfits: Counter[str] = Counter()
        fitting: list[tuple[int, str]] = []
        for node in nodes:
            pods = self._pod_count(node["metadata"]["name"])
            why = _misfit(node, pod, pods)
            if why:
                misfits[why] += 1
            else:
                fitting.append((pods, node["metadata"]["name"]))
        if fitting:
            return min(fitting)[1], ""
        reasons = ", ".join(f"{n} {why}" for why, n in sorted(misfits.items()))
        return None, f"0/{len(nodes)} nodes are available: {reasons}." if reasons else "no nodes available to schedule pods"

    def _pod_count(self, node: str) -> int:
        bound = sum(1 for p in self.pod_informer.indexer.by_index(NODE_NAME_INDEX, node) if (p.get("status") or {}).get("phase") not in TERMINAL)
        return bound + sum(1 for n in self._binding.values() if n == node)

    # -- the kubelet ------------------------------------------------------------------------
    async def _run(self, key: str, pod: Obj, node: str) -> None:
        """First accept the pod (ContainerCreating), then, ``ready_delay`` later, report it running."""
        uid = own.uid(pod)
        now = asyncio.get_running_loop().time()
        if not (pod.get("status") or {}).get("startTime"):
            self._accepted[uid] = now
            await self._write_status(pod, node, self._accepted_status)
            self.queue.add_after(key, self.ready_delay)
            return
        left = self._accepted.setdefault(uid, now) + self.ready_delay - now
        if left > 0:
            self.queue.add_after(key, left)
            return
        await self._write_status(pod, node, self._running_status)

    def _accepted_status(self, pod: Obj, node: str) -> Obj:
        spec, status = own.spec(pod), dict(pod.get("status") or {})
        init = spec.get("initContainers") or []
        now = clock.now()
        waiting = {"waiting": {"reason": "PodInitializing" if init else "ContainerCreating"}}
        status.update(
            phase="Pending",
            hostIP=_host_ip(self.managed[node]),
            hostIPs=[{"ip": _host_ip(self.managed[node])}],
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

    def _running_status(self, pod: Obj, node: str) -> Obj:
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
            podIP=_host_ip(self.managed[node]) if spec.get("hostNetwork") else self._pod_ip(pod, node),
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

    async def _terminate(self, pod: Obj, node: str) -> None:
        """A graceful deletion, as the kubelet carries it out: first stop the containers (the pod
        reports Ready=False, its containers terminated), then, once that status is stored, remove
        the pod with grace 0 and its uid as precondition (so a new pod of the same name is safe)."""
        if await self._write_status(pod, node, _stopped_status):
            return  # the informer brings the stopped pod back, and its next sync removes it
        meta = pod["metadata"]
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}}
        try:
            await self.client.request("DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}", options)
        except ApiError as err:
            if err.code not in (404, 409):  # gone already, or another pod by that name now
                raise

    def _pod_ip(self, pod: Obj, node: str) -> str:
        """The pod's IP from its node's podCIDR: the one it has, or the lowest free one."""
        uid = own.uid(pod)
        if uid not in self._ips:
            taken = set(self._ips.values())
            prefix = f"10.244.{self.managed[node]}."
            free = next((prefix + str(host) for host in range(2, 255) if prefix + str(host) not in taken), None)
            if free is None:
                raise NoAddressLeft(f"no pod IP left in {prefix}0/24 of {node}")
            self._ips[uid] = free
        return self._ips[uid]

    async def _write_status(self, pod: Obj, node: str, desired: Callable[[Obj, str], Obj]) -> bool:
        """PUT ``desired(pod, node)`` as the pod's status with its resourceVersion, again on a fresh
        read after a 409; False when there was nothing to write."""
        pods = self.client.resource("", "v1", "pods", pod["metadata"]["namespace"])
        for attempt in range(3):
            status = desired(pod, node)
            if status == pod.get("status"):
                return False
            try:
                await pods.update_status({**pod, "status": status})
                return True
            except ApiError as err:
                if err.code == 404:
                    return False
                if err.code != 409 or attempt == 2:
                    raise
            fresh = await pods.get(pod["metadata"]["name"])
            if own.uid(fresh) != own.uid(pod) or own.spec(fresh).get("nodeName", "") != own.spec(pod).get("nodeName", ""):
                return False  # another pod by that name, or bound meanwhile: its own sync handles it
            pod = fresh
        return False


def _stopped_status(pod: Obj, node: str) -> Obj:
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


def _host_ip(number: int) -> str:
    return f"10.244.0.{number}"


def _pod_ref(pod: Obj) -> Obj:
    return {"apiVersion": "v1", "kind": "Pod", "metadata": pod["metadata"]}


def _wants_scheduling(pod: Obj) -> bool:
    """Ours to schedule: pending, for the default scheduler, and not held by scheduling gates."""
    spec = own.spec(pod)
    return ((spec.get("schedulerName") or SCHEDULER) == SCHEDULER and not spec.get("schedulingGates")
            and (pod.get("status") or {}).get("phase") not in TERMINAL and not pod["metadata"].get("deletionTimestamp"))


def _misfit(node: Obj, pod: Obj, pods: int) -> str:
    """Why ``pod`` cannot go to ``node`` (worded as kube-scheduler words it), or "" when it can."""
    spec, labels = own.spec(pod), node["metadata"].get("labels") or {}
    tolerations = spec.get("tolerations") or []
    conditions = (node.get("status") or {}).get("conditions") or []
    if not any(c.get("type") == "Ready" and c.get("status") == "True" for c in conditions):
        return "node(s) were not ready"
    if own.spec(node).get("unschedulable") and not _tolerates(tolerations, {"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}):
        return "node(s) were unschedulable"
    if any(labels.get(k) != v for k, v in (spec.get("nodeSelector") or {}).items()):
        return "node(s) didn't match Pod's node affinity/selector"
    for taint in own.spec(node).get("taints") or []:
        if taint.get("effect") in ("NoSchedule", "NoExecute") and not _tolerates(tolerations, taint):
            return f"node(s) had untolerated taint {{{taint.get('key')}: {taint.get('value', '')}}}"
    if pods >= _max_pods(node):
        return "Too many pods"
    return ""


def _max_pods(node: Obj) -> float:
    """The node's allocatable pods; no limit when it says nothing readable."""
    try:
        return int(((node.get("status") or {}).get("allocatable") or {}).get("pods"))
    except (TypeError, ValueError):
        return float("inf")


def _tolerates(tolerations: list[Obj], taint: Obj) -> bool:
    """``Toleration.ToleratesTaint``: same effect (or any), same key (or any), Exists or an equal value."""
    for t in tolerations:
        if t.get("effect") and t["effect"] != taint.get("effect"):
            continue
        if t.get("key") and t["key"] != taint.get("key"):
            continue
        if (t.get("operator") or "Equal") == "Exists" or (t.get("value") or "") == (taint.get("value") or ""):
            return True
    return False


def _unschedulable_status(pod: Obj, why: str) -> Obj:
    status = dict(pod.get("status") or {})
    status["conditions"] = _conditions(status, clock.now(), [("PodScheduled", False, "Unschedulable", why)])
    return status


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


def _container_status(pod_uid: str, container: Obj, previous: Obj | None, now: str) -> Obj:
    """A running container; one whose image contains ``:fail`` waits in ImagePullBackOff. A changed
    image restarts a running container, as the kubelet does."""
    raw = container.get("image") or ""
    if FAIL_MARKER in raw:
        return _waiting(container, {"waiting": {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{raw}"'}})
    image, image_id = _image(raw)
    previous = previous or {}
    was_running = "running" in (previous.get("state") or {})
    if was_running and previous.get("image") == image:
        return previous
    restarts = int(previous.get("restartCount") or 0) + (1 if was_running else 0)
    return {"name": container["name"], "image": image, "imageID": image_id, "containerID": _container_id(pod_uid, container["name"], restarts),
            "ready": True, "started": True, "restartCount": restarts, "state": {"running": {"startedAt": now}}, "lastState": {}}


def _init_status(pod_uid: str, container: Obj, previous: Obj | None, now: str) -> Obj:
    """An init container that ran to completion, or one stuck pulling a ``:fail`` image."""
    raw = container.get("image") or ""
    if FAIL_MARKER in raw:
        return _waiting(container, {"waiting": {"reason": "ImagePullBackOff", "message": f'Back-off pulling image "{raw}"'}})
    image, image_id = _image(raw)
    if previous and previous.get("image") == image and "terminated" in (previous.get("state") or {}):
        return previous
    terminated = {"exitCode": 0, "reason": "Completed", "startedAt": now, "finishedAt": now, "containerID": _container_id(pod_uid, container["name"], 0)}
    return {"name": container["name"], "image": image, "imageID": image_id, "containerID": terminated["containerID"], "ready": True,
            "started": False, "restartCount": 0, "state": {"terminated": terminated}, "lastState": {}}
