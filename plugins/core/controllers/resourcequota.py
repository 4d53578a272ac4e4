"""The resource-quota controller (kube-controller-manager's ``pkg/controller/resourcequota``):
each ResourceQuota's ``status.hard`` is its ``spec.hard`` and ``status.used`` what its namespace
holds of those resources, counted from the informers' caches the way the admission counts one
object (:mod:`kplane.plugins.core.quota.usage`).

A quota is synced when it is added or its spec changes, when an object it may count is added,
deleted, or (a pod) finishes, which gives back what the admission charged (kube's
replenishment), and every ``sync_period`` seconds (kube's ``--resource-quota-sync-period``,
5m). Counting ``count/<resource>.<group>`` of a group outside the core one starts an informer
of that resource, found through discovery, the first time a quota names it; a name discovery
does not know is looked up again only after ``DISCOVERY_TTL`` seconds, so a quota naming
hundreds of resources that do not exist costs one discovery, not one per name and sync. Status
is written only when it changed."""

from __future__ import annotations

import asyncio
import time
from fractions import Fraction
from typing import Any

from kplane.api import (
    ApiError, Handlers, Informer, RESTClient, SharedInformerFactory, WorkQueue, Workers, object_key, quantity,
    server_resources, wait_synced,
)
from kplane.plugins.core.quota import usage as quota_usage

Obj = dict[str, Any]
SYNC_PERIOD = 300.0
DISCOVERY_TTL = 30.0  # seconds a discovery's answer stands (kube's quota monitors resync as often)
CORE = ("pods", "services", "configmaps", "secrets", "replicationcontrollers", "resourcequotas", "persistentvolumeclaims")


def counted_by(name: str) -> tuple[str, str] | None:
    """The (group, plural) whose objects use the quota resource ``name``."""
    if name.startswith("count/"):
        plural, _, group = name[len("count/"):].partition(".")
        return group, plural
    if name in ("persistentvolumeclaims", "requests.storage") or quota_usage.STORAGE_CLASS_SUFFIX in name:
        return "", "persistentvolumeclaims"
    if name.startswith("services"):
        return "", "services"
    if name in quota_usage.LEGACY_COUNTS:
        return "", name
    if name == "pods" or name in quota_usage.COMPUTE or name.startswith(("requests.", "limits.", "hugepages-")):
        return "", "pods"
    return None


def _same(current: dict[str, Any], wanted: dict[str, Any]) -> bool:
    """Two resource lists equal as quantities (``1000m`` is ``1``)."""
    if set(current) != set(wanted):
        return False
    try:
        return all(quantity.parse(current[n]) == quantity.parse(wanted[n]) for n in wanted)
    except ValueError:
        return False


class ResourceQuotaController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 2,
                 sync_period: float = SYNC_PERIOD) -> None:
        self.client = client
        self.informers = informers
        self.workers = workers
        self.sync_period = sync_period
        self.quota_informer = informers.informer("", "v1", "resourcequotas")
        self.counted: dict[tuple[str, str], Informer] = {}
        self.versions: dict[tuple[str, str], str] = {}
        self._discovered_at = float("-inf")  # time.monotonic() of the last discovery
        self._discovering = asyncio.Lock()
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        self.quota_informer.add_handlers(Handlers(on_add=self._enqueue, on_update=self._quota_updated))
        for plural in CORE:
            self._count(("", plural), "v1")
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.quota_informer, *self.counted.values())
            workers.start(self.workers, self._sync, name="resourcequota")
            while True:
                await asyncio.sleep(self.sync_period)
                for quota in self.quota_informer.lister().list():
                    self._enqueue(quota)

    def _count(self, key: tuple[str, str], version: str) -> Informer:
        informer = self.counted.get(key)
        if informer is None:
            informer = self.counted[key] = self.informers.informer(key[0], version, key[1])
            pods = key == ("", "pods")
            informer.add_handlers(Handlers(on_add=self._object_changed,
                                           on_update=self._pod_updated if pods else None,
                                           on_delete=self._object_changed))
        return informer

    # -- events to work ---------------------------------------------------------------------
    def _enqueue(self, quota: Obj) -> None:
        self.queue.add(object_key(quota))

    def _quota_updated(self, old: Obj, quota: Obj) -> None:
        if old.get("spec") != quota.get("spec") or not _same((quota.get("status") or {}).get("hard") or {},
                                                              (quota.get("spec") or {}).get("hard") or {}):
            self._enqueue(quota)

    def _object_changed(self, obj: Obj) -> None:
        namespace = obj["metadata"].get("namespace")
        if namespace:
            for quota in self.quota_informer.lister().namespaced(namespace).list():
                self._enqueue(quota)

    def _pod_updated(self, old: Obj, pod: Obj) -> None:
        """A pod that finished, or started to go, gives its compute quota back."""
        if quota_usage.pod_counts(old) and not quota_usage.pod_counts(pod):
            self._object_changed(pod)

    # -- sync -------------------------------------------------------------------------------
    async def _informer_for(self, key: tuple[str, str]) -> Informer | None:
        """The informer of a resource a ``count/`` names; None while it lists (or if none exists)."""
        if key not in self.counted:
            if key not in self.versions:
                await self._discover()
            if key not in self.versions:
                return None
            self._count(key, self.versions[key])
            self.informers.start()
        informer = self.counted[key]
        return informer if informer.synced.is_set() else None

    async def _discover(self) -> None:
        """Learn the served resources' versions, unless a discovery ran less than a TTL ago
        (one at a time: the workers wait for the discovery under way, then use it)."""
        async with self._discovering:
            if time.monotonic() - self._discovered_at < DISCOVERY_TTL:
                return
            for found in await server_resources(self.client, skip_failed=True):
                self.versions.setdefault((found.group, found.plural), found.version)
            self._discovered_at = time.monotonic()

    async def _sync(self, key: str) -> None:
        quota = self.quota_informer.indexer.get(key)
        if quota is None:
            return
        namespace = quota["metadata"]["namespace"]
        hard = dict((quota.get("spec") or {}).get("hard") or {})
        used: dict[str, Fraction] = {name: Fraction(0) for name in hard}
        retry = False
        for source in sorted({s for s in map(counted_by, hard) if s is not None}):
            informer = await self._informer_for(source)
            if informer is None:
                retry = retry or source in self.versions
                continue
            group, plural = source
            for obj in informer.lister().namespaced(namespace).list():
                if not quota_usage.quota_matches(quota, plural, group, obj):
                    continue
                for name, value in quota_usage.usage(plural, group, obj).items():
                    if name in used:
                        used[name] += value
        status = {"hard": hard, "used": quota_usage.format_usage(used, hard)}
        current = quota.get("status") or {}
        if not (_same(current.get("hard") or {}, status["hard"]) and _same(current.get("used") or {}, status["used"])):
            try:
                await self.client.resource("", "v1", "resourcequotas", namespace).update_status({**quota, "status": status})
            except ApiError as err:
                if err.code != 404:
                    raise
        if retry:
            self.queue.add_after(key, 1.0)  # an informer it started is still listing
