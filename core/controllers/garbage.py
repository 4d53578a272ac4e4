"""The garbage collector: ownerReferences honoured across every resource of every group.

It keeps an informer on each listable resource and a graph of owners and dependents, and acts:

* an owner deleted with ``propagationPolicy=Orphan`` carries the ``orphan`` finalizer: its
  dependents lose their ownerReference to it, then the finalizer goes;
* with ``Foreground`` it carries ``foregroundDeletion``: its dependents are deleted (in the
  foreground too), and the finalizer goes once no dependent with ``blockOwnerDeletion`` is left;
* a dependent whose owners are all gone (``Background``, the default) is deleted; one that keeps
  some owners only loses the dangling references.

Owners are confirmed missing with a live GET before anything is deleted, as the
kube-controller-manager's collector does, so a slow informer never causes a wrong deletion. A
dependent whose owner's kind discovery does not list yet (a custom resource whose CRD came after
the last discovery) is looked at again after the next discovery, as kube's collector retries a
REST mapping error: it is collected once the kind is known. Discovery runs every 30 s, as kube's,
and also soon after a CustomResourceDefinition or APIService appears that serves what the last
discovery did not list (kube's waits for its next period), so a new kind's objects are collected
within about a second of it being served.
"""

from __future__ import annotations

import asyncio
import logging
from typing import Any

import aiohttp

from kplane.core.client.discovery import APIResource, server_resources
from kplane.core.client.informer import Handlers, SharedInformerFactory
from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.client.workqueue import WorkQueue
from kplane.core.controllers.worker import work
from kplane.core.patching.mediatypes import JSON_PATCH
from kplane.core.runtime.gvk import GroupVersion

log = logging.getLogger(__name__)
ORPHAN, FOREGROUND = "orphan", "foregroundDeletion"
# Resources whose changes change what discovery lists.
DISCOVERY_SOURCES = {("apiextensions.k8s.io", "customresourcedefinitions"), ("apiregistration.k8s.io", "apiservices")}
Obj = dict[str, Any]


