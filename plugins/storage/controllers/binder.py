"""The PersistentVolume binder (kube-controller-manager's ``persistentvolume-binder``,
``pkg/controller/volume/persistentvolume``), with the provisioner kplane simulates.

A claim without a volume is bound to the smallest Available volume that fits it (same
StorageClass and volume mode, every access mode it asks for, at least the storage it requests,
labels its selector matches; a volume pre-bound to it by ``claimRef`` first). When none fits and
its class's provisioner is ``kplane.io/simulated``, a volume ``pvc-<claim uid>`` is made for it
(at once for ``Immediate`` classes, once a scheduled Pod uses the claim for
``WaitForFirstConsumer``) with the class's reclaim policy and a made-up ``hostPath``; nothing
is written on any disk. Other provisioners are waited for, as kube waits for external ones.

Binding writes both sides: the volume's ``claimRef`` and ``Bound`` phase, the claim's
``volumeName``, ``Bound`` phase, access modes and capacity, with kube's annotations. A volume
whose claim is gone is ``Released``, and deleted when its policy is Delete; a bound claim whose
volume is gone is ``Lost``.
"""

from __future__ import annotations

import copy
from fractions import Fraction
from typing import Any

from kplane.api import (
    NORMAL, WARNING, ApiError, EventRecorder, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers,
    involved_object, object_key, quantity, wait_synced,
)
from kplane.api import ownership as own
from kplane.plugins.storage.defaultclass import PROVISIONER

Obj = dict[str, Any]

COMPONENT = "persistentvolume-controller"
BIND_COMPLETED = "pv.kubernetes.io/bind-completed"
BOUND_BY_CONTROLLER = "pv.kubernetes.io/bound-by-controller"
PROVISIONED_BY = "pv.kubernetes.io/provisioned-by"
STORAGE_PROVISIONER = "volume.kubernetes.io/storage-provisioner"
BETA_STORAGE_PROVISIONER = "volume.beta.kubernetes.io/storage-provisioner"
SELECTED_NODE = "volume.kubernetes.io/selected-node"
BETA_CLASS = "volume.beta.kubernetes.io/storage-class"
CLAIM, VOLUME = "claim:", "volume:"


def class_of(obj: Obj) -> str:
    return own.spec(obj).get("storageClassName") or (obj["metadata"].get("annotations") or {}).get(BETA_CLASS, "")


def _storage(value: Any) -> Fraction:
    try:
        return quantity.parse(value).value
    except ValueError:
        return Fraction(0)


def fits(volume: Obj, claim: Obj) -> bool:
    """Whether the Available ``volume`` can serve ``claim`` (``findMatchingVolume``'s checks)."""
    spec, wanted = own.spec(volume), own.spec(claim)
    if class_of(volume) != class_of(claim) or (spec.get("volumeMode") or "Filesystem") != (wanted.get("volumeMode") or "Filesystem"):
        return False
    if not set(wanted.get("accessModes") or ()) <= set(spec.get("accessModes") or ()):
        return False
    request = ((wanted.get("resources") or {}).get("requests") or {}).get("storage")
    if _storage((spec.get("capacity") or {}).get("storage")) < _storage(request):
        return False
    selector = wanted.get("selector") or {}
    if not selector.get("matchLabels") and not selector.get("matchExpressions"):
        return True  # an empty selector selects every volume
    parsed = own.selector(claim)
    return parsed is not None and parsed.matches(volume["metadata"].get("labels"))


def claim_ref(claim: Obj) -> Obj:
    meta = claim["metadata"]
    return {"kind": "PersistentVolumeClaim", "namespace": meta["namespace"], "name": meta["name"], "uid": meta["uid"],
            "apiVersion": "v1", "resourceVersion": meta.get("resourceVersion")}


def _refers_to(volume: Obj, claim: Obj) -> bool:
    """The volume's claimRef names the claim (and, if it says, its uid)."""
    ref = own.spec(volume).get("claimRef") or {}
    meta = claim["metadata"]
    return ref.get("name") == meta["name"] and ref.get("namespace") == meta["namespace"] and ref.get("uid") in (None, "", meta["uid"])


