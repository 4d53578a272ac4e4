"""The writes a StatefulSet sync makes to its pods and claims (``stateful_pod_control.go``),
each recorded as the Event Kubernetes records for it."""

from __future__ import annotations

import copy

from kplane.api import NORMAL, WARNING, ApiError, EventRecorder, Informer, RESTClient, ResourceClient, involved_object
from kplane.plugins.apps.controllers.statefulset import identity as ident
from kplane.plugins.apps.controllers.statefulset.identity import API_VERSION, KIND, Obj


class StaleClaim(Exception):
    """A claim of the pod to create still belongs to an earlier pod of that ordinal, or is being
    deleted: the pod must wait (the sync is retried), or it would mount a claim about to go."""


class PodControl:
    def __init__(self, client: RESTClient, claims: Informer, recorder: EventRecorder) -> None:
        self.client = client
        self.claims = claims
        self.recorder = recorder

    def _event(self, sts: Obj, type_: str, reason: str, message: str) -> None:
        self.recorder.event(involved_object(sts, API_VERSION, KIND), type_, reason, message)

    def _pods(self, sts: Obj) -> ResourceClient:
        return self.client.resource("", "v1", "pods", sts["metadata"]["namespace"])

    def _claims(self, sts: Obj) -> ResourceClient:
        return self.client.resource("", "v1", "persistentvolumeclaims", sts["metadata"]["namespace"])

    def _cached_claim(self, sts: Obj, name: str) -> Obj | None:
        return self.claims.indexer.get(f"{sts['metadata']['namespace']}/{name}")

    def claim_is_stale(self, sts: Obj, index: int) -> bool:
        """``PodClaimIsStale``: a claim of replica ``index`` owned by a pod, before that pod exists."""
        for claim in ident.claims_for(sts, index).values():
            cached = self._cached_claim(sts, claim["metadata"]["name"])
            if cached is not None and any(r.get("kind") == "Pod" for r in cached["metadata"].get("ownerReferences") or []):
                return True
        return False

    async def create_claims(self, sts: Obj, pod: Obj) -> None:
        """Create the pod's missing claims (``createPersistentVolumeClaims``); one being deleted is an error."""
        index = ident.ordinal(pod)
        for claim in ident.claims_for(sts, index).values():
            name = claim["metadata"]["name"]
            cached = self._cached_claim(sts, name)
            if cached is not None:
                if cached["metadata"].get("deletionTimestamp"):
                    message = f"pvc {name} is being deleted"
                    self._event(sts, WARNING, "FailedCreate", f"create Claim {name} for Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} failed error: {message}")
                    raise StaleClaim(message)
                continue
            refs = ident.claim_owner_refs(claim, sts, None, condemned=False)
            if refs:
                claim["metadata"]["ownerReferences"] = refs
            try:
                await self._claims(sts).create(claim)
            except ApiError as err:
                if err.code == 409 and err.reason == "AlreadyExists":
                    continue  # made by an earlier sync the cache does not show yet
                self._event(sts, WARNING, "FailedCreate", f"create Claim {name} for Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} failed error: {_message(err)}")
                raise
            self._event(sts, NORMAL, "SuccessfulCreate", f"create Claim {name} Pod {pod['metadata']['name']} in StatefulSet {sts['metadata']['name']} success")

    async def create_pod(self, sts: Obj, pod: Obj) -> None:
        """Its claims first, then the pod (``CreateStatefulPod``); a pod by that name that exists
        already is one the cache does not show yet, not a failure."""
        await self.create_claims(sts, pod)
        name = pod["metadata"]["name"]
        try:
            await self._pods(sts).create(pod)
        except ApiError as err:
            if err.code == 409 and err.reason == "AlreadyExists":
                return
            self._event(sts, WARNING, "FailedCreate", f"create Pod {name} in StatefulSet {sts['metadata']['name']} failed error: {_message(err)}")
            raise
        self._event(sts, NORMAL, "SuccessfulCreate", f"create Pod {name} in StatefulSet {sts['metadata']['name']} successful")

    async def update_pod(self, sts: Obj, pod: Obj) -> None:
        """Restore a pod's identity and storage (``UpdateStatefulPod``), guarded by its resourceVersion."""
        updated = copy.deepcopy(pod)
        if not ident.storage_matches(sts, updated):
            await self.create_claims(sts, updated)
        ident.set_identity(sts, updated)
        name = pod["metadata"]["name"]
        try:
            await self._pods(sts).update(updated)
        except ApiError as err:
            if err.code == 404:
                return
            self._event(sts, WARNING, "FailedUpdate", f"update Pod {name} in StatefulSet {sts['metadata']['name']} failed error: {_message(err)}")
            raise
        self._event(sts, NORMAL, "SuccessfulUpdate", f"update Pod {name} in StatefulSet {sts['metadata']['name']} successful")

    async def delete_pod(self, sts: Obj, pod: Obj) -> None:
        name = pod["metadata"]["name"]
        try:
            await self._pods(sts).delete(name)
        except ApiError as err:
            if err.code == 404:
                return
            self._event(sts, WARNING, "FailedDelete", f"delete Pod {name} in StatefulSet {sts['metadata']['name']} failed error: {_message(err)}")
            raise
        self._event(sts, NORMAL, "SuccessfulDelete", f"delete Pod {name} in StatefulSet {sts['metadata']['name']} successful")

    async def fix_claims(self, sts: Obj, pod: Obj, condemned: bool) -> None:
        """Give the pod's existing claims the ownerReferences the retention policy asks for
        (``UpdatePodClaimForRetentionPolicy``), writing only those that differ."""
        for claim in ident.claims_for(sts, ident.ordinal(pod)).values():
            cached = self._cached_claim(sts, claim["metadata"]["name"])
            if cached is None or cached["metadata"].get("deletionTimestamp"):
                continue
            refs = ident.claim_owner_refs(cached, sts, pod, condemned)
            if refs == (cached["metadata"].get("ownerReferences") or []):
                continue
            updated = {**cached, "metadata": {**cached["metadata"], "ownerReferences": refs or None}}
            try:
                await self._claims(sts).update(updated)
            except ApiError as err:
                if err.code != 404:
                    raise


def _message(err: ApiError) -> str:
    return str(err.status.get("message") or err)
