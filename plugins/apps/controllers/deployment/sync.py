"""Syncing a Deployment's ReplicaSets (``sync.go``): finding or creating the new one, scaling
without a rollout, cleaning up old revisions, and writing the status.

The methods live on :class:`Sync`, the base of the controller's classes, as they do on Go's
``DeploymentController`` across the files of ``pkg/controller/deployment``.
"""

from __future__ import annotations

import copy
import logging

import aiohttp

from kplane.api import (
    NORMAL, WARNING, ApiError, EventRecorder, OwnWrites, ResourceClient, RESTClient, WorkQueue, controller_ref, get_condition,
    involved_object, object_key, ownership as own, set_condition, spec_replicas,
)
from kplane.plugins.apps.controllers.deployment.objects import (
    API_VERSION, INT32_MAX, KIND, Obj, active, annotations, created, is_recreate, name, refresh, status,
)
from kplane.plugins.apps.controllers.deployment.revisions import (
    HASH_LABEL, REVISION, equal_ignore_hash, find_new_rs, max_revision, pod_template_hash, revision_order,
    set_new_rs_annotations,
)
from kplane.plugins.apps.controllers.deployment.scaling import (
    active_or_latest, is_saturated, max_surge, new_rs_replicas, proportion, replicas_annotations_differ,
    set_replicas_annotations,
)
from kplane.plugins.apps.controllers.deployment.status import (
    FOUND_NEW_RS, NEW_RS_CREATED, PAUSED, PROGRESSING, RESUMED, RS_CREATE_ERROR, TIMED_OUT, calculate_status,
    new_condition, progress_deadline, status_differs,
)

log = logging.getLogger(__name__)


class RetryLater(Exception):
    """The sync cannot finish now (e.g. a hash collision was recorded) and must run again."""


