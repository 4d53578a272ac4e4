"""The EndpointSlice controller (kube-controller-manager's ``pkg/controller/endpointslice``).

For every Service with a selector (not an ExternalName) it keeps EndpointSlices of IPv4
endpoints, one per Pod the Service selects that has an IP and has not finished for good
(terminating Pods included, with their ``ready``/``serving``/``terminating`` conditions), at most
:data:`MAX_PER_SLICE` a slice, one set of ports per slice. Slices are labelled
``kubernetes.io/service-name`` and ``endpointslice.kubernetes.io/managed-by``, carry the
Service's labels (and ``service.kubernetes.io/headless``), and are owned by the Service, so the
garbage collector deletes them with it. A Service with no endpoints keeps one empty placeholder
slice.

A sync changes as little as it can: endpoints stay in their slice, changed ones are updated in
place, new ones fill slices with room before a slice is created, and a slice is written only
when it changed. Written slices are remembered with their generation (``endpointSliceTracker``):
while the informer has not shown a write yet, a sync is retried rather than run on a cache that
would make it write again.
"""

from __future__ import annotations

import copy
from typing import Any

from kplane.api import (
    ApiError, CacheBehind, EventRecorder, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, controller_reference,
    object_key, wait_synced,
)
from kplane.api import ownership as own
from kplane.plugins.core.controllers import podendpoints as pe
from kplane.plugins.discovery.controllers.desired import desired, endpoint_key, ports_key, zones_of

Obj = dict[str, Any]

COMPONENT = "endpointslice-controller"
SERVICE_NAME = "kubernetes.io/service-name"
MANAGED_BY = "endpointslice.kubernetes.io/managed-by"
CONTROLLER_NAME = "endpointslice-controller.k8s.io"
HEADLESS = "service.kubernetes.io/headless"
MAX_PER_SLICE = 100


class Tracker:
    """The generation each slice this controller wrote should have in the cache, and the slices it deleted."""

    def __init__(self) -> None:
        self.generations: dict[str, int] = {}  # namespace/name -> generation written
        self.deleted: set[str] = set()

    def stale(self, cached: dict[str, Obj]) -> bool:
        for key, generation in list(self.generations.items()):
            slice_ = cached.get(key)
            if slice_ is not None and int(slice_["metadata"].get("generation") or 0) >= generation:
                del self.generations[key]
        self.deleted &= set(cached)
        return bool(self.generations) or bool(self.deleted)


class EndpointSliceController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 5,
                 max_per_slice: int = MAX_PER_SLICE) -> None:
        self.client = client
        self.workers = workers
        self.max_per_slice = max_per_slice
        self.informers = informers
        self.services = informers.informer("", "v1", "services")
        self.pods = informers.informer("", "v1", "pods")
        self.nodes = informers.informer("", "v1", "nodes")
        self.slices = informers.informer("discovery.k8s.io", "v1", "endpointslices")
        self.slices.indexer.add_indexer(SERVICE_NAME, _service_of)
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)
        self.trackers: dict[str, Tracker] = {}  # by Service key

    async def run(self) -> None:
        self.services.add_handlers(Handlers.for_any(lambda service: self.queue.add(object_key(service))))
        self.pods.add_handlers(Handlers(on_add=self._pod_changed, on_update=lambda old, pod: self._pod_changed(pod, old), on_delete=self._pod_changed))
        self.slices.add_handlers(Handlers.for_any(self._slice_changed))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.services, self.pods, self.nodes, self.slices)
            workers.start(self.workers, self.sync, name="endpointslice")
            await workers.wait()

    def _pod_changed(self, pod: Obj, old: Obj | None = None) -> None:
        for key in pe.services_of(self.services, pod, old):
            self.queue.add(key)

    def _slice_changed(self, slice_: Obj) -> None:
        if (slice_["metadata"].get("labels") or {}).get(MANAGED_BY) == CONTROLLER_NAME and (key := _service_of(slice_)):
            self.queue.add(key[0])

    async def sync(self, key: str) -> None:
        service = self.services.indexer.get(key)
        if service is None:
            self.trackers.pop(key, None)  # the garbage collector deletes its slices
            return
        if not pe.managed(service):
            return
        namespace = service["metadata"]["namespace"]
        existing = {object_key(s): s for s in self.slices.indexer.by_index(SERVICE_NAME, key)
                    if (s["metadata"].get("labels") or {}).get(MANAGED_BY) == CONTROLLER_NAME}
        tracker = self.trackers.setdefault(key, Tracker())
        if tracker.stale(existing):
            raise CacheBehind(f"EndpointSlice informer cache is out of date for service {key}")
        pods = [p for p in self.pods.lister().namespaced(namespace).list() if pe.selects(service, p)]
        groups = desired(service, pods, zones_of(self.nodes.lister().list()))
        plan = _Plan(service, _labels(service), self.max_per_slice)
        plan.reconcile(groups, list(existing.values()))
        await self._apply(plan, namespace, tracker)

    async def _apply(self, plan: _Plan, namespace: str, tracker: Tracker) -> None:
        resource = self.client.resource("discovery.k8s.io", "v1", "endpointslices", namespace)
        for slice_ in plan.deletes:
            try:
                await resource.delete(slice_["metadata"]["name"])
            except ApiError as err:
                if err.code != 404:
                    raise
            tracker.deleted.add(object_key(slice_))
        for slice_ in plan.updates:
            written = await resource.update(slice_)
            tracker.generations[object_key(written)] = int(written["metadata"].get("generation") or 0)
        for slice_ in plan.creates:
            try:
                written = await resource.create(slice_)
            except ApiError as err:
                if err.namespace_terminating:
                    return
                raise
            tracker.generations[object_key(written)] = int(written["metadata"].get("generation") or 0)


