"""Storage object in-use protection (``pkg/controller/volume/{pvcprotection,pvprotection}``).

Claims and volumes are created with a protection finalizer; once they are being deleted, these
controllers take it off as soon as nothing uses them: a claim when no Pod that has not finished
mounts it (checked against the server, not only the cache, as kube does), a volume when it is
no longer Bound.
"""

from __future__ import annotations

from typing import Any

from kplane.api import ApiError, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, object_key, wait_synced
from kplane.api import ownership as own

Obj = dict[str, Any]

PV_PROTECTION, PVC_PROTECTION = "kubernetes.io/pv-protection", "kubernetes.io/pvc-protection"
FINISHED = ("Succeeded", "Failed")


def uses(pod: Obj, claim: str) -> bool:
    """The Pod mounts the claim, directly or as its generic ephemeral volume ``<pod>-<volume>``."""
    for volume in own.spec(pod).get("volumes") or []:
        if (volume.get("persistentVolumeClaim") or {}).get("claimName") == claim:
            return True
        if "ephemeral" in volume and f"{pod['metadata']['name']}-{volume.get('name')}" == claim:
            return True
    return False


async def _release(resource: Any, obj: Obj, finalizer: str) -> None:
    """Take ``finalizer`` off ``obj`` if it is still the version read."""
    meta = obj["metadata"]
    kept = [f for f in meta.get("finalizers") or [] if f != finalizer]
    try:
        await resource.patch(meta["name"], {"metadata": {"resourceVersion": meta["resourceVersion"], "finalizers": kept or None}})
    except ApiError as err:
        if err.code != 404:
            raise


class ClaimProtection:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory) -> None:
        self.client = client
        self.informers = informers
        self.claims = informers.informer("", "v1", "persistentvolumeclaims")
        self.pods = informers.informer("", "v1", "pods")
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        self.claims.add_handlers(Handlers(on_add=self._claim_changed, on_update=lambda _, claim: self._claim_changed(claim)))
        self.pods.add_handlers(Handlers(on_update=lambda old, pod: self._pod_changed(pod), on_delete=self._pod_changed))
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.claims, self.pods)
            workers.start(1, self.sync, name="pvc-protection")
            await workers.wait()

    def _claim_changed(self, claim: Obj) -> None:
        if claim["metadata"].get("deletionTimestamp") and PVC_PROTECTION in (claim["metadata"].get("finalizers") or []):
            self.queue.add(object_key(claim))

    def _pod_changed(self, pod: Obj) -> None:
        """A Pod that finished or went may have been the last user of a claim being deleted."""
        namespace = pod["metadata"].get("namespace", "")
        for volume in own.spec(pod).get("volumes") or []:
            if name := (volume.get("persistentVolumeClaim") or {}).get("claimName"):
                self.queue.add(f"{namespace}/{name}")

    async def sync(self, key: str) -> None:
        claim = self.claims.indexer.get(key)
        if claim is None or not claim["metadata"].get("deletionTimestamp") or PVC_PROTECTION not in (claim["metadata"].get("finalizers") or []):
            return
        namespace, _, name = key.partition("/")
        cached = self.pods.lister().namespaced(namespace).list()
        if any(uses(p, name) and (p.get("status") or {}).get("phase") not in FINISHED for p in cached):
            return
        live = (await self.client.resource("", "v1", "pods", namespace).list())["items"]
        if any(uses(p, name) and (p.get("status") or {}).get("phase") not in FINISHED for p in live):
            return
        await _release(self.client.resource("", "v1", "persistentvolumeclaims", namespace), claim, PVC_PROTECTION)


class VolumeProtection:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory) -> None:
        self.client = client
        self.informers = informers
        self.volumes = informers.informer("", "v1", "persistentvolumes")
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        self.volumes.add_handlers(Handlers(on_add=self._changed, on_update=lambda _, volume: self._changed(volume)))
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.volumes)
            workers.start(1, self.sync, name="pv-protection")
            await workers.wait()

    def _changed(self, volume: Obj) -> None:
        if volume["metadata"].get("deletionTimestamp") and PV_PROTECTION in (volume["metadata"].get("finalizers") or []):
            self.queue.add(volume["metadata"]["name"])

    async def sync(self, name: str) -> None:
        volume = self.volumes.indexer.get(name)
        if volume is None or not volume["metadata"].get("deletionTimestamp") or PV_PROTECTION not in (volume["metadata"].get("finalizers") or []):
            return
        if (volume.get("status") or {}).get("phase") == "Bound":
            return
        await _release(self.client.resource("", "v1", "persistentvolumes"), volume, PV_PROTECTION)
