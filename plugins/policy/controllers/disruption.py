"""The disruption controller (kube-controller-manager's ``pkg/controller/disruption``).

It keeps each PodDisruptionBudget's status, which the eviction API decides from. A sync of one
budget:

1. finds its pods in the informer cache (the namespace's pods its selector matches: a null
   selector matches none, an empty one all);
2. works out how many pods are expected and how many must stay healthy: with an integer
   ``minAvailable`` the pods found and that number; with a percentage, or ``maxUnavailable``, the
   replicas their controllers ask for (through the ReplicaSet and Deployment caches, or any other
   controller's ``/scale``), each controller counted once; pods without a controller are reported
   in an ``UnmanagedPods`` event;
3. counts the healthy pods: Ready, not being deleted, and not among ``disruptedPods`` (evictions
   the API admitted that the controller has not yet seen carried out; one older than two minutes
   is dropped, with a ``NotDeleted`` event on the pod);
4. writes ``status`` when it changed: currentHealthy, desiredHealthy, expectedPods,
   disruptionsAllowed (``currentHealthy - desiredHealthy``, never below 0, and 0 while no pod is
   expected), observedGeneration and the DisruptionAllowed condition. When the expected count
   cannot be found, it fails safe: disruptionsAllowed 0 and the condition False with reason
   SyncFailed.
"""

from __future__ import annotations

import time
from typing import Any

from kplane.api import (
    NORMAL, WARNING, ApiError, EventRecorder, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, clock,
    controller_ref, format_label_selector, get_condition, involved_object, object_key, ownership as own,
    replace_condition, scaled_value, wait_synced,
)
from kplane.plugins.policy.budget import DELETION_TIMEOUT, disruption_allowed
from kplane.plugins.policy.types import DISRUPTION_ALLOWED, SYNC_FAILED

Obj = dict[str, Any]
COMPONENT = "controllermanager"  # what kube's disruption controller records events as


class ExpectedCountError(Exception):
    """The expected number of pods cannot be found (a controller or its scale is missing)."""