def _service_of(slice_: Obj) -> list[str]:
    name = (slice_["metadata"].get("labels") or {}).get(SERVICE_NAME)
    return [f"{slice_['metadata'].get('namespace')}/{name}"] if name else []


def _labels(service: Obj) -> dict[str, str]:
    """The Service's labels, but for the two the controller reserves, and whether it is headless."""
    labels = {k: v for k, v in (service["metadata"].get("labels") or {}).items() if k not in (SERVICE_NAME, MANAGED_BY, HEADLESS)}
    labels[SERVICE_NAME] = service["metadata"]["name"]
    labels[MANAGED_BY] = CONTROLLER_NAME
    if own.spec(service).get("clusterIP") == "None":
        labels[HEADLESS] = ""
    return labels


class _Plan:
    """The writes that take a Service's slices from what exists to what is desired."""

    def __init__(self, service: Obj, labels: dict[str, str], max_per_slice: int) -> None:
        self.service = service
        self.labels = labels
        self.max_per_slice = max_per_slice
        self.creates: list[Obj] = []
        self.updates: list[Obj] = []
        self.deletes: list[Obj] = []

    def reconcile(self, groups: dict[bytes, tuple[list[Obj], dict[str, Obj]]], existing: list[Obj]) -> None:
        if not groups:
            self._placeholder(existing)
            return
        by_ports: dict[bytes, list[Obj]] = {}
        for slice_ in existing:
            by_ports.setdefault(ports_key(slice_.get("ports")) if slice_.get("endpoints") else b"placeholder", []).append(slice_)
        for key, (ports, wanted) in groups.items():
            self._group(ports, dict(wanted), by_ports.pop(key, []))
        for stale in by_ports.values():  # other port sets, or the placeholder: not needed now
            self.deletes += stale

    def _group(self, ports: list[Obj], wanted: dict[str, Obj], slices: list[Obj]) -> None:
        """Keep endpoints where they are, update changed ones, then fill slices with room."""
        kept: list[tuple[Obj, list[Obj]]] = []
        for slice_ in slices:
            endpoints = [wanted.pop(k) for e in slice_.get("endpoints") or [] if (k := endpoint_key(e)) in wanted]
            if endpoints:
                kept.append((slice_, endpoints))
            else:
                self.deletes.append(slice_)
        new = list(wanted.values())
        for slice_, endpoints in sorted(kept, key=lambda item: -len(item[1])):  # the fullest first, as kube packs
            room = self.max_per_slice - len(endpoints)
            if room > 0 and new:
                endpoints += new[:room]
                new = new[room:]
            if endpoints != slice_.get("endpoints") or (slice_["metadata"].get("labels") or {}) != self.labels \
                    or (slice_.get("ports") or []) != ports:
                self.updates.append(self._updated(slice_, endpoints, ports))
        for start in range(0, len(new), self.max_per_slice):
            self.creates.append(self._new(new[start:start + self.max_per_slice], ports))

    def _placeholder(self, existing: list[Obj]) -> None:
        """No endpoints: one empty slice without ports stays, or is made."""
        placeholder = next((s for s in existing if not s.get("endpoints") and not s.get("ports")), None)
        self.deletes += [s for s in existing if s is not placeholder]
        if placeholder is None:
            self.creates.append(self._new([], []))
        elif (placeholder["metadata"].get("labels") or {}) != self.labels:
            self.updates.append(self._updated(placeholder, [], []))

    def _new(self, endpoints: list[Obj], ports: list[Obj]) -> Obj:
        meta = self.service["metadata"]
        return {"apiVersion": "discovery.k8s.io/v1", "kind": "EndpointSlice",
                "metadata": {"generateName": f"{meta['name'][:62]}-", "namespace": meta["namespace"], "labels": dict(self.labels),
                             "ownerReferences": [controller_reference(self.service, "v1", "Service")]},
                "addressType": "IPv4", "endpoints": endpoints or None, "ports": ports or None}

    def _updated(self, slice_: Obj, endpoints: list[Obj], ports: list[Obj]) -> Obj:
        updated = copy.deepcopy(slice_)
        updated["metadata"]["labels"] = dict(self.labels)
        updated.update(endpoints=endpoints or None, ports=ports or None)
        return updated
