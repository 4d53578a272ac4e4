"""The endpoints controller (kube-controller-manager's ``pkg/controller/endpoint``).

Every Service with a selector (not an ExternalName) has an Endpoints of its name listing the
Pods it selects: ready ones under ``addresses``, the others under ``notReadyAddresses`` (all
ready with ``publishNotReadyAddresses``), each with its node and a reference to its Pod, grouped
into subsets by the ports they offer (a named ``targetPort`` resolves per Pod). Pods without an
IP, being deleted or finished for good are left out. The Endpoints carries the Service's labels
(and ``service.kubernetes.io/headless`` for a headless one) and holds at most 1,000 addresses,
annotated ``endpoints.kubernetes.io/over-capacity: truncated`` beyond. It is written only when
that changes, and deleted with its Service.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from kplane.api import (
    WARNING, ApiError, EventRecorder, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, involved_object,
    object_key, wait_synced,
)
from kplane.api import ownership as own
from kplane.plugins.core.controllers import podendpoints as pe

Obj = dict[str, Any]

COMPONENT = "endpoint-controller"
HEADLESS = "service.kubernetes.io/headless"
OVER_CAPACITY = "endpoints.kubernetes.io/over-capacity"
MAX_CAPACITY = 1000


def subsets_for(service: Obj, pods: list[Obj]) -> list[Obj]:
    """The Service's subsets from its Pods, repacked: one subset per set of ports."""
    spec = own.spec(service)
    tolerate = bool(spec.get("publishNotReadyAddresses"))
    entries: list[tuple[Obj, bool, tuple[tuple[Any, ...], ...]]] = []
    for pod in pods:
        if not pe.included(pod, terminating=tolerate):
            continue
        address: Obj = {"ip": pod["status"]["podIP"]}
        if (name := pe.hostname(pod, service)) is not None:
            address["hostname"] = name
        if node := own.spec(pod).get("nodeName"):
            address["nodeName"] = node
        address["targetRef"] = pe.target_ref(pod)
        is_ready = tolerate or pe.ready(pod)
        if not spec.get("ports"):
            if spec.get("clusterIP") == "None":  # headless without ports: addresses alone
                entries.append((address, is_ready, ()))
            continue
        for port in spec["ports"]:
            number = pe.find_port(pod, port)
            if number is not None:
                entries.append((address, is_ready, (_port(port, number),)))
    return _repack(entries)


def _port(service_port: Obj, number: int) -> tuple[Any, ...]:
    return (service_port.get("name") or "", number, service_port.get("protocol") or "TCP", service_port.get("appProtocol"))


def _repack(entries: list[tuple[Obj, bool, tuple[tuple[Any, ...], ...]]]) -> list[Obj]:
    """``RepackSubsets``: each address's ports gathered, then addresses grouped by identical port sets;
    an address ready on any port is ready; sorted so that equal endpoints compare equal."""
    ports_of: dict[str, set[tuple[Any, ...]]] = {}
    address_of: dict[str, Obj] = {}
    ready_of: dict[str, bool] = {}
    for address, is_ready, ports in entries:
        key = f"{address['ip']}/{address['targetRef'].get('uid')}"
        address_of[key] = address
        ready_of[key] = ready_of.get(key, False) or is_ready
        ports_of.setdefault(key, set()).update(ports)
    groups: dict[tuple[tuple[Any, ...], ...], list[str]] = {}
    for key, ports in ports_of.items():
        groups.setdefault(tuple(sorted(ports, key=repr)), []).append(key)
    subsets = []
    for ports, keys in sorted(groups.items(), key=lambda item: repr(item[0])):
        keys.sort(key=lambda k: (address_of[k]["ip"], k))
        subset: Obj = {}
        if ready := [address_of[k] for k in keys if ready_of[k]]:
            subset["addresses"] = ready
        if not_ready := [address_of[k] for k in keys if not ready_of[k]]:
            subset["notReadyAddresses"] = not_ready
        if ports:
            subset["ports"] = [_port_object(p) for p in ports]
        subsets.append(subset)
    return subsets


def _port_object(port: tuple[Any, ...]) -> Obj:
    name, number, protocol, app_protocol = port
    obj: Obj = {"port": number, "protocol": protocol}
    if name:
        obj["name"] = name
    if app_protocol is not None:
        obj["appProtocol"] = app_protocol
    return obj


