"""Storage metrics: each backend call's latency (kube's ``etcd_request_duration_seconds``), the
objects stored per resource, the database's size, and the watch cache's counters (kube's cacher
metrics, ``k8s.io/apiserver/pkg/storage/cacher/metrics``).

The backend latency keeps etcd's name for the SQLite backend too: it measures the same thing,
the storage request under the API server's registry, so a dashboard or a benchmark reads one
name whichever ``--storage`` serves."""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterator

from prometheus_client import CollectorRegistry
from prometheus_client.core import Metric

from kplane.core.metrics.families import REQUEST_BUCKETS, Collected, Durations, Tally, gauge

GroupResource = tuple[str, str]  # ("apps", "deployments"); ("", "pods") for the core group


def resource_label(resource: GroupResource | None) -> str:
    """kube's group-resource string: ``deployments.apps``, ``pods``; "" for a key of no resource."""
    if resource is None:
        return ""
    group, plural = resource
    return f"{plural}.{group}" if group else plural


class WatchCacheMetrics:
    """What the watch cache counts as it follows the backend and serves lists. There is one cache
    for every resource here (kube has one per resource), so ``initializations`` has no labels."""

    def __init__(self) -> None:
        labels = ("group", "resource")
        self.received = Tally("apiserver_watch_cache_events_received_total",
                              "Counter of events received in watch cache broken by resource type.", labels)
        self.dispatched = Tally("apiserver_watch_cache_events_dispatched_total",
                                "Counter of events dispatched in watch cache broken by resource type.", labels)
        self.resource_version = Tally("apiserver_watch_cache_resource_version",
                                      "Current resource version of watch cache broken by resource type.", labels,
                                      gauge=True)
        self.initializations = Tally("apiserver_watch_cache_initializations_total",
                                     "Counter of watch cache initializations (one cache serves every resource).", ())
        self.lists = Tally("apiserver_cache_list_total", "Number of LIST requests served from watch cache",
                           ("group", "resource", "index"))
        self.returned = Tally("apiserver_cache_list_returned_objects_total",
                              "Number of objects returned for a LIST request from watch cache", labels)
        #: Objects held per resource, kept as events come (the storage's object counts).
        self.objects: dict[GroupResource, int] = {}

    def families(self) -> Iterator[Metric]:
        for tally in (self.received, self.dispatched, self.resource_version, self.initializations, self.lists,
                      self.returned):
            yield tally.family()


class StorageMetrics:
    """One server's storage figures. ``watch_cache``: the cache's counters once it is opened
    (also the object counts); ``size``: how the backend tells its database size, awaited by
    :meth:`refresh` before each scrape."""

    def __init__(self, registry: CollectorRegistry) -> None:
        self.watch_cache: WatchCacheMetrics | None = None
        self.size: Callable[[], Awaitable[int | None]] | None = None
        self._size: int | None = None
        self.duration = Durations("etcd_request_duration_seconds", "Storage request latency in seconds for each "
                                  "operation and object type (etcd's name, for every backend).", ("operation", "type"),
                                  REQUEST_BUCKETS)
        registry.register(Collected(self._families))

    def observe(self, operation: str, resource: GroupResource | None, seconds: float) -> None:
        self.duration.observe((operation, resource_label(resource)), seconds)

    async def refresh(self) -> None:
        """Ask the backend for what a scrape reports but only it knows (the database size)."""
        if self.size is not None:
            self._size = await self.size()

    def _families(self) -> Iterator[Metric]:
        yield self.duration.family()
        if self._size is not None:
            yield gauge("apiserver_storage_size_bytes", "Size of the storage database file physically allocated "
                        "in bytes.", ("storage_cluster_id",), [(("",), self._size)])
        cache = self.watch_cache
        if cache is not None:
            yield gauge("apiserver_storage_objects", "Number of stored objects at the time of last check split "
                        "by kind.", ("resource",),
                        [((resource_label(resource),), count) for resource, count in cache.objects.items()])
            yield from cache.families()