def _uses(pod: Obj, claim_name: str) -> bool:
    return any((v.get("persistentVolumeClaim") or {}).get("claimName") == claim_name for v in own.spec(pod).get("volumes") or [])


class VolumeBinder:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 2) -> None:
        self.client = client
        self.workers = workers
        self.informers = informers
        self.claims = informers.informer("", "v1", "persistentvolumeclaims")
        self.volumes = informers.informer("", "v1", "persistentvolumes")
        self.classes = informers.informer("storage.k8s.io", "v1", "storageclasses")
        self.pods = informers.informer("", "v1", "pods")
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)
        self._waiting: set[str] = set()  # claims told they wait, so the event is sent once

    async def run(self) -> None:
        self.claims.add_handlers(Handlers.for_any(self._claim_changed))
        self.volumes.add_handlers(Handlers.for_any(self._volume_changed))
        self.classes.add_handlers(Handlers(on_add=self._class_added))
        self.pods.add_handlers(Handlers(on_add=self._pod_changed, on_update=lambda _, pod: self._pod_changed(pod)))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.claims, self.volumes, self.classes, self.pods)
            workers.start(self.workers, self.sync, name="persistentvolume-binder")
            await workers.wait()

    def _claim_changed(self, claim: Obj) -> None:
        self.queue.add(CLAIM + object_key(claim))
        if name := own.spec(claim).get("volumeName"):  # gone, its volume is released
            self.queue.add(VOLUME + name)

    def _volume_changed(self, volume: Obj) -> None:
        self.queue.add(VOLUME + volume["metadata"]["name"])
        ref = own.spec(volume).get("claimRef")
        if ref and ref.get("namespace") and ref.get("name"):
            self.queue.add(f"{CLAIM}{ref['namespace']}/{ref['name']}")

    def _class_added(self, _: Obj) -> None:
        for claim in self.claims.lister().list():  # claims that waited for their class
            if not own.spec(claim).get("volumeName"):
                self.queue.add(CLAIM + object_key(claim))

    def _pod_changed(self, pod: Obj) -> None:
        """A scheduled Pod may be the first consumer a claim waits for."""
        if not own.spec(pod).get("nodeName"):
            return
        for volume in own.spec(pod).get("volumes") or []:
            if name := (volume.get("persistentVolumeClaim") or {}).get("claimName"):
                self.queue.add(f"{CLAIM}{pod['metadata'].get('namespace')}/{name}")

    async def sync(self, key: str) -> None:
        if key.startswith(CLAIM):
            claim = self.claims.indexer.get(key[len(CLAIM):])
            if claim is not None and not claim["metadata"].get("deletionTimestamp"):
                await self._sync_claim(claim)
        else:
            volume = self.volumes.indexer.get(key[len(VOLUME):])
            if volume is not None:
                await self._sync_volume(volume)

    # -- claims -----------------------------------------------------------------------------
    async def _sync_claim(self, claim: Obj) -> None:
        name = own.spec(claim).get("volumeName")
        if name:
            volume = self.volumes.indexer.get(name)
            if volume is None:
                if (claim.get("status") or {}).get("phase") == "Bound":
                    await self._claim_phase(claim, "Lost")
                    self.recorder.event(self._ref(claim), WARNING, "ClaimLost", "Bound claim has lost its PersistentVolume. Data on the volume is lost!")
                return
            if _refers_to(volume, claim):
                await self._bind(volume, claim)
            elif (claim.get("status") or {}).get("phase") == "Bound":
                await self._claim_phase(claim, "Lost")
                self.recorder.event(self._ref(claim), WARNING, "ClaimMisbound", "Two claims are bound to the same volume, this one is bound incorrectly")
            return
        volume = self._find_volume(claim)
        if volume is not None:
            await self._bind(volume, claim)
            return
        await self._provision_or_wait(claim)

    def _find_volume(self, claim: Obj) -> Obj | None:
        """A volume pre-bound to the claim, else the smallest Available one that fits."""
        candidates = [v for v in self.volumes.lister().list() if not v["metadata"].get("deletionTimestamp")]
        for volume in candidates:
            if _refers_to(volume, claim):
                return volume
        free = [v for v in candidates if not own.spec(v).get("claimRef") and (v.get("status") or {}).get("phase") in ("Available", "Pending", None)
                and fits(v, claim)]
        return min(free, key=lambda v: (_storage((own.spec(v).get("capacity") or {}).get("storage")), v["metadata"]["name"]), default=None)

    async def _provision_or_wait(self, claim: Obj) -> None:
        class_name = class_of(claim)
        key = object_key(claim)
        if not class_name:
            self._tell_once(claim, NORMAL, "FailedBinding", "no persistent volumes available for this claim and no storage class is set")
            return
        storage_class = self.classes.indexer.get(class_name)
        if storage_class is None:
            self._tell_once(claim, WARNING, "ProvisioningFailed", f'storageclass.storage.k8s.io "{class_name}" not found')
            return
        provisioner = storage_class.get("provisioner", "")
        if storage_class.get("volumeBindingMode") == "WaitForFirstConsumer" and not self._consumed(claim):
            self._tell_once(claim, NORMAL, "WaitForFirstConsumer", "waiting for first consumer to be created before binding")
            return
        claim = await self._annotate_provisioner(claim, provisioner)
        if provisioner != PROVISIONER:
            self._tell_once(claim, NORMAL, "ExternalProvisioning", (
                f"Waiting for a volume to be created either by the external provisioner '{provisioner}' or manually by the "
                "system administrator. If volume creation is delayed, please verify that the provisioner is running and "
                "correctly registered."))
            return
        volume = self._provisioned(claim, storage_class)
        try:
            await self.client.resource("", "v1", "persistentvolumes").create(volume)
        except ApiError as err:
            if err.code != 409:  # made already: the binder binds it
                raise
            return
        self._waiting.discard(key)
        self.recorder.event(self._ref(claim), NORMAL, "ProvisioningSucceeded",
                            f"Successfully provisioned volume {volume['metadata']['name']} using {PROVISIONER}")

    def _consumed(self, claim: Obj) -> bool:
        pods = self.pods.lister().namespaced(claim["metadata"]["namespace"]).list()
        annotations = claim["metadata"].get("annotations") or {}
        return SELECTED_NODE in annotations or any(own.spec(p).get("nodeName") and _uses(p, claim["metadata"]["name"]) for p in pods)

    def _tell_once(self, claim: Obj, type_: str, reason: str, message: str) -> None:
        key = f"{object_key(claim)}/{reason}"
        if key not in self._waiting:
            self._waiting.add(key)
            self.recorder.event(self._ref(claim), type_, reason, message)

    async def _annotate_provisioner(self, claim: Obj, provisioner: str) -> Obj:
        annotations = claim["metadata"].get("annotations") or {}
        if annotations.get(STORAGE_PROVISIONER) == provisioner:
            return claim
        updated = copy.deepcopy(claim)
        updated["metadata"]["annotations"] = {**annotations, STORAGE_PROVISIONER: provisioner, BETA_STORAGE_PROVISIONER: provisioner}
        return await self._claims(claim).update(updated)

    def _provisioned(self, claim: Obj, storage_class: Obj) -> Obj:
        spec = own.spec(claim)
        name = f"pvc-{claim['metadata']['uid']}"
        volume_spec: Obj = {
            "capacity": {"storage": ((spec.get("resources") or {}).get("requests") or {}).get("storage")},
            "accessModes": spec.get("accessModes"),
            "persistentVolumeReclaimPolicy": storage_class.get("reclaimPolicy") or "Delete",
            "storageClassName": class_of(claim),
            "volumeMode": spec.get("volumeMode") or "Filesystem",
            "hostPath": {"path": f"/var/lib/kplane/volumes/{name}", "type": "DirectoryOrCreate"},
            "claimRef": claim_ref(claim),
        }
        if storage_class.get("mountOptions"):
            volume_spec["mountOptions"] = storage_class["mountOptions"]
        return {"apiVersion": "v1", "kind": "PersistentVolume",
                "metadata": {"name": name, "annotations": {PROVISIONED_BY: PROVISIONER}}, "spec": volume_spec}

    async def _bind(self, volume: Obj, claim: Obj) -> None:
        """Both sides of a binding, each written only where it is not so yet (``bind``)."""
        volumes = self.client.resource("", "v1", "persistentvolumes")
        ref = own.spec(volume).get("claimRef") or {}
        if ref.get("uid") != claim["metadata"]["uid"]:
            updated = copy.deepcopy(volume)
            updated["spec"]["claimRef"] = claim_ref(claim)
            annotations = updated["metadata"].get("annotations") or {}
            if not ref:
                updated["metadata"]["annotations"] = {**annotations, BOUND_BY_CONTROLLER: "yes"}
            volume = await volumes.update(updated)
        if (volume.get("status") or {}).get("phase") != "Bound":
            volume = await volumes.update_status({**volume, "status": {**(volume.get("status") or {}), "phase": "Bound"}})
        annotations = claim["metadata"].get("annotations") or {}
        if own.spec(claim).get("volumeName") != volume["metadata"]["name"] or annotations.get(BIND_COMPLETED) != "yes":
            updated = copy.deepcopy(claim)
            updated["spec"]["volumeName"] = volume["metadata"]["name"]
            more = {BIND_COMPLETED: "yes"} | ({} if own.spec(claim).get("volumeName") else {BOUND_BY_CONTROLLER: "yes"})
            updated["metadata"]["annotations"] = {**annotations, **more}
            claim = await self._claims(claim).update(updated)
        status = {"phase": "Bound", "accessModes": own.spec(volume).get("accessModes"),
                  "capacity": own.spec(volume).get("capacity")}
        current = claim.get("status") or {}
        if any(current.get(k) != v for k, v in status.items()):
            await self._claims(claim).update_status({**claim, "status": {**current, **status}})
            self._waiting = {k for k in self._waiting if not k.startswith(object_key(claim) + "/")}

    async def _claim_phase(self, claim: Obj, phase: str) -> None:
        if (claim.get("status") or {}).get("phase") != phase:
            await self._claims(claim).update_status({**claim, "status": {**(claim.get("status") or {}), "phase": phase}})

    # -- volumes ----------------------------------------------------------------------------
    async def _sync_volume(self, volume: Obj) -> None:
        volumes = self.client.resource("", "v1", "persistentvolumes")
        ref = own.spec(volume).get("claimRef")
        phase = (volume.get("status") or {}).get("phase")
        if not ref:
            if phase in ("Pending", None):
                await volumes.update_status({**volume, "status": {**(volume.get("status") or {}), "phase": "Available"}})
            return
        if not ref.get("uid"):
            return  # pre-bound to a claim by name: the claim's sync binds it
        claim = self.claims.indexer.get(f"{ref.get('namespace')}/{ref.get('name')}")
        if claim is not None and claim["metadata"]["uid"] == ref["uid"]:
            return  # bound, or being bound by the claim's sync
        if phase != "Released" and phase != "Failed":
            volume = await volumes.update_status({**volume, "status": {**(volume.get("status") or {}), "phase": "Released"}})
        policy = own.spec(volume).get("persistentVolumeReclaimPolicy") or "Retain"
        if policy == "Delete" and not volume["metadata"].get("deletionTimestamp"):
            try:
                await volumes.delete(volume["metadata"]["name"])
            except ApiError as err:
                if err.code != 404:
                    raise
        elif policy == "Recycle" and phase != "Failed":
            await volumes.update_status({**volume, "status": {"phase": "Failed", "reason": "VolumeFailedRecycle",
                                                               "message": "recycling is not supported: the volume is simulated"}})

    # -- helpers ----------------------------------------------------------------------------
    def _claims(self, claim: Obj) -> Any:
        return self.client.resource("", "v1", "persistentvolumeclaims", claim["metadata"]["namespace"])

    @staticmethod
    def _ref(claim: Obj) -> Obj:
        return involved_object(claim, "v1", "PersistentVolumeClaim")