def truncate(subsets: list[Obj]) -> bool:
    """``truncateEndpoints``: past :data:`MAX_CAPACITY` addresses, keep a proportional share of each
    subset's ready ones (dropping the not-ready), or of its not-ready ones when the ready fit."""
    ready = sum(len(s.get("addresses") or ()) for s in subsets)
    not_ready = sum(len(s.get("notReadyAddresses") or ()) for s in subsets)
    if ready + not_ready <= MAX_CAPACITY:
        return False
    field, room, total = ("addresses", MAX_CAPACITY, ready) if ready > MAX_CAPACITY else ("notReadyAddresses", MAX_CAPACITY - ready, not_ready)
    left = room
    for subset in subsets:
        share = min(left, math.ceil(len(subset.get(field) or ()) / total * room))
        subset[field] = (subset.get(field) or [])[:share]
        left -= len(subset[field])
        if field == "addresses":
            subset.pop("notReadyAddresses", None)
        if not subset[field]:
            del subset[field]
    return True


class EndpointsController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, workers: int = 5) -> None:
        self.client = client
        self.workers = workers
        self.informers = informers
        self.services = informers.informer("", "v1", "services")
        self.pods = informers.informer("", "v1", "pods")
        self.endpoints = informers.informer("", "v1", "endpoints")
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)

    async def run(self) -> None:
        self.services.add_handlers(Handlers.for_any(lambda service: self.queue.add(object_key(service))))
        self.pods.add_handlers(Handlers(on_add=self._pod_changed, on_update=lambda old, pod: self._pod_changed(pod, old), on_delete=self._pod_changed))
        self.endpoints.add_handlers(Handlers(on_delete=lambda ep: self.queue.add(object_key(ep))))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.services, self.pods, self.endpoints)
            for endpoints in self.endpoints.lister().list():  # left behind by Services deleted meanwhile
                self.queue.add(object_key(endpoints))
            workers.start(self.workers, self.sync, name="endpoints")
            await workers.wait()

    def _pod_changed(self, pod: Obj, old: Obj | None = None) -> None:
        for key in pe.services_of(self.services, pod, old):
            self.queue.add(key)

    async def sync(self, key: str) -> None:
        namespace, _, name = key.partition("/")
        resource = self.client.resource("", "v1", "endpoints", namespace)
        service = self.services.indexer.get(key)
        if service is None:
            if self.endpoints.indexer.get(key) is not None:
                try:
                    await resource.delete(name)
                except ApiError as err:
                    if err.code != 404:
                        raise
            return
        if not pe.managed(service):
            return
        pods = [p for p in self.pods.lister().namespaced(namespace).list() if pe.selects(service, p)]
        subsets = subsets_for(service, pods)
        over = truncate(subsets)
        labels = dict(service["metadata"].get("labels") or {})
        if own.spec(service).get("clusterIP") == "None":
            labels[HEADLESS] = ""
        current = self.endpoints.indexer.get(key)
        annotations = dict((current or {}).get("metadata", {}).get("annotations") or {})
        annotations.pop(OVER_CAPACITY, None)
        if over:
            annotations[OVER_CAPACITY] = "truncated"
        if current is not None and (current.get("subsets") or []) == subsets and (current["metadata"].get("labels") or {}) == labels \
                and (current["metadata"].get("annotations") or {}) == annotations:
            return
        body: Obj = copy.deepcopy(current) if current is not None else {"metadata": {"name": name, "namespace": namespace}}
        body.update(apiVersion="v1", kind="Endpoints", subsets=subsets or None)
        body["metadata"].update(labels=labels or None, annotations=annotations or None)
        try:
            if current is None:
                await resource.create(body)
            else:
                await resource.update(body)  # with the resourceVersion read: a 409 retries on a newer copy
        except ApiError as err:
            if err.namespace_terminating:
                return
            if current is None:
                reason, message = "FailedToCreateEndpoint", f"Failed to create endpoint for service {namespace}/{name}: {err}"
            else:
                reason, message = "FailedToUpdateEndpoint", f"Failed to update endpoint {namespace}/{name}: {err}"
            self.recorder.event(involved_object(body, "v1", "Endpoints"), WARNING, reason, message)
            raise