class GarbageCollector:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, rediscover: float = 30.0,
                 retry: float = 0.5, settle: float = 0.5) -> None:
        self.client = client
        self.informers = informers
        self.rediscover = rediscover
        self.retry = retry
        self.settle = settle  # after a CRD or APIService change, the wait before discovering again
        self._discovery_due = asyncio.Event()
        self.objects: dict[str, tuple[APIResource, Obj]] = {}  # uid -> (resource, last state)
        self.dependents: dict[str, set[str]] = {}  # owner uid -> dependent uids
        self.kinds: dict[tuple[str, str], APIResource] = {}  # (apiVersion, kind) -> resource
        self._watched: set[tuple[str, str]] = set()
        self._unmapped: set[str] = set()  # dependents with an owner of a kind not discovered yet
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        worker: asyncio.Task[None] | None = None
        try:
            while True:
                try:
                    await self._discover()
                except (ApiError, aiohttp.ClientError) as err:
                    log.warning("garbage collector discovery failed: %s", err)
                if worker is None and await self.informers.wait_for_cache_sync(self.rediscover):
                    # Only a complete graph tells an owner it has no dependents left.
                    worker = asyncio.create_task(work(self.queue, self._process, name="garbage collector: object"))
                await self._next_discovery()
        finally:
            if worker is not None:
                worker.cancel()

    async def _next_discovery(self) -> None:
        """Wait out the period, or less once a source of discovery changed (then let it settle:
        a CRD is served a moment after it is written, and one change often brings a few)."""
        try:
            await asyncio.wait_for(self._discovery_due.wait(), self.rediscover)
        except TimeoutError:
            pass
        else:
            await asyncio.sleep(self.settle)
        self._discovery_due.clear()

    async def _discover(self) -> None:
        for resource in await server_resources(self.client, skip_failed=True):  # an aggregated server may be down
            self.kinds[(GroupVersion(resource.group, resource.version).api_version, resource.kind)] = resource
            key = (resource.group, resource.plural)
            if key in self._watched or not {"list", "watch"} <= resource.verbs:
                continue
            self._watched.add(key)
            self.informers.informer(resource.group, resource.version, resource.plural).add_handlers(Handlers(
                on_add=lambda o, r=resource: self._observe(r, o),
                on_update=lambda _, o, r=resource: self._observe(r, o),
                on_delete=self._forget,
            ))
        self.informers.start()
        for uid in self._unmapped:
            self._enqueue(uid)
        self._unmapped.clear()

    # -- the graph --------------------------------------------------------------------------
    def _observe(self, resource: APIResource, obj: Obj) -> None:
        if (resource.group, resource.plural) in DISCOVERY_SOURCES and not self._discovered(resource, obj):
            self._discovery_due.set()
        meta = obj["metadata"]
        uid = meta["uid"]
        previous = self.objects.get(uid)
        for ref in _owner_refs(previous[1]) if previous else []:
            self.dependents.get(ref["uid"], set()).discard(uid)
        self.objects[uid] = (resource, obj)
        for ref in _owner_refs(obj):
            self.dependents.setdefault(ref["uid"], set()).add(uid)
            if ref["uid"] not in self.objects:
                self._enqueue(uid)  # maybe an orphan of a deleted owner: check it
        if meta.get("deletionTimestamp") and {ORPHAN, FOREGROUND} & set(meta.get("finalizers") or ()):
            self._enqueue(uid)

    def _discovered(self, resource: APIResource, obj: Obj) -> bool:
        """Whether the last discovery listed what this CRD or APIService serves (so the first
        list of them, and their status updates, discover nothing again)."""
        spec = obj.get("spec") or {}
        if resource.plural == "apiservices":
            api_version = GroupVersion(spec.get("group", ""), spec.get("version", "")).api_version
            return any(known == api_version for known, _ in self.kinds)
        kind = (spec.get("names") or {}).get("kind", "")
        return all((GroupVersion(spec.get("group", ""), v.get("name", "")).api_version, kind) in self.kinds
                   for v in spec.get("versions") or () if v.get("served"))

    def _forget(self, obj: Obj) -> None:
        uid = obj["metadata"]["uid"]
        self.objects.pop(uid, None)
        for ref in _owner_refs(obj):
            owner = ref["uid"]
            self.dependents.get(owner, set()).discard(uid)
            if owner in self.objects:
                self._enqueue(owner)  # a foreground owner may be waiting for this one
        for dependent in self.dependents.get(uid, set()):
            self._enqueue(dependent)

    def _enqueue(self, uid: str) -> None:
        self.queue.add(uid)

    async def _process(self, uid: str) -> None:
        if not await self._sync(uid):
            self.queue.add_after(uid, self.retry)  # changed meanwhile or still waiting: look again soon

    async def _sync(self, uid: str) -> bool:
        """Act on one object; False to look at it again shortly."""
        entry = self.objects.get(uid)
        if entry is None:
            return True
        resource, obj = entry
        finalizers = set(obj["metadata"].get("finalizers") or ())
        if obj["metadata"].get("deletionTimestamp") and ORPHAN in finalizers:
            return await self._orphan_dependents(resource, obj)
        if obj["metadata"].get("deletionTimestamp") and FOREGROUND in finalizers:
            return await self._delete_dependents(resource, obj)
        if _owner_refs(obj):
            return await self._collect_if_orphaned(resource, obj)
        return True

    async def _orphan_dependents(self, resource: APIResource, owner: Obj) -> bool:
        owner_uid = owner["metadata"]["uid"]
        for dep_uid in list(self.dependents.get(owner_uid, ())):
            if dep_uid in self.objects:
                dep_resource, dependent = self.objects[dep_uid]
                await self._drop_owner_refs(dep_resource, dependent, {owner_uid})
        return await self._remove_finalizer(resource, owner, ORPHAN)

    async def _delete_dependents(self, resource: APIResource, owner: Obj) -> bool:
        owner_uid = owner["metadata"]["uid"]
        blocking = 0
        for dep_uid in list(self.dependents.get(owner_uid, ())):
            if dep_uid not in self.objects:
                continue
            dep_resource, dependent = self.objects[dep_uid]
            ref = next((r for r in _owner_refs(dependent) if r["uid"] == owner_uid), {})
            blocking += bool(ref.get("blockOwnerDeletion"))
            if not dependent["metadata"].get("deletionTimestamp"):
                await self._delete(dep_resource, dependent, "Foreground")
        if blocking:
            return True  # the deletions of blocking dependents will enqueue the owner again
        return await self._remove_finalizer(resource, owner, FOREGROUND)

    async def _collect_if_orphaned(self, resource: APIResource, obj: Obj) -> bool:
        missing = {ref["uid"] for ref in _owner_refs(obj) if not await self._owner_exists(obj, ref)}
        if not missing:
            return True
        if missing == {ref["uid"] for ref in _owner_refs(obj)}:
            if not obj["metadata"].get("deletionTimestamp"):
                await self._delete(resource, obj, "Background")
            return True
        await self._drop_owner_refs(resource, obj, missing)
        return True

    async def _owner_exists(self, dependent: Obj, ref: Obj) -> bool:
        if ref["uid"] in self.objects:
            return True
        owner_resource = self.kinds.get((ref.get("apiVersion", ""), ref.get("kind", "")))
        if owner_resource is None:
            self._unmapped.add(dependent["metadata"]["uid"])
            return True  # an owner kind we cannot look up: never collect on a guess; again after discovery
        namespace = dependent["metadata"].get("namespace") if owner_resource.namespaced else None
        try:
            live = await self._client(owner_resource, namespace).get(ref["name"])
        except ApiError as err:
            if err.code == 404:
                return False
            raise
        return live["metadata"].get("uid") == ref["uid"]

    # -- writes -----------------------------------------------------------------------------
    def _client(self, resource: APIResource, namespace: str | None) -> Any:
        return self.client.resource(resource.group, resource.version, resource.plural, namespace)

    def _for(self, resource: APIResource, obj: Obj) -> Any:
        return self._client(resource, obj["metadata"].get("namespace"))

    async def _delete(self, resource: APIResource, obj: Obj, policy: str) -> None:
        try:
            await self._for(resource, obj).delete(obj["metadata"]["name"], propagation_policy=policy)
        except ApiError as err:
            if err.code != 404:
                raise

    async def _drop_owner_refs(self, resource: APIResource, obj: Obj, uids: set[str]) -> None:
        kept = [r for r in _owner_refs(obj) if r["uid"] not in uids]
        await self._patch_guarded(resource, obj, "/metadata/ownerReferences", kept)

    async def _remove_finalizer(self, resource: APIResource, obj: Obj, finalizer: str) -> bool:
        kept = [f for f in obj["metadata"].get("finalizers") or () if f != finalizer]
        return await self._patch_guarded(resource, obj, "/metadata/finalizers", kept)

    async def _patch_guarded(self, resource: APIResource, obj: Obj, path: str, value: list[Any]) -> bool:
        """Replace one metadata list, only if the object is still the version we looked at."""
        meta = obj["metadata"]
        operations = [{"op": "test", "path": "/metadata/resourceVersion", "value": meta["resourceVersion"]},
                      {"op": "replace" if path.rsplit("/", 1)[1] in meta else "add", "path": path, "value": value}]
        try:
            await self._for(resource, obj).patch(meta["name"], operations, content_type=JSON_PATCH)
        except ApiError as err:
            if err.code == 404:
                return True
            if err.code in (409, 422):
                return False  # changed meanwhile: the informer brings the new state, try again
            raise
        return True


def _owner_refs(obj: Obj) -> list[Obj]:
    return obj["metadata"].get("ownerReferences") or []
