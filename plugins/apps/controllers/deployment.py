"""The Deployment controller (kube-controller-manager's ``pkg/controller/deployment``).

A Deployment rolls its pods out through ReplicaSets, one per pod template it has had: the
*new* ReplicaSet runs the current template, the *old* ones the earlier templates. A sync of one
Deployment, from the informer caches:

1. claims its ReplicaSets: adopts orphans its selector matches and releases those it controls
   that no longer match (merge patches guarded by the ReplicaSet's resourceVersion);
2. finds the new ReplicaSet, the oldest one whose template equals the Deployment's once the
   ``pod-template-hash`` label and defaulted empties (``creationTimestamp: null``,
   ``resources: {}``) are left out, so ``kubectl rollout undo`` reuses the old ReplicaSet; it
   stamps it with the next revision (``deployment.kubernetes.io/revision``) and copies the
   revision to the Deployment;
3. then, in k8s' order: a paused Deployment or a change of ``spec.replicas`` only scales
   (proportionally across the active ReplicaSets mid-rollout); otherwise the strategy rolls out:
   RollingUpdate creates the new ReplicaSet ``<deployment>-<hash>`` and moves pods over within
   ``maxSurge``/``maxUnavailable``; Recreate scales the old ones to 0, waits until their pods are
   gone, then scales the new one up; once complete, old ReplicaSets beyond
   ``revisionHistoryLimit`` are deleted;
4. writes ``status`` when it changed: counters, observedGeneration, and the Available and
   Progressing conditions (Progressing times out ``progressDeadlineSeconds`` after its
   lastUpdateTime, and the Deployment is requeued to notice it).

Every write to a ReplicaSet or the Deployment carries the resourceVersion the sync read, so a
sync that acted on a stale cache fails with a conflict and runs again on fresher copies. Scaling
events ("Scaled up replica set web-6d4f8 from 0 to 3") are what ``kubectl describe`` shows.
"""

from __future__ import annotations

import asyncio
import copy
import logging
import time
from collections.abc import Sequence
from typing import Any

import aiohttp
import orjson

from kplane.core.client.cache import object_key
from kplane.core.client.events import NORMAL, WARNING, EventRecorder
from kplane.core.client.informer import Handlers, SharedInformerFactory, wait_synced
from kplane.core.client.rest import ApiError, RESTClient, ResourceClient
from kplane.core.client.workqueue import WorkQueue
from kplane.core.controllers import ownership as own
from kplane.core.controllers.worker import work
from kplane.core.meta import clock
from kplane.core.meta.selectors import LabelSelectorExpr

log = logging.getLogger(__name__)
Obj = dict[str, Any]

API_VERSION, KIND = "apps/v1", "Deployment"
COMPONENT = "deployment-controller"
MAX_RETRIES = 15  # failed syncs of one key before it is dropped until its next change
INT32_MAX = 2**31 - 1  # progressDeadlineSeconds / revisionHistoryLimit meaning "never"

HASH_LABEL = "pod-template-hash"
REVISION = "deployment.kubernetes.io/revision"
REVISION_HISTORY = "deployment.kubernetes.io/revision-history"
DESIRED_REPLICAS = "deployment.kubernetes.io/desired-replicas"
MAX_REPLICAS = "deployment.kubernetes.io/max-replicas"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
NOT_COPIED = frozenset({LAST_APPLIED, REVISION, REVISION_HISTORY, DESIRED_REPLICAS, MAX_REPLICAS})  # to the new ReplicaSet
MAX_REVISION_HISTORY_CHARS = 2000
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"  # k8s' rand.SafeEncodeString: no vowels, no 0/1/3

AVAILABLE, PROGRESSING, REPLICA_FAILURE = "Available", "Progressing", "ReplicaFailure"
MIN_AVAILABLE, MIN_UNAVAILABLE = "MinimumReplicasAvailable", "MinimumReplicasUnavailable"
NEW_RS_CREATED, FOUND_NEW_RS, RS_UPDATED = "NewReplicaSetCreated", "FoundNewReplicaSet", "ReplicaSetUpdated"
NEW_RS_AVAILABLE, TIMED_OUT, RS_CREATE_ERROR = "NewReplicaSetAvailable", "ProgressDeadlineExceeded", "ReplicaSetCreateError"
PAUSED, RESUMED = "DeploymentPaused", "DeploymentResumed"


class RetryLater(Exception):
    """The sync cannot finish now (e.g. a hash collision was recorded) and must run again."""


