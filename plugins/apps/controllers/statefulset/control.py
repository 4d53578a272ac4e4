"""One StatefulSet brought a step nearer its spec (``stateful_set_control.go``), from the pods
and ControllerRevisions it controls.

Revisions first: the *update* revision holds the current template (an equal older revision is
renumbered rather than copied, so an undo reuses it), the *current* one is the status' until a
rollout completes. Then each ordinal ``start .. start+replicas-1`` gets its pod: a missing one is
created (its claims first) from the update revision, or, below a RollingUpdate's partition, from
the current one; a Failed or Succeeded one is deleted to be made again; one with the wrong
identity or storage is repaired. Pods beyond the range are *condemned* and deleted, highest
ordinal first. With OrderedReady each step waits until the pods before it are Running, Ready and
available, and one pod at a time changes; Parallel does it all at once, making at most a
ReplicaSet's burst of missing pods per sync (a huge ``replicas`` is worked through sync by sync,
never held as one object per ordinal). Last, RollingUpdate deletes pods of old revisions from
the highest ordinal down to the partition, at most ``maxUnavailable`` (default 1) unavailable at
once; OnDelete leaves them until a user deletes them.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from kplane.api import ApiError, ResourceClient, ownership as own, scaled_value, spec_replicas
from kplane.plugins.apps.controllers.history import History, find_equal, new_revision, next_revision, sort_revisions
from kplane.plugins.apps.controllers.replicaset import BURST_REPLICAS
from kplane.plugins.apps.controllers.statefulset import identity as ident
from kplane.plugins.apps.controllers.statefulset.identity import API_VERSION, KIND, Obj
from kplane.plugins.apps.controllers.statefulset.pods import PodControl, StaleClaim


@dataclass(slots=True)
class Revisions:
    current: Obj
    update: Obj
    collision_count: int


async def revisions_of(sts: Obj, revisions: list[Obj], history: History) -> Revisions:
    """``getStatefulSetRevisions``: the update revision found, renumbered or created, and the current one."""
    status = sts.get("status") or {}
    collision_count = int(status.get("collisionCount") or 0)
    revisions = sort_revisions(revisions)
    update = new_revision(sts, api_version=API_VERSION, kind=KIND, revision=next_revision(revisions), collision_count=collision_count)
    equal = find_equal(revisions, update)
    if equal and equal[-1] is revisions[-1]:
        update = revisions[-1]  # the newest already holds this template
    elif equal:
        update = await history.renumber(equal[-1], update["revision"])  # rolled back to: it becomes the newest
    else:
        update, collision_count = await history.create(sts, update, collision_count)
    current = next((r for r in revisions if r["metadata"]["name"] == status.get("currentRevision")), update)
    return Revisions(current, update, collision_count)


def replica_status(sts: Obj, pods: list[Obj], revisions: Revisions) -> Obj:
    """``computeReplicaStatus``: counts over the pods that exist."""
    min_ready = int(own.spec(sts).get("minReadySeconds") or 0)
    status = {"replicas": 0, "readyReplicas": 0, "availableReplicas": 0, "currentReplicas": 0, "updatedReplicas": 0}
    for pod in pods:
        if ident.is_created(pod):
            status["replicas"] += 1
        if ident.is_running_and_ready(pod):
            status["readyReplicas"] += 1
            if ident.is_running_and_available(pod, min_ready):
                status["availableReplicas"] += 1
        if ident.is_created(pod) and not ident.is_terminating(pod):
            revision = ident.revision_of(pod)
            status["currentReplicas"] += revision == revisions.current["metadata"]["name"]
            status["updatedReplicas"] += revision == revisions.update["metadata"]["name"]
    return status


async def _for_all(steps: list[Callable[[], Awaitable[bool]]], monotonic: bool) -> bool:
    """Run the steps (each returns whether the sync must stop here): one by one, stopping at the
    first that says so, when ``monotonic``; else in growing batches (1, 2, 4, ...: a failing
    template costs one request, not all), a failed batch ending the run. True when stopped."""
    if monotonic:
        for step in steps:
            if await step():
                return True
        return False
    done, batch, stop = 0, 1, False
    while done < len(steps):
        results = await asyncio.gather(*(step() for step in steps[done:done + batch]), return_exceptions=True)
        for result in results:
            if isinstance(result, BaseException):
                raise result
            stop = stop or bool(result)
        done += batch
        batch *= 2
    return stop


class StatefulSetControl:
    def __init__(self, pods: PodControl) -> None:
        self.pods = pods

    async def update(self, sts: Obj, pods: list[Obj], revisions: Revisions) -> Obj:
        """``updateStatefulSet``: one step of creating, repairing, deleting and updating pods;
        returns the status it leaves (counts as seen at the start, less the pods it rolled)."""
        status = replica_status(sts, pods, revisions)
        current_name, update_name = revisions.current["metadata"]["name"], revisions.update["metadata"]["name"]
        status.update(observedGeneration=sts["metadata"].get("generation"), currentRevision=current_name,
                      updateRevision=update_name, collisionCount=revisions.collision_count)
        spec = own.spec(sts)
        start, count = ident.start_ordinal(sts), spec_replicas(sts)
        current_set, update_set = ident.apply_revision(sts, revisions.current), ident.apply_revision(sts, revisions.update)
        rolling = spec.get("updateStrategy") or {}
        partition = int((rolling.get("rollingUpdate") or {}).get("partition") or 0)
        # below this ordinal a missing pod is made at the current revision: the partition's, or
        # without rollingUpdate, as many as run the current revision now
        kept = partition if rolling.get("rollingUpdate") is not None else int((sts.get("status") or {}).get("currentReplicas") or 0)
        min_ready = int(spec.get("minReadySeconds") or 0)
        monotonic = spec.get("podManagementPolicy") != "Parallel"

        existing: dict[int, Obj] = {}
        condemned: list[Obj] = []
        for pod in pods:
            index = ident.ordinal(pod)
            if start <= index < start + count:
                existing[index] = pod
            elif index >= 0:
                condemned.append(pod)

        def missing_pod(index: int) -> Obj:
            keeps_current = rolling.get("type") == "RollingUpdate" and index < start + kept
            template, revision = (current_set, current_name) if keeps_current else (update_set, update_name)
            return ident.new_pod(sts, template, revision, index)

        # OrderedReady stops at its first missing pod, Parallel makes at most a burst per sync
        present, unbuilt = replicas_in_range(existing, start, count, 1 if monotonic else BURST_REPLICAS, missing_pod)
        condemned.sort(key=ident.ordinal, reverse=True)
        first_unhealthy = next((p for p in present if not ident.is_healthy(p)), None)
        if first_unhealthy is None:
            first_unhealthy = next((p for p in reversed(condemned) if not ident.is_healthy(p)), None)

        if sts["metadata"].get("deletionTimestamp"):
            return status
        if await _for_all([lambda p=p: self._process_replica(sts, p, monotonic, min_ready) for p in present], monotonic):
            return status
        for pod in condemned:
            if own.uid(pod) and not ident.is_terminating(pod):
                await self.pods.fix_claims(update_set, pod, condemned=True)
        if await _for_all([lambda p=p: self._process_condemned(sts, p, monotonic, min_ready, first_unhealthy) for p in condemned], monotonic):
            return status
        if rolling.get("type") == "OnDelete":
            return status
        deleted = await self._roll(sts, present, unbuilt, update_name, start + partition, count)
        status["currentReplicas"] -= deleted
        return status

    async def _process_replica(self, sts: Obj, pod: Obj, monotonic: bool, min_ready: int) -> bool:
        """``processReplica``: True when the sync must not go past this pod."""
        if ident.is_finished(pod):
            if not ident.is_terminating(pod):
                await self.pods.delete_pod(sts, pod)  # made again once it is gone
            return True
        if not ident.is_created(pod):
            if self.pods.claim_is_stale(sts, ident.ordinal(pod)):
                raise StaleClaim(f"a claim of {pod['metadata']['name']} still belongs to an earlier pod")
            await self.pods.create_pod(sts, pod)
            return monotonic
        if ident.is_pending(pod):
            await self.pods.create_claims(sts, pod)  # one deleted by hand is made again
        if monotonic and (ident.is_terminating(pod) or not ident.is_running_and_available(pod, min_ready)):
            return True
        if ident.is_terminating(pod):
            return False
        if not (ident.identity_matches(sts, pod) and ident.storage_matches(sts, pod)):
            await self.pods.update_pod(sts, pod)
        await self.pods.fix_claims(sts, pod, condemned=False)
        return False

    async def _process_condemned(self, sts: Obj, pod: Obj, monotonic: bool, min_ready: int, first_unhealthy: Obj | None) -> bool:
        """``processCondemned``: scale down from the highest ordinal, with OrderedReady only once
        every pod but the first unhealthy one is Running, Ready and available."""
        if ident.is_terminating(pod):
            return monotonic
        if monotonic and pod is not first_unhealthy and not ident.is_running_and_available(pod, min_ready):
            return True
        await self.pods.delete_pod(sts, pod)
        return monotonic

    async def _roll(self, sts: Obj, replicas: list[Obj], unbuilt: int, update_name: str, lowest: int, count: int) -> int:
        """The RollingUpdate step: delete pods of older revisions from the highest ordinal down
        to ``lowest`` (the partition's) while fewer than maxUnavailable are unavailable (the
        ``unbuilt`` missing pods count as unavailable too); returns how many."""
        value = ((own.spec(sts).get("updateStrategy") or {}).get("rollingUpdate") or {}).get("maxUnavailable")
        max_unavailable = max(1, scaled_value(1 if value is None else value, count, round_up=False))
        unavailable = unbuilt + sum(1 for p in replicas if not ident.is_healthy(p))
        deleted = 0
        for pod in reversed(replicas):
            if deleted >= max_unavailable - unavailable or ident.ordinal(pod) < lowest:
                break
            if ident.is_created(pod) and ident.revision_of(pod) != update_name and not ident.is_terminating(pod):
                await self.pods.delete_pod(sts, pod)
                deleted += 1
        return deleted


def replicas_in_range(existing: dict[int, Obj], start: int, count: int, budget: int,
                      missing_pod: Callable[[int], Obj]) -> tuple[list[Obj], int]:
    """The pods of ordinals ``start .. start+count-1`` in order: those that exist, and new ones
    (``missing_pod``) for only the first ``budget`` missing ordinals, so a huge ``replicas``
    costs what one sync can act on, not an object per ordinal. Also returns how many missing
    ordinals were left out."""
    replicas: list[Obj] = []
    made, index = 0, start
    for ordinal in [*sorted(existing), start + count]:
        for missing in range(index, index + min(ordinal - index, budget - made)):
            replicas.append(missing_pod(missing))
            made += 1
        if ordinal < start + count:
            replicas.append(existing[ordinal])
        index = ordinal + 1
    return replicas, count - len(existing) - made


def complete_rolling_update(sts: Obj, status: Obj) -> None:
    """A RollingUpdate whose pods are all updated and ready is done: the update revision becomes current."""
    if ((own.spec(sts).get("updateStrategy") or {}).get("type") == "RollingUpdate"
            and status["updatedReplicas"] == status["replicas"] and status["readyReplicas"] == status["replicas"]):
        status["currentReplicas"] = status["updatedReplicas"]
        status["currentRevision"] = status["updateRevision"]


STATUS_FIELDS = ("observedGeneration", "replicas", "readyReplicas", "availableReplicas", "currentReplicas",
                 "updatedReplicas", "currentRevision", "updateRevision", "collisionCount")


def status_differs(current: Obj, wanted: Obj) -> bool:
    """``inconsistentStatus``, with absent fields read as the server's zero values."""
    return any((current.get(k) or 0) != (wanted.get(k) or 0) for k in STATUS_FIELDS)


async def write_status(sets: ResourceClient, sts: Obj, wanted: Obj, cached: Callable[[], Obj | None]) -> None:
    """Write the status if it changed; after a 409, once more on the informer's copy (``cached``:
    the controller may list and watch StatefulSets, not get them, as kube's role says)."""
    current: Obj | None = sts
    for attempt in range(2):
        if current is None or not status_differs(current.get("status") or {}, wanted):
            return
        try:
            await sets.update_status({**current, "status": {**(current.get("status") or {}), **wanted}})
            return
        except ApiError as err:
            if err.code == 404:
                return
            if err.code != 409 or attempt == 1:
                raise
        current = cached()