class Sync:
    """What every part of a sync uses: the clients, the recorder, the queue, and the writes."""

    client: RESTClient
    recorder: EventRecorder
    queue: WorkQueue[str]
    own_writes: OwnWrites

    # -- the new ReplicaSet and revisions ---------------------------------------------------
    async def _find_replica_sets(self, d: Obj, rs_list: list[Obj]) -> tuple[Obj | None, list[Obj]]:
        """The new ReplicaSet (None when there is none yet) and the old ones. An existing new one
        gets the next revision if it is not the latest (a rollback), the Deployment's annotations
        and minReadySeconds; its revision goes to the Deployment (``getNewReplicaSet``)."""
        new_rs = find_new_rs(d, rs_list)
        old_rss = [rs for rs in rs_list if rs is not new_rs]
        if new_rs is None:
            return None, old_rss
        wanted = copy.deepcopy(new_rs)
        changed = set_new_rs_annotations(d, wanted, str(max_revision(old_rss) + 1))
        if (own.spec(wanted).get("minReadySeconds") or 0) != (own.spec(d).get("minReadySeconds") or 0):
            wanted["spec"]["minReadySeconds"] = own.spec(d).get("minReadySeconds") or 0
            changed = True
        if changed:
            refresh(new_rs, await self._rs_client(new_rs).update(wanted))
        revision = annotations(new_rs).get(REVISION)
        needs_update = revision is not None and _set_deployment_revision(d, revision)
        if progress_deadline(d) is not None and get_condition(status(d), PROGRESSING) is None:
            # Progress was not tracked so far: count from the first time the new ReplicaSet is seen.
            set_condition(status(d), new_condition(PROGRESSING, "True", FOUND_NEW_RS, f'Found new replica set "{name(new_rs)}"'))
            needs_update = True
        if needs_update:  # the revision and the condition in one write, as kube's getNewReplicaSet
            await self._write_status(d, status(d))
        return new_rs, old_rss

    async def _create_new_rs(self, d: Obj, old_rss: list[Obj]) -> Obj:
        """Create ``<deployment>-<hash>`` for the current template, already scaled as far as the
        strategy allows; a name taken by a foreign ReplicaSet bumps ``status.collisionCount``."""
        pod_hash = pod_template_hash(own.spec(d).get("template") or {}, status(d).get("collisionCount"))
        template = copy.deepcopy(own.spec(d).get("template") or {})
        template_meta = template["metadata"] = template.get("metadata") or {}
        template_meta["labels"] = {**(template_meta.get("labels") or {}), HASH_LABEL: pod_hash}
        selector = copy.deepcopy(own.spec(d).get("selector") or {})
        selector["matchLabels"] = {**(selector.get("matchLabels") or {}), HASH_LABEL: pod_hash}
        rs: Obj = {
            "apiVersion": "apps/v1",
            "kind": "ReplicaSet",
            "metadata": {"name": f"{name(d)}-{pod_hash}", "namespace": d["metadata"]["namespace"],
                         "labels": dict(template_meta["labels"]), "ownerReferences": [own.controller_reference(d, API_VERSION, KIND)]},
            "spec": {"replicas": 0, "minReadySeconds": own.spec(d).get("minReadySeconds") or 0, "selector": selector, "template": template},
        }
        replicas = rs["spec"]["replicas"] = new_rs_replicas(d, [*old_rss, rs], rs)
        revision = str(max_revision(old_rss) + 1)
        set_new_rs_annotations(d, rs, revision)
        set_replicas_annotations(rs, spec_replicas(d), spec_replicas(d) + max_surge(d))
        created_now = True
        try:
            stored = await self._rs_client(rs).create(rs)
        except ApiError as err:
            if err.code == 409:
                created_now = False
                stored = await self._existing_new_rs(d, name(rs))
            elif err.namespace_terminating:
                raise  # every create there fails: nothing to report
            else:
                await self._report_create_failure(d, name(rs), err)
                raise
        if created_now and replicas > 0:
            self.recorder.event(involved_object(d, API_VERSION, KIND), NORMAL, "ScalingReplicaSet",
                                f"Scaled up replica set {name(stored)} from 0 to {replicas}")
        needs_update = _set_deployment_revision(d, revision)
        if created_now and progress_deadline(d) is not None:
            set_condition(status(d), new_condition(PROGRESSING, "True", NEW_RS_CREATED, f'Created new replica set "{name(stored)}"'))
            needs_update = True
        if needs_update:  # one write for both, as kube's getNewReplicaSet
            await self._write_status(d, status(d))
        return stored

    async def _existing_new_rs(self, d: Obj, rs_name: str) -> Obj:
        """The ReplicaSet by the new one's name: ours if we control it with this template (a stale
        cache), else a hash collision: count it so the next sync hashes differently."""
        existing = await self._rs_client(d).get(rs_name)
        ref = controller_ref(existing)
        if ref is not None and ref.get("uid") == own.uid(d) and equal_ignore_hash(own.spec(d).get("template") or {}, own.spec(existing).get("template") or {}):
            return existing
        status(d)["collisionCount"] = (status(d).get("collisionCount") or 0) + 1
        await self._write_status(d, status(d))
        raise RetryLater(f"replica set {rs_name} exists with another template (hash collision {status(d)['collisionCount']})")

    async def _report_create_failure(self, d: Obj, rs_name: str, err: ApiError) -> None:
        message = f'Failed to create new replica set "{rs_name}": {err.status.get("message") or err}'
        if progress_deadline(d) is not None:
            set_condition(status(d), new_condition(PROGRESSING, "False", RS_CREATE_ERROR, message))
            try:
                await self._write_status(d, status(d))
            except (ApiError, aiohttp.ClientError) as status_err:  # the create failure is the one to report
                log.info("deployment %s: status not written: %s", object_key(d), status_err)
        self.recorder.event(involved_object(d, API_VERSION, KIND), WARNING, RS_CREATE_ERROR, message)

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
        target = active_or_latest(new_rs, old_rss)
        if target is not None:
            await self._scale_and_record(d, target, spec_replicas(d))
            return
        if is_saturated(d, new_rs):
            for rs in active(old_rss):
                await self._scale_and_record(d, rs, 0)
            return
        if is_recreate(d):
            return
        running = active([*old_rss, new_rs])
        allowed = spec_replicas(d) + max_surge(d) if spec_replicas(d) > 0 else 0
        to_add = allowed - sum(spec_replicas(rs) for rs in running)
        running.sort(key=created, reverse=to_add > 0)  # then by size: ties go to the newer when adding
        running.sort(key=spec_replicas, reverse=True)
        sizes, added = [], 0
        for rs in running:
            share = proportion(d, rs, to_add, added)
            sizes.append(spec_replicas(rs) + share)
            added += share
        if to_add and sizes:
            sizes[0] = max(0, sizes[0] + to_add - added)  # leftovers to the largest
        operation = "up" if to_add > 0 else "down"
        for rs, size in zip(running, sizes, strict=True):
            await self._scale_rs(d, rs, size, operation)

    async def _scale_and_record(self, d: Obj, rs: Obj, size: int) -> bool:
        if spec_replicas(rs) == size:
            return False
        return await self._scale_rs(d, rs, size, "up" if spec_replicas(rs) < size else "down")

    async def _scale_rs(self, d: Obj, rs: Obj, size: int, operation: str) -> bool:
        """Set the ReplicaSet's size and its desired/max-replicas annotations; True when the size changed."""
        desired, most = spec_replicas(d), spec_replicas(d) + max_surge(d)
        resized = spec_replicas(rs) != size
        if not resized and not replicas_annotations_differ(rs, desired, most):
            return False
        before = spec_replicas(rs)
        wanted = copy.deepcopy(rs)
        wanted["spec"]["replicas"] = size
        set_replicas_annotations(wanted, desired, most)
        refresh(rs, await self._rs_client(rs).update(wanted))
        if resized:
            self.recorder.event(involved_object(d, API_VERSION, KIND), NORMAL, "ScalingReplicaSet",
                                f"Scaled {operation} replica set {name(rs)} from {before} to {size}")
        return resized

    async def _cleanup(self, d: Obj, old_rss: list[Obj]) -> None:
        """Delete the oldest revisions beyond ``revisionHistoryLimit``, only those scaled to 0 and settled."""
        limit = own.spec(d).get("revisionHistoryLimit")
        if limit is None or limit == INT32_MAX:
            return
        alive = [rs for rs in old_rss if not rs["metadata"].get("deletionTimestamp")]
        for rs in sorted(alive, key=revision_order)[:max(0, len(alive) - limit)]:
            settled = (rs["metadata"].get("generation") or 0) <= (status(rs).get("observedGeneration") or 0)
            if spec_replicas(rs) or status(rs).get("replicas") or not settled:
                continue
            try:
                await self._rs_client(rs).delete(name(rs))
            except ApiError as err:
                if err.code != 404:
                    raise

    # -- status -----------------------------------------------------------------------------
    async def _sync_status(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        """Counters and the Available condition only (``syncDeploymentStatus``)."""
        calculated = calculate_status(d, new_rs, [*old_rss, *([new_rs] if new_rs is not None else [])])
        if status_differs(status(d), calculated):
            await self._write_status(d, calculated)

    async def _check_paused_conditions(self, d: Obj) -> None:
        """Progressing is Unknown while paused, so time spent paused never counts toward the deadline."""
        if progress_deadline(d) is None:
            return
        current = get_condition(status(d), PROGRESSING)
        if current is not None and current.get("reason") == TIMED_OUT:
            return
        marked = current is not None and current.get("reason") == PAUSED
        paused = bool(own.spec(d).get("paused"))
        if paused and not marked:
            set_condition(status(d), new_condition(PROGRESSING, "Unknown", PAUSED, "Deployment is paused"))
        elif not paused and marked:
            set_condition(status(d), new_condition(PROGRESSING, "Unknown", RESUMED, "Deployment is resumed"))
        else:
            return
        await self._write_status(d, status(d))

    async def _write_status(self, d: Obj, wanted: Obj) -> None:
        reply = await self._deployment_client(d).update_status({**d, "status": wanted})
        self.own_writes.wrote(object_key(d), reply)  # kept as the server sent it: the sync goes on changing ``d``
        refresh(d, copy.deepcopy(reply))

    # -- clients ----------------------------------------------------------------------------
    def _deployment_client(self, d: Obj) -> ResourceClient:
        return self.client.resource("apps", "v1", "deployments", d["metadata"]["namespace"])

    def _rs_client(self, obj: Obj) -> ResourceClient:
        return self.client.resource("apps", "v1", "replicasets", obj["metadata"]["namespace"])


def _set_deployment_revision(d: Obj, revision: str) -> bool:
    """Copy the new ReplicaSet's revision to the Deployment's annotations; True when it changed
    (``SetDeploymentRevision``). The caller writes it with the status, as kube-controller-manager
    does: the Deployment status strategy takes annotations, and a change through ``/status``
    leaves the generation alone."""
    if annotations(d).get(REVISION) == revision:
        return False
    d["metadata"]["annotations"] = {**annotations(d), REVISION: revision}
    return True