class DeploymentController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 5) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.deployments = informers.informer("apps", "v1", "deployments")
        self.replica_sets = informers.informer("apps", "v1", "replicasets")
        self.pods = informers.informer("", "v1", "pods")
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)

    async def run(self) -> None:
        self.deployments.add_handlers(Handlers.for_any(self._enqueue))
        self.replica_sets.add_handlers(Handlers(on_add=self._rs_added, on_update=self._rs_updated, on_delete=self._rs_deleted))
        self.pods.add_handlers(Handlers(on_delete=self._pod_deleted))
        self.informers.start()
        self.recorder.start()
        workers: list[asyncio.Task[None]] = []
        try:
            await wait_synced(self.deployments, self.replica_sets, self.pods)
            workers = [asyncio.create_task(self._work()) for _ in range(self.workers)]
            await asyncio.gather(*workers)
        finally:
            self.queue.shutdown()
            for worker in workers:
                worker.cancel()
            await self.recorder.stop(timeout=1.0)

    # -- events to work ---------------------------------------------------------------------
    def _enqueue(self, d: Obj) -> None:
        self.queue.add(object_key(d))

    def _rs_added(self, rs: Obj) -> None:
        if rs["metadata"].get("deletionTimestamp"):
            self._rs_deleted(rs)  # seen after a restart while being deleted
            return
        ref = own.controller_ref(rs)
        if ref is not None:
            self._enqueue_owner(rs, ref)
            return
        for d in own.selecting(self.deployments, rs):  # an orphan: whoever selects it may adopt it
            self._enqueue(d)

    def _rs_updated(self, old: Obj, rs: Obj) -> None:
        if old["metadata"].get("resourceVersion") == rs["metadata"].get("resourceVersion"):
            return  # a resync: the Deployments resync themselves
        ref, old_ref = own.controller_ref(rs), own.controller_ref(old)
        if ref != old_ref and old_ref is not None:
            self._enqueue_owner(old, old_ref)
        if ref is not None:
            self._enqueue_owner(rs, ref)
            return
        if ref != old_ref or old["metadata"].get("labels") != rs["metadata"].get("labels"):
            for d in own.selecting(self.deployments, rs):
                self._enqueue(d)

    def _rs_deleted(self, rs: Obj) -> None:
        ref = own.controller_ref(rs)
        if ref is not None:
            self._enqueue_owner(rs, ref)

    def _pod_deleted(self, pod: Obj) -> None:
        """A Recreate rollout waits for the old pods to be gone: look again when one goes."""
        ref = own.controller_ref(pod)
        if ref is None or ref.get("kind") != "ReplicaSet":
            return
        rs = self.replica_sets.indexer.get(f"{pod['metadata'].get('namespace')}/{ref.get('name')}")
        if rs is None or own.uid(rs) != ref.get("uid"):
            return
        rs_ref = own.controller_ref(rs)
        d = own.resolve_controller(self.deployments, rs, rs_ref, group="apps", kind=KIND) if rs_ref is not None else None
        if d is not None and _is_recreate(d):
            self._enqueue(d)

    def _enqueue_owner(self, rs: Obj, ref: Obj) -> None:
        d = own.resolve_controller(self.deployments, rs, ref, group="apps", kind=KIND)
        if d is not None:
            self._enqueue(d)



    async def _work(self) -> None:
        await work(self.queue, self.sync, name="deployment", retryable=(RetryLater,), max_retries=MAX_RETRIES)

    # -- sync -------------------------------------------------------------------------------
    async def sync(self, key: str) -> None:
        """Reconcile one Deployment (``syncDeployment``); raises to be retried."""
        cached = self.deployments.indexer.get(key)
        if cached is None:
            return
        d = copy.deepcopy(cached)  # synced objects are refreshed in place from write replies
        selector = own.selector(d)
        if selector is None:
            log.warning("deployment %s: its selector selects nothing; ignored", key)
            return
        rs_list = [copy.deepcopy(rs) for rs in await self._claim_replica_sets(d, selector)]
        if d["metadata"].get("deletionTimestamp"):
            new_rs, old_rss = await self._find_replica_sets(d, rs_list)
            await self._sync_status(d, new_rs, old_rss)
            return
        await self._check_paused_conditions(d)
        new_rs, old_rss = await self._find_replica_sets(d, rs_list)
        if own.spec(d).get("paused") or _is_scaling_event(d, new_rs, old_rss):
            await self._sync_scaling(d, new_rs, old_rss)
        elif _is_recreate(d):
            await self._rollout_recreate(d, new_rs, old_rss, self._pods_by_owner(d, selector, rs_list))
        else:
            await self._rollout_rolling(d, new_rs, old_rss)

    async def _claim_replica_sets(self, d: Obj, selector: LabelSelectorExpr) -> list[Obj]:
        """The ReplicaSets this Deployment controls once orphans are adopted and strays released
        (``ControllerRefManager.ClaimReplicaSets``)."""
        claimed: list[Obj] = []
        deleting = bool(d["metadata"].get("deletionTimestamp"))
        may_adopt: bool | None = None  # checked against the server at the first adoption
        for rs in self.replica_sets.lister().namespaced(d["metadata"]["namespace"]).list():
            ref, matches = own.controller_ref(rs), selector.matches(rs["metadata"].get("labels"))
            if ref is not None:
                if ref.get("uid") != own.uid(d):
                    continue  # another controller's
                if matches:
                    claimed.append(rs)
                elif not deleting:
                    await self._patch_owner_refs(rs, [r for r in own.owner_refs(rs) if r.get("uid") != own.uid(d)])
                continue
            if deleting or not matches or rs["metadata"].get("deletionTimestamp"):
                continue
            if may_adopt is None:
                may_adopt = await self._still_adoptable(d)
            if may_adopt:
                adopted = await self._patch_owner_refs(rs, [*own.owner_refs(rs), own.controller_reference(d, API_VERSION, KIND)])
                if adopted is not None:
                    claimed.append(adopted)
        return claimed

    async def _still_adoptable(self, d: Obj) -> bool:
        """A quorum read before adopting: the cache may not show yet that the Deployment is being deleted."""
        try:
            fresh = await self._deployment_client(d).get(d["metadata"]["name"])
        except ApiError as err:
            if err.code == 404:
                return False
            raise
        return own.uid(fresh) == own.uid(d) and not fresh["metadata"].get("deletionTimestamp")

    async def _patch_owner_refs(self, rs: Obj, refs: list[Obj]) -> Obj | None:
        """Set the ReplicaSet's ownerReferences if it is still the version we saw; None when it is gone."""
        meta = rs["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"], "ownerReferences": refs or None}}
        try:
            return await self._rs_client(rs).patch(meta["name"], patch)
        except ApiError as err:
            if err.code == 404:
                return None
            raise

    def _pods_by_owner(self, d: Obj, selector: LabelSelectorExpr, rs_list: list[Obj]) -> dict[str, list[Obj]]:
        """The Deployment's pods by the uid of the ReplicaSet controlling them, terminating ones included."""
        by_owner: dict[str, list[Obj]] = {own.uid(rs): [] for rs in rs_list}
        for pod in self.pods.lister().namespaced(d["metadata"]["namespace"]).list(selector):
            ref = own.controller_ref(pod)
            if ref is not None and ref.get("uid") in by_owner:
                by_owner[ref["uid"]].append(pod)
        return by_owner

    # -- the new ReplicaSet and revisions ---------------------------------------------------
    async def _find_replica_sets(self, d: Obj, rs_list: list[Obj]) -> tuple[Obj | None, list[Obj]]:
        """The new ReplicaSet (None when there is none yet) and the old ones. An existing new one
        gets the next revision if it is not the latest (a rollback), the Deployment's annotations
        and minReadySeconds; its revision goes to the Deployment (``getNewReplicaSet``)."""
        new_rs = _find_new_rs(d, rs_list)
        old_rss = [rs for rs in rs_list if rs is not new_rs]
        if new_rs is None:
            return None, old_rss
        wanted = copy.deepcopy(new_rs)
        changed = _set_new_rs_annotations(d, wanted, str(_max_revision(old_rss) + 1), exists=True)
        if (own.spec(wanted).get("minReadySeconds") or 0) != (own.spec(d).get("minReadySeconds") or 0):
            wanted["spec"]["minReadySeconds"] = own.spec(d).get("minReadySeconds") or 0
            changed = True
        if changed:
            _refresh(new_rs, await self._rs_client(new_rs).update(wanted))
        revision = _annotations(new_rs).get(REVISION)
        if revision is not None:
            await self._set_deployment_revision(d, revision)
        if _progress_deadline(d) is not None and _condition(_status(d), PROGRESSING) is None:
            # Progress was not tracked so far: count from the first time the new ReplicaSet is seen.
            _set_condition(_status(d), _new_condition(PROGRESSING, "True", FOUND_NEW_RS, f'Found new replica set "{_name(new_rs)}"'))
            await self._write_status(d, _status(d))
        return new_rs, old_rss

    async def _create_new_rs(self, d: Obj, old_rss: list[Obj]) -> Obj:
        """Create ``<deployment>-<hash>`` for the current template, already scaled as far as the
        strategy allows; a name taken by a foreign ReplicaSet bumps ``status.collisionCount``."""
        pod_hash = pod_template_hash(own.spec(d).get("template") or {}, _status(d).get("collisionCount"))
        template = copy.deepcopy(own.spec(d).get("template") or {})
        template_meta = template["metadata"] = template.get("metadata") or {}
        template_meta["labels"] = {**(template_meta.get("labels") or {}), HASH_LABEL: pod_hash}
        selector = copy.deepcopy(own.spec(d).get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": f"{_name(d)}-{pod_hash}", "namespace": d["metadata"]["namespace"],
                         "labels": dict(template_meta["labels"]), "ownerReferences": [own.controller_reference(d, API_VERSION, KIND)]},
            "spec": {"replicas": 0, "minReadySeconds": own.spec(d).get("minReadySeconds") or 0, "selector": selector, "template": template},
        }
        replicas = rs["spec"]["replicas"] = _new_rs_replicas(d, [*old_rss, rs], rs)
        revision = str(_max_revision(old_rss) + 1)
        _set_new_rs_annotations(d, rs, revision, exists=False)
        created = True
        try:
            stored = await self._rs_client(rs).create(rs)
        except ApiError as err:
            if err.code == 409:
                created = False
                stored = await self._existing_new_rs(d, _name(rs))
            elif err.namespace_terminating:
                raise  # every create there fails: nothing to report
            else:
                await self._report_create_failure(d, _name(rs), err)
                raise
        if created and replicas > 0:
            self.recorder.event(_reference(d), NORMAL, "ScalingReplicaSet", f"Scaled up replica set {_name(stored)} from 0 to {replicas}")
        await self._set_deployment_revision(d, revision)
        if created and _progress_deadline(d) is not None:
            _set_condition(_status(d), _new_condition(PROGRESSING, "True", NEW_RS_CREATED, f'Created new replica set "{_name(stored)}"'))
            await self._write_status(d, _status(d))
        return stored

    async def _existing_new_rs(self, d: Obj, name: str) -> Obj:
        """The ReplicaSet by the new one's name: ours if we control it with this template (a stale
        cache), else a hash collision: count it so the next sync hashes differently."""
        existing = await self._rs_client(d).get(name)
        ref = own.controller_ref(existing)
        if ref is not None and ref.get("uid") == own.uid(d) and _equal_ignore_hash(own.spec(d).get("template") or {}, own.spec(existing).get("template") or {}):
            return existing
        _status(d)["collisionCount"] = (_status(d).get("collisionCount") or 0) + 1
        await self._write_status(d, _status(d))
        raise RetryLater(f"replica set {name} exists with another template (hash collision {_status(d)['collisionCount']})")

    async def _report_create_failure(self, d: Obj, name: str, err: ApiError) -> None:
        message = f'Failed to create new replica set "{name}": {err.status.get("message") or err}'
        if _progress_deadline(d) is not None:
            _set_condition(_status(d), _new_condition(PROGRESSING, "False", RS_CREATE_ERROR, message))
            try:
                await self._write_status(d, _status(d))
            except (ApiError, aiohttp.ClientError) as status_err:  # the create failure is the one to report
                log.info("deployment %s: status not written: %s", object_key(d), status_err)
        self.recorder.event(_reference(d), WARNING, RS_CREATE_ERROR, message)

    async def _set_deployment_revision(self, d: Obj, revision: str) -> None:
        """Copy the new ReplicaSet's revision to the Deployment's annotations.

        Written with the status, as kube-controller-manager does: the Deployment status strategy
        takes annotations, and a change through ``/status`` leaves the generation alone."""
        if _annotations(d).get(REVISION) == revision:
            return
        d["metadata"]["annotations"] = {**_annotations(d), REVISION: revision}
        await self._write_status(d, _status(d))

    # -- scaling (paused deployments and changes of spec.replicas) --------------------------
    async def _sync_scaling(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        """Scale without rolling out (``sync``): a paused Deployment, or a change of ``spec.replicas``."""
        await self._scale(d, new_rs, old_rss)
        if own.spec(d).get("paused"):
            await self._cleanup(d, old_rss)
        await self._sync_status(d, new_rs, old_rss)

    async def _scale(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        """Bring the active ReplicaSets to ``spec.replicas`` (+ surge mid-rollout), each in
        proportion to its share of the size they were scaled for (``max-replicas``)."""
        target = _active_or_latest(new_rs, old_rss)
        if target is not None:
            await self._scale_and_record(d, target, _replicas(d))
            return
        if _is_saturated(d, new_rs):
            for rs in _active(old_rss):
                await self._scale_and_record(d, rs, 0)
            return
        if _is_recreate(d):
            return
        active = _active([*old_rss, new_rs])
        allowed = _replicas(d) + _max_surge(d) if _replicas(d) > 0 else 0
        to_add = allowed - sum(_replicas(rs) for rs in active)
        active.sort(key=_created, reverse=to_add > 0)  # then by size: ties go to the newer when adding
        active.sort(key=_replicas, reverse=True)
        sizes, added = [], 0
        for rs in active:
            share = _proportion(d, rs, to_add, added)
            sizes.append(_replicas(rs) + share)
            added += share
        if to_add and sizes:
            sizes[0] = max(0, sizes[0] + to_add - added)  # leftovers to the largest
        operation = "up" if to_add > 0 else "down"
        for rs, size in zip(active, sizes, strict=True):
            await self._scale_rs(d, rs, size, operation)

    async def _scale_and_record(self, d: Obj, rs: Obj, size: int) -> bool:
        if _replicas(rs) == size:
            return False
        return await self._scale_rs(d, rs, size, "up" if _replicas(rs) < size else "down")

    async def _scale_rs(self, d: Obj, rs: Obj, size: int, operation: str) -> bool:
        """Set the ReplicaSet's size and its desired/max-replicas annotations; True when the size changed."""
        desired, most = _replicas(d), _replicas(d) + _max_surge(d)
        resized = _replicas(rs) != size
        if not resized and not _replicas_annotations_differ(rs, desired, most):
            return False
        before = _replicas(rs)
        wanted = copy.deepcopy(rs)
        wanted["spec"]["replicas"] = size
        _set_replicas_annotations(wanted, desired, most)
        _refresh(rs, await self._rs_client(rs).update(wanted))
        if resized:
            self.recorder.event(_reference(d), NORMAL, "ScalingReplicaSet", f"Scaled {operation} replica set {_name(rs)} from {before} to {size}")
        return resized

    # -- rollouts ---------------------------------------------------------------------------
    async def _rollout_rolling(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        """One step of a RollingUpdate: scale the new ReplicaSet up, or the old ones down, within the fenceposts."""
        if new_rs is None:
            new_rs = await self._create_new_rs(d, old_rss)
        all_rss = [*old_rss, new_rs]
        if not await self._reconcile_new_rs(d, new_rs, all_rss) and not await self._reconcile_old_rss(d, new_rs, old_rss, all_rss):
            if _complete(d, _status(d)):
                await self._cleanup(d, old_rss)
        await self._sync_rollout_status(d, new_rs, all_rss)

    async def _reconcile_new_rs(self, d: Obj, new_rs: Obj, all_rss: list[Obj]) -> bool:
        if _replicas(new_rs) > _replicas(d):
            return await self._scale_and_record(d, new_rs, _replicas(d))
        return await self._scale_and_record(d, new_rs, _new_rs_replicas(d, all_rss, new_rs))

    async def _reconcile_old_rss(self, d: Obj, new_rs: Obj, old_rss: list[Obj], all_rss: list[Obj]) -> bool:
        """Scale old ReplicaSets down as far as ``maxUnavailable`` allows, their unready pods first."""
        active_old = _active(old_rss)
        if not active_old:
            return False
        min_available = _replicas(d) - _max_unavailable(d)
        new_unavailable = _replicas(new_rs) - _available(new_rs)
        most = sum(_replicas(rs) for rs in all_rss) - min_available - new_unavailable
        if most <= 0:
            return False
        active_old.sort(key=_created)
        cleaned = await self._scale_down_unhealthy(d, active_old, most)
        return await self._scale_down_old(d, [*active_old, new_rs], active_old) + cleaned > 0

    async def _scale_down_unhealthy(self, d: Obj, old_rss: list[Obj], most: int) -> int:
        """Drop old pods that are not available anyway, up to ``most`` (``cleanupUnhealthyReplicas``)."""
        total = 0
        for rs in old_rss:
            if total >= most:
                break
            unhealthy = _replicas(rs) - _available(rs)
            if unhealthy == 0:
                continue
            count = min(most - total, unhealthy)
            await self._scale_and_record(d, rs, _replicas(rs) - count)
            total += count
        return total

    async def _scale_down_old(self, d: Obj, all_rss: list[Obj], old_rss: list[Obj]) -> int:
        """Scale old ReplicaSets down, oldest first, while more than ``replicas - maxUnavailable`` stay available."""
        min_available = _replicas(d) - _max_unavailable(d)
        surplus = sum(_available(rs) for rs in all_rss) - min_available
        total = 0
        for rs in old_rss:
            if total >= surplus:
                break
            if _replicas(rs) == 0:
                continue
            count = min(_replicas(rs), surplus - total)
            await self._scale_and_record(d, rs, _replicas(rs) - count)
            total += count
        return total

    async def _rollout_recreate(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj], pods: dict[str, list[Obj]]) -> None:
        """Recreate: old ReplicaSets to 0, wait until none of their pods runs, then the new one to full size."""
        all_rss = [*old_rss, *([new_rs] if new_rs is not None else [])]
        scaled_down = False
        for rs in _active(old_rss):
            scaled_down = await self._scale_and_record(d, rs, 0) or scaled_down
        if scaled_down or _old_pods_running(new_rs, old_rss, pods):
            await self._sync_rollout_status(d, new_rs, all_rss)
            return
        if new_rs is None:
            new_rs = await self._create_new_rs(d, old_rss)
            all_rss.append(new_rs)
        await self._scale_and_record(d, new_rs, _replicas(d))
        if _complete(d, _status(d)):
            await self._cleanup(d, old_rss)
        await self._sync_rollout_status(d, new_rs, all_rss)

    async def _cleanup(self, d: Obj, old_rss: list[Obj]) -> None:
        """Delete the oldest revisions beyond ``revisionHistoryLimit``, only those scaled to 0 and settled."""
        limit = own.spec(d).get("revisionHistoryLimit")
        if limit is None or limit == INT32_MAX:
            return
        alive = [rs for rs in old_rss if not rs["metadata"].get("deletionTimestamp")]
        for rs in sorted(alive, key=_revision_order)[:max(0, len(alive) - limit)]:
            settled = (rs["metadata"].get("generation") or 0) <= (_status(rs).get("observedGeneration") or 0)
            if _replicas(rs) or _status(rs).get("replicas") or not settled:
                continue
            try:
                await self._rs_client(rs).delete(_name(rs))
            except ApiError as err:
                if err.code != 404:
                    raise

    # -- status -----------------------------------------------------------------------------
    async def _sync_status(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        """Counters and the Available condition only (``syncDeploymentStatus``)."""
        status = _calculate_status(d, new_rs, [*old_rss, *([new_rs] if new_rs is not None else [])])
        if _status_differs(_status(d), status):
            await self._write_status(d, status)

    async def _sync_rollout_status(self, d: Obj, new_rs: Obj | None, all_rss: list[Obj]) -> None:
        """Counters and conditions, with the progress estimate (``syncRolloutStatus``)."""
        status = _calculate_status(d, new_rs, all_rss)
        deadline = _progress_deadline(d)
        current = _condition(_status(d), PROGRESSING)
        if deadline is None:
            _remove_condition(status, PROGRESSING)
        finished = status["replicas"] == status["updatedReplicas"] and current is not None and current.get("reason") == NEW_RS_AVAILABLE
        subject = f'ReplicaSet "{_name(new_rs)}"' if new_rs is not None else f'Deployment "{_name(d)}"'
        if deadline is not None and not finished:
            if _complete(d, status):
                _set_condition(status, _new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE, f"{subject} has successfully progressed."))
            elif _progressing(d, status):
                # Progress refreshes lastUpdateTime even with the same reason: the deadline counts from it.
                condition = _new_condition(PROGRESSING, "True", RS_UPDATED, f"{subject} is progressing.")
                if current is not None and current.get("status") == "True":
                    condition["lastTransitionTime"] = current.get("lastTransitionTime")
                _remove_condition(status, PROGRESSING)
                _set_condition(status, condition)
            elif _timed_out(status, deadline):
                _set_condition(status, _new_condition(PROGRESSING, "False", TIMED_OUT, f"{subject} has timed out progressing."))
        failure = _replica_failure(new_rs, all_rss)
        if failure is not None:
            _set_condition(status, failure)
        else:
            _remove_condition(status, REPLICA_FAILURE)
        if _status_differs(_status(d), status):
            await self._write_status(d, status)  # the informer's echo of this write syncs again
        else:
            self._requeue_if_stuck(d, status)

    def _requeue_if_stuck(self, d: Obj, status: Obj) -> None:
        """Look again just after the progress deadline would pass, if nothing happens before."""
        current = _condition(_status(d), PROGRESSING)
        deadline = _progress_deadline(d)
        if deadline is None or current is None or _complete(d, status) or current.get("reason") == TIMED_OUT:
            return
        # lastUpdateTime has whole seconds: one more second is surely past the deadline.
        after = _epoch(current.get("lastUpdateTime")) + deadline - time.time()
        self.queue.add_after(object_key(d), max(after, 0.0) + 1.0)

    async def _check_paused_conditions(self, d: Obj) -> None:
        """Progressing is Unknown while paused, so time spent paused never counts toward the deadline."""
        if _progress_deadline(d) is None:
            return
        current = _condition(_status(d), PROGRESSING)
        if current is not None and current.get("reason") == TIMED_OUT:
            return
        marked = current is not None and current.get("reason") == PAUSED
        paused = bool(own.spec(d).get("paused"))
        if paused and not marked:
            _set_condition(_status(d), _new_condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused"))
        elif not paused and marked:
            _set_condition(_status(d), _new_condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed"))
        else:
            return
        await self._write_status(d, _status(d))

    async def _write_status(self, d: Obj, status: Obj) -> None:
        _refresh(d, await self._deployment_client(d).update_status({**d, "status": status}))

    # -- clients ----------------------------------------------------------------------------
    def _deployment_client(self, d: Obj) -> ResourceClient:
        return self.client.resource("apps", "v1", "deployments", d["metadata"]["namespace"])

    def _rs_client(self, obj: Obj) -> ResourceClient:
        return self.client.resource("apps", "v1", "replicasets", obj["metadata"]["namespace"])


# -- the pod template hash ------------------------------------------------------------------
def pod_template_hash(template: Obj, collision_count: int | None = None) -> str:
    """``controller.ComputeHash``: FNV-1a (32 bits) of the template's canonical JSON, defaulted
    empties left out, then of the collision count; its decimal digits in the safe alphabet."""
    data = orjson.dumps(_without_empties(template), option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        data += collision_count.to_bytes(4, "little")
    value = 0x811C9DC5
    for byte in data:
        value = ((value ^ byte) * 0x01000193) & 0xFFFFFFFF
    return "".join(SAFE_ALPHABET[digit % len(SAFE_ALPHABET)] for digit in str(value).encode())


def _without_empties(value: Any) -> Any:
    """``value`` without nulls, empty objects and empty lists at any depth: decoders fill them in
    or leave them out (``creationTimestamp: null``, ``resources: {}``), and they mean nothing."""
    if isinstance(value, dict):
        kept = {k: _without_empties(v) for k, v in value.items()}
        return {k: v for k, v in kept.items() if v is not None and v != {} and v != []}
    if isinstance(value, list):
        return [_without_empties(v) for v in value]
    return value


def _equal_ignore_hash(a: Obj, b: Obj) -> bool:
    """``EqualIgnoreHash``: two pod templates are the same but for the pod-template-hash label."""
    def strip(template: Obj) -> Any:
        copied = copy.deepcopy(template)
        ((copied.get("metadata") or {}).get("labels") or {}).pop(HASH_LABEL, None)
        return _without_empties(copied)
    return bool(strip(a) == strip(b))


def _find_new_rs(d: Obj, rs_list: list[Obj]) -> Obj | None:
    """The oldest ReplicaSet running the Deployment's template (there may be several after a collision)."""
    template = own.spec(d).get("template") or {}
    return next((rs for rs in sorted(rs_list, key=_created) if _equal_ignore_hash(own.spec(rs).get("template") or {}, template)), None)


# -- annotations ----------------------------------------------------------------------------
def _set_new_rs_annotations(d: Obj, rs: Obj, revision: str, *, exists: bool) -> bool:
    """Copy the Deployment's annotations (but ours and last-applied) to the new ReplicaSet, raise
    its revision to ``revision`` keeping the one it had in the revision history, and on creation
    add the replica annotations; True when anything changed (``SetNewReplicaSetAnnotations``)."""
    annotations = rs["metadata"]["annotations"] = rs["metadata"].get("annotations") or {}
    changed = False
    for key, value in _annotations(d).items():
        if key not in NOT_COPIED and annotations.get(key) != value:
            annotations[key] = value
            changed = True
    previous = annotations.get(REVISION)
    previous_number = _parse_int(previous) if previous else 0
    if previous_number is not None and previous_number < int(revision):
        annotations[REVISION] = revision
        changed = True
        if previous:
            history = [r for r in annotations.get(REVISION_HISTORY, "").split(",") if r] + [previous]
            while len(",".join(history)) > MAX_REVISION_HISTORY_CHARS:
                history.pop(0)
            annotations[REVISION_HISTORY] = ",".join(history)
    if not exists and _set_replicas_annotations(rs, _replicas(d), _replicas(d) + _max_surge(d)):
        changed = True
    return changed


def _set_replicas_annotations(rs: Obj, desired: int, most: int) -> bool:
    changed = _replicas_annotations_differ(rs, desired, most)
    annotations = rs["metadata"]["annotations"] = rs["metadata"].get("annotations") or {}
    annotations[DESIRED_REPLICAS], annotations[MAX_REPLICAS] = str(desired), str(most)
    return changed


def _replicas_annotations_differ(rs: Obj, desired: int, most: int) -> bool:
    annotations = _annotations(rs)
    return annotations.get(DESIRED_REPLICAS) != str(desired) or annotations.get(MAX_REPLICAS) != str(most)


def _revision(rs: Obj) -> int | None:
    """The revision annotation; 0 without one, None when it is no number."""
    value = _annotations(rs).get(REVISION)
    return 0 if value is None else _parse_int(value)


def _max_revision(rss: list[Obj]) -> int:
    return max((r for r in map(_revision, rss) if r is not None), default=0)


def _revision_order(rs: Obj) -> tuple[int, str, str]:
    return (_revision(rs) or 0, *_created(rs))


def _int_annotation(rs: Obj, key: str) -> int | None:
    value = _annotations(rs).get(key)
    return None if value is None else _parse_int(value)


# -- the strategy's arithmetic --------------------------------------------------------------
def _scaled(value: int | str | None, total: int, round_up: bool) -> int:
    """``GetScaledValueFromIntOrPercent``: an int as is, a percentage of ``total`` rounded up or down."""
    if value is None:
        return 0
    if isinstance(value, int):
        return value
    if value.endswith("%"):
        share = int(value[:-1]) * total
        return -(-share // 100) if round_up else share // 100
    return int(value)


def _fenceposts(d: Obj) -> tuple[int, int]:
    """``ResolveFenceposts``: (maxSurge rounded up, maxUnavailable rounded down), never both 0."""
    rolling = (own.spec(d).get("strategy") or {}).get("rollingUpdate") or {}
    surge = _scaled(rolling.get("maxSurge"), _replicas(d), True)
    unavailable = _scaled(rolling.get("maxUnavailable"), _replicas(d), False)
    return (surge, 1) if surge == 0 and unavailable == 0 else (surge, unavailable)


def _max_surge(d: Obj) -> int:
    return 0 if _is_recreate(d) else _fenceposts(d)[0]


def _max_unavailable(d: Obj) -> int:
    if _is_recreate(d) or _replicas(d) == 0:
        return 0
    return min(_fenceposts(d)[1], _replicas(d))


def _new_rs_replicas(d: Obj, all_rss: list[Obj], new_rs: Obj) -> int:
    """The new ReplicaSet's next size: up to ``replicas + maxSurge`` pods in all (``NewRSNewReplicas``)."""
    if _is_recreate(d):
        return _replicas(d)
    rolling = (own.spec(d).get("strategy") or {}).get("rollingUpdate") or {}
    most = _replicas(d) + _scaled(rolling.get("maxSurge"), _replicas(d), True)
    current = sum(_replicas(rs) for rs in all_rss)
    if current >= most:
        return _replicas(new_rs)
    return _replicas(new_rs) + min(most - current, _replicas(d) - _replicas(new_rs))


def _proportion(d: Obj, rs: Obj, to_add: int, added: int) -> int:
    """How many replicas ``rs`` gains (or loses) of ``to_add`` (``GetReplicaSetProportion``)."""
    if _replicas(rs) == 0 or to_add == 0 or to_add == added:
        return 0
    allowed = to_add - added
    fraction = _fraction(d, rs)
    return min(fraction, allowed) if to_add > 0 else max(fraction, allowed)


def _fraction(d: Obj, rs: Obj) -> int:
    """The change that keeps ``rs``'s share of the size it was last scaled for (``getReplicaSetFraction``)."""
    if _replicas(d) == 0:
        return -_replicas(rs)
    annotated = _int_annotation(rs, MAX_REPLICAS)
    if annotated is None:
        annotated = _status(d).get("replicas") or 0
    if annotated == 0:
        return 0  # no size to be a share of: the leftovers go to the largest
    exact = _replicas(rs) * (_replicas(d) + _max_surge(d)) / annotated
    return int(exact + 0.5 if exact >= 0 else exact - 0.5) - _replicas(rs)


def _active_or_latest(new_rs: Obj | None, old_rss: list[Obj]) -> Obj | None:
    """The only active ReplicaSet, or the newest when none is active; None with several active."""
    newest_first = sorted(old_rss, key=_created, reverse=True)
    active = _active([*newest_first, new_rs])
    if len(active) == 1:
        return active[0]
    if not active:
        return new_rs if new_rs is not None else (newest_first[0] if newest_first else None)
    return None


def _is_saturated(d: Obj, rs: Obj | None) -> bool:
    """The new ReplicaSet was sized for this Deployment and all of its pods are available."""
    if rs is None:
        return False
    return _int_annotation(rs, DESIRED_REPLICAS) == _replicas(d) == _replicas(rs) == (_status(rs).get("availableReplicas") or 0)


def _is_scaling_event(d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> bool:
    """``spec.replicas`` changed since an active ReplicaSet was last scaled for it."""
    for rs in _active([*old_rss, new_rs]):
        desired = _int_annotation(rs, DESIRED_REPLICAS)
        if desired is not None and desired != _replicas(d):
            return True
    return False


def _old_pods_running(new_rs: Obj | None, old_rss: list[Obj], pods: dict[str, list[Obj]]) -> bool:
    """Any old pod not finished (Succeeded/Failed), terminating ones included."""
    if sum(_status(rs).get("replicas") or 0 for rs in old_rss):
        return True
    new_uid = own.uid(new_rs) if new_rs is not None else None
    return any(_status(pod).get("phase") not in ("Succeeded", "Failed")
               for uid, owned in pods.items() if uid != new_uid for pod in owned)


# -- status and conditions ------------------------------------------------------------------
def _calculate_status(d: Obj, new_rs: Obj | None, all_rss: list[Obj]) -> Obj:
    """Counters from the ReplicaSets' statuses, the old conditions, and Available (``calculateStatus``)."""
    available = sum(_status(rs).get("availableReplicas") or 0 for rs in all_rss)
    status: Obj = {
        "observedGeneration": d["metadata"].get("generation") or 0,
        "replicas": sum(_status(rs).get("replicas") or 0 for rs in all_rss),
        "updatedReplicas": (_status(new_rs).get("replicas") or 0) if new_rs is not None else 0,
        "readyReplicas": sum(_status(rs).get("readyReplicas") or 0 for rs in all_rss),
        "availableReplicas": available,
        "unavailableReplicas": max(0, sum(_replicas(rs) for rs in all_rss) - available),
        "conditions": copy.deepcopy(_status(d).get("conditions") or []),
    }
    if _status(d).get("collisionCount") is not None:
        status["collisionCount"] = _status(d)["collisionCount"]
    if available >= _replicas(d) - _max_unavailable(d):
        _set_condition(status, _new_condition(AVAILABLE, "True", MIN_AVAILABLE, "Deployment has minimum availability."))
    else:
        _set_condition(status, _new_condition(AVAILABLE, "False", MIN_UNAVAILABLE, "Deployment does not have minimum availability."))
    return status


def _status_differs(current: Obj, wanted: Obj) -> bool:
    """Compared as the server stores them: absent counters are 0, absent conditions an empty list."""
    counters = ("observedGeneration", "replicas", "updatedReplicas", "readyReplicas", "availableReplicas", "unavailableReplicas")
    return (any((current.get(k) or 0) != (wanted.get(k) or 0) for k in counters)
            or current.get("collisionCount") != wanted.get("collisionCount")
            or (current.get("conditions") or []) != (wanted.get("conditions") or []))


def _complete(d: Obj, status: Obj) -> bool:
    """Every replica updated and available, and the latest spec observed (``DeploymentComplete``)."""
    replicas = _replicas(d)
    return ((status.get("updatedReplicas") or 0) == replicas and (status.get("replicas") or 0) == replicas
            and (status.get("availableReplicas") or 0) == replicas
            and (status.get("observedGeneration") or 0) >= (d["metadata"].get("generation") or 0))


def _progressing(d: Obj, status: Obj) -> bool:
    """More pods updated, ready or available, or fewer old ones, than the stored status says."""
    old = _status(d)

    def count(s: Obj, key: str) -> int:
        return int(s.get(key) or 0)
    return (count(status, "updatedReplicas") > count(old, "updatedReplicas")
            or count(status, "replicas") - count(status, "updatedReplicas") < count(old, "replicas") - count(old, "updatedReplicas")
            or count(status, "readyReplicas") > count(old, "readyReplicas")
            or count(status, "availableReplicas") > count(old, "availableReplicas"))


def _timed_out(status: Obj, deadline: int) -> bool:
    """No progress for ``deadline`` seconds since Progressing was last updated (``DeploymentTimedOut``)."""
    condition = _condition(status, PROGRESSING)
    if condition is None or condition.get("reason") == NEW_RS_AVAILABLE:
        return False
    if condition.get("reason") == TIMED_OUT:
        return True
    return _epoch(condition.get("lastUpdateTime")) + deadline < time.time()


def _replica_failure(new_rs: Obj | None, all_rss: list[Obj]) -> Obj | None:
    """A ReplicaFailure of the new ReplicaSet, else of any, as a Deployment condition."""
    for rs in [*([new_rs] if new_rs is not None else []), *all_rss]:
        failure = _condition(_status(rs), REPLICA_FAILURE)
        if failure is not None:
            stamp = failure.get("lastTransitionTime")
            return {"type": REPLICA_FAILURE, "status": failure.get("status"), "lastUpdateTime": stamp, "lastTransitionTime": stamp,
                    "reason": failure.get("reason"), "message": failure.get("message")}
    return None


def _progress_deadline(d: Obj) -> int | None:
    value = own.spec(d).get("progressDeadlineSeconds")
    return None if value is None or value == INT32_MAX else int(value)


def _new_condition(type_: str, status: str, reason: str, message: str) -> Obj:
    now = clock.now()
    return {"type": type_, "status": status, "lastUpdateTime": now, "lastTransitionTime": now, "reason": reason, "message": message}


def _condition(status: Obj, type_: str) -> Obj | None:
    return next((c for c in status.get("conditions") or [] if c.get("type") == type_), None)


def _set_condition(status: Obj, condition: Obj) -> None:
    """Replace the condition of its type unless status and reason are the same; the transition
    time stays when only the reason changes (``SetDeploymentCondition``)."""
    current = _condition(status, condition["type"])
    if current is not None and current.get("status") == condition["status"]:
        if current.get("reason") == condition["reason"]:
            return
        condition["lastTransitionTime"] = current.get("lastTransitionTime")
    _remove_condition(status, condition["type"])
    status["conditions"] = [*status.get("conditions", []), condition]


def _remove_condition(status: Obj, type_: str) -> None:
    status["conditions"] = [c for c in status.get("conditions") or [] if c.get("type") != type_]


# -- small accessors ------------------------------------------------------------------------


def _refresh(obj: Obj, fresh: Obj) -> None:
    """Replace ``obj``'s content with the server's reply, so every list holding it sees the new version."""
    obj.clear()
    obj.update(fresh)




def _status(obj: Obj) -> Obj:
    """The object's status, made a dict in place so conditions can be set on it."""
    if not isinstance(obj.get("status"), dict):
        obj["status"] = {}
    return obj["status"]


def _annotations(obj: Obj) -> dict[str, str]:
    return obj["metadata"].get("annotations") or {}


def _name(obj: Obj) -> str:
    return str(obj["metadata"]["name"])




def _replicas(obj: Obj) -> int:
    replicas = own.spec(obj).get("replicas")
    return 1 if replicas is None else int(replicas)


def _available(rs: Obj) -> int:
    """Available pods counted for scaling down: at most ``spec.replicas``, since a ReplicaSet just
    scaled down still reports the pods it is about to delete."""
    return min(_replicas(rs), int(_status(rs).get("availableReplicas") or 0))


def _active(rss: Sequence[Obj | None]) -> list[Obj]:
    return [rs for rs in rss if rs is not None and _replicas(rs) > 0]


def _created(obj: Obj) -> tuple[str, str]:
    """Sort key, oldest first: RFC 3339 UTC timestamps sort as text; the name breaks ties."""
    return (obj["metadata"].get("creationTimestamp") or "", _name(obj))


def _is_recreate(d: Obj) -> bool:
    return (own.spec(d).get("strategy") or {}).get("type") == "Recreate"








def _reference(d: Obj) -> Obj:
    """The Deployment as an event's involved object (cache copies may lack apiVersion and kind)."""
    return {"apiVersion": API_VERSION, "kind": KIND, "metadata": d["metadata"]}



def _parse_int(text: str) -> int | None:
    try:
        return int(text)
    except ValueError:
        return None


def _epoch(timestamp: str | None) -> float:
    """Seconds since the epoch of an RFC 3339 timestamp; 0 without one."""
    return clock.parse(timestamp).timestamp() if timestamp else 0.0