class DisruptionController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 2,
                 deletion_timeout: float = DELETION_TIMEOUT) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.deletion_timeout = deletion_timeout
        self.pdb_informer = informers.informer("policy", "v1", "poddisruptionbudgets")
        self.pod_informer = informers.informer("", "v1", "pods")
        self.rs_informer = informers.informer("apps", "v1", "replicasets")
        self.deployment_informer = informers.informer("apps", "v1", "deployments")
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)
        self._scale_paths: dict[tuple[str, str], str | None] = {}  # (apiVersion, kind) -> plural with /scale

    async def run(self) -> None:
        self.pdb_informer.add_handlers(Handlers.for_any(self._enqueue))
        self.pod_informer.add_handlers(Handlers(on_add=self._pod_changed, on_update=self._pod_updated, on_delete=self._pod_changed))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.pdb_informer, self.pod_informer, self.rs_informer, self.deployment_informer)
            workers.start(self.workers, self._sync, name="disruption")
            await workers.wait()

    # -- events to work ---------------------------------------------------------------------
    def _enqueue(self, pdb: Obj) -> None:
        self.queue.add(object_key(pdb))

    def _pod_changed(self, pod: Obj) -> None:
        for pdb in self._budgets_of(pod):
            self._enqueue(pdb)

    def _pod_updated(self, old: Obj, pod: Obj) -> None:
        if old["metadata"].get("labels") != pod["metadata"].get("labels"):
            self._pod_changed(old)
        self._pod_changed(pod)

    def _budgets_of(self, pod: Obj) -> list[Obj]:
        """The cached budgets of the pod's namespace whose selector matches it (``getPdbForPod``)."""
        found = []
        for pdb in self.pdb_informer.lister().namespaced(pod["metadata"].get("namespace", "")).list():
            selector = own.selector(pdb)
            if selector is not None and selector.matches(pod["metadata"].get("labels")):
                found.append(pdb)
        return found

    # -- one budget ---------------------------------------------------------------------------
    async def _sync(self, key: str) -> None:
        pdb = self.pdb_informer.indexer.get(key)
        if pdb is None or pdb["metadata"].get("deletionTimestamp"):
            return
        try:
            await self._try_sync(pdb)
        except ExpectedCountError as err:
            await self._fail_safe(pdb, str(err))
        except ApiError as err:
            if err.code == 409:
                raise  # from a lagging cache: the next sync sees the newer budget
            await self._fail_safe(pdb, str(err))
            raise

    async def _try_sync(self, pdb: Obj) -> None:
        pods = self._pods_of(pdb)
        if not pods:
            self.recorder.event(involved_object(pdb, "policy/v1", "PodDisruptionBudget"), NORMAL, "NoPods", "No matching pods found")
        try:
            expected, desired, unmanaged = await self._expected_count(pdb, pods)
        except ExpectedCountError as err:
            self.recorder.event(involved_object(pdb, "policy/v1", "PodDisruptionBudget"), WARNING, "CalculateExpectedPodCountFailed",
                                f"Failed to calculate the number of expected pods: {err}")
            raise
        if unmanaged:
            self.recorder.event(involved_object(pdb, "policy/v1", "PodDisruptionBudget"), WARNING, "UnmanagedPods", (
                f"Pods selected by this PodDisruptionBudget (selector: {format_label_selector(own.spec(pdb).get('selector'))}) "
                "were found to be unmanaged. As a result, the status of the PDB cannot be calculated correctly, which may "
                "result in undefined behavior. To account for these pods please set \".spec.minAvailable\" field of the "
                "PDB to an integer value."))
        now = time.time()
        disrupted, recheck = self._disrupted_pods(pdb, pods, now)
        healthy = sum(1 for pod in pods if not pod["metadata"].get("deletionTimestamp")
                      and pod["metadata"]["name"] not in disrupted and _ready(pod))
        await self._write_status(pdb, healthy, desired, expected, disrupted)
        if recheck is not None:
            self.queue.add_after(object_key(pdb), max(0.0, recheck - now))

    def _pods_of(self, pdb: Obj) -> list[Obj]:
        selector = own.spec(pdb).get("selector")
        if selector is None:
            return []  # a null selector selects nothing
        pods = self.pod_informer.lister().namespaced(pdb["metadata"].get("namespace", "")).list()
        chosen = own.selector(pdb)
        if chosen is None:
            return pods  # an empty selector selects every pod of the namespace
        return [pod for pod in pods if chosen.matches(pod["metadata"].get("labels"))]

    async def _expected_count(self, pdb: Obj, pods: list[Obj]) -> tuple[int, int, list[str]]:
        """``getExpectedPodCount``: the expected pods, the fewest healthy ones and the unmanaged pods."""
        spec = own.spec(pdb)
        if spec.get("maxUnavailable") is not None:
            expected, unmanaged = await self._expected_scale(pdb, pods)
            unavailable = scaled_value(spec["maxUnavailable"], expected, round_up=True)
            return expected, max(0, expected - unavailable), unmanaged
        minimum = spec.get("minAvailable")
        if isinstance(minimum, int):
            return len(pods), minimum, []
        if minimum is not None:
            expected, unmanaged = await self._expected_scale(pdb, pods)
            return expected, scaled_value(minimum, expected, round_up=True), unmanaged
        return 0, 0, []

    async def _expected_scale(self, pdb: Obj, pods: list[Obj]) -> tuple[int, list[str]]:
        """The replicas the pods' controllers ask for, each controller once (``getExpectedScale``)."""
        scales: dict[str, int] = {}  # controller uid -> replicas
        unmanaged: list[str] = []
        for pod in pods:
            ref = controller_ref(pod)
            if ref is None:
                unmanaged.append(pod["metadata"]["name"])
                continue
            if ref.get("uid") in scales:
                continue
            found = await self._controller_scale(pod["metadata"].get("namespace", ""), ref)
            if found is None:
                raise ExpectedCountError(f'found no controllers for pod "{pod["metadata"]["name"]}"')
            scales[found[0]] = found[1]
        return sum(scales.values()), unmanaged

    async def _controller_scale(self, namespace: str, ref: Obj) -> tuple[str, int] | None:
        """The uid and replicas of the controller ``ref`` names: a ReplicaSet's Deployment when it
        has one, else the controller's own ``/scale``; None when it is not found."""
        if ref.get("kind") == "ReplicaSet" and ref.get("apiVersion", "").startswith("apps/"):
            rs = self.rs_informer.indexer.get(f"{namespace}/{ref.get('name')}")
            if rs is None or own.uid(rs) != ref.get("uid"):
                return None
            owner = controller_ref(rs)
            if owner is not None and owner.get("kind") == "Deployment" and owner.get("apiVersion", "").startswith("apps/"):
                deployment = self.deployment_informer.indexer.get(f"{namespace}/{owner.get('name')}")
                if deployment is None or own.uid(deployment) != owner.get("uid"):
                    return None
                return own.uid(deployment), int(own.spec(deployment).get("replicas", 1))
            return own.uid(rs), int(own.spec(rs).get("replicas", 1))
        return await self._scale_of(namespace, ref)

    async def _scale_of(self, namespace: str, ref: Obj) -> tuple[str, int] | None:
        """Any other controller's replicas, read through its ``/scale`` (``getScaleController``)."""
        plural = await self._scale_plural(ref.get("apiVersion", ""), ref.get("kind", ""))
        if plural is None:
            return None
        api_version = ref["apiVersion"]
        base = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        try:
            scale = await self.client.request("GET", f"{base}/namespaces/{namespace}/{plural}/{ref.get('name')}/scale")
        except ApiError as err:
            if err.code == 404:
                return None
            raise
        if (scale.get("metadata") or {}).get("uid") != ref.get("uid"):
            return None  # another object of that name now
        return ref["uid"], int((scale.get("spec") or {}).get("replicas", 0))

    async def _scale_plural(self, api_version: str, kind: str) -> str | None:
        """The resource of ``kind`` in ``api_version`` that serves ``/scale``, from discovery (once)."""
        key = (api_version, kind)
        if key not in self._scale_paths:
            path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
            try:
                resources = (await self.client.request("GET", path)).get("resources", [])
            except ApiError as err:
                if err.code != 404:
                    raise
                resources = []
            names = {r["name"] for r in resources}
            self._scale_paths[key] = next((r["name"] for r in resources
                                           if r.get("kind") == kind and "/" not in r["name"] and f"{r['name']}/scale" in names), None)
        return self._scale_paths[key]

    def _disrupted_pods(self, pdb: Obj, pods: list[Obj], now: float) -> tuple[dict[str, str], float | None]:
        """The admitted evictions still pending, and when the oldest of them expires (``buildDisruptedPodMap``)."""
        disrupted = (pdb.get("status") or {}).get("disruptedPods") or {}
        kept: dict[str, str] = {}
        recheck: float | None = None
        for pod in pods:
            name = pod["metadata"]["name"]
            if pod["metadata"].get("deletionTimestamp") or name not in disrupted:
                continue
            expires = _epoch(disrupted[name]) + self.deletion_timeout
            if expires < now:
                self.recorder.event(involved_object(pod, "v1", "Pod"), WARNING, "NotDeleted",
                                    f"Pod was expected by PDB {pdb['metadata']['namespace']}/{pdb['metadata']['name']} to be deleted but it wasn't")
                continue
            recheck = expires if recheck is None else min(recheck, expires)
            kept[name] = disrupted[name]
        return kept, recheck

    async def _write_status(self, pdb: Obj, healthy: int, desired: int, expected: int, disrupted: dict[str, str]) -> None:
        """``updatePdbStatus``: nothing is written when nothing changed."""
        allowed = healthy - desired
        if expected <= 0 or allowed <= 0:
            allowed = 0
        status = pdb.get("status") or {}
        generation = pdb["metadata"].get("generation", 0)
        wanted = {"currentHealthy": healthy, "desiredHealthy": desired, "expectedPods": expected,
                  "disruptionsAllowed": allowed, "observedGeneration": generation}
        if (all(status.get(k, 0) == v for k, v in wanted.items()) and (status.get("disruptedPods") or {}) == disrupted
                and _condition_up_to_date(status, allowed, generation)):
            return
        new_status: Obj = {**wanted, "conditions": list(status.get("conditions") or [])}
        if disrupted:
            new_status["disruptedPods"] = disrupted
        _set_condition(new_status, *disruption_allowed(allowed), "", generation)
        await self._update(pdb, new_status)

    async def _fail_safe(self, pdb: Obj, message: str) -> None:
        """``failSafe``: no disruption is allowed while the status cannot be computed."""
        status = {**(pdb.get("status") or {}), "disruptionsAllowed": 0}
        status["conditions"] = list(status.get("conditions") or [])
        _set_condition(status, "False", SYNC_FAILED, message, status.get("observedGeneration", 0))
        if status != pdb.get("status"):
            await self._update(pdb, status)

    async def _update(self, pdb: Obj, status: Obj) -> None:
        pdbs = self.client.resource("policy", "v1", "poddisruptionbudgets", pdb["metadata"]["namespace"])
        await pdbs.update_status({**pdb, "status": status})


def _ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or [])


def _epoch(stamp: Any) -> float:
    """A disruptedPods time in seconds since the epoch (0 for one that does not parse: expired)."""
    try:
        return clock.epoch(stamp)
    except (TypeError, ValueError):
        return 0.0


def _condition_up_to_date(status: Obj, allowed: int, generation: int) -> bool:
    """``ConditionsAreUpToDate``."""
    condition = get_condition(status, DISRUPTION_ALLOWED)
    if condition is None or condition.get("observedGeneration", 0) != generation:
        return False
    return (condition.get("status"), condition.get("reason")) == disruption_allowed(allowed)


def _set_condition(status: Obj, value: str, reason: str, message: str, generation: int) -> None:
    """apimachinery's ``meta.SetStatusCondition``: lastTransitionTime moves only with the status."""
    current = get_condition(status, DISRUPTION_ALLOWED)
    since = current.get("lastTransitionTime") if current is not None and current.get("status") == value else clock.now()
    replace_condition(status, {"type": DISRUPTION_ALLOWED, "status": value, "observedGeneration": generation,
                               "lastTransitionTime": since, "reason": reason, "message": message})
