"""Which Pods back a Service, at which address and port: what the endpoints and EndpointSlice
controllers share (``endpointslice/util``, ``podutil.FindPort``)."""

from __future__ import annotations

from typing import Any

from kplane.api import Informer, object_key
from kplane.api import ownership as own

Obj = dict[str, Any]


def selects(service: Obj, pod: Obj) -> bool:
    """The Service's selector matches the Pod (a Service without one selects nothing)."""
    selector = own.spec(service).get("selector")
    if selector is None or pod["metadata"].get("namespace") != service["metadata"].get("namespace"):
        return False
    labels = pod["metadata"].get("labels") or {}
    return all(labels.get(k) == v for k, v in selector.items())


def managed(service: Obj) -> bool:
    """A Service these controllers keep endpoints for: one with a selector, not an ExternalName."""
    spec = own.spec(service)
    return spec.get("selector") is not None and spec.get("type") != "ExternalName"


def ready(pod: Obj) -> bool:
    return any(c.get("type") == "Ready" and c.get("status") == "True" for c in (pod.get("status") or {}).get("conditions") or [])


def included(pod: Obj, *, terminating: bool) -> bool:
    """``ShouldPodBeInEndpoints``: it has an IP, is not being deleted (unless ``terminating``
    ones count) and has not finished for good."""
    status = pod.get("status") or {}
    if not status.get("podIP"):
        return False
    if not terminating and pod["metadata"].get("deletionTimestamp"):
        return False
    phase, policy = status.get("phase"), own.spec(pod).get("restartPolicy") or "Always"
    if policy == "Never":
        return phase not in ("Failed", "Succeeded")
    if policy == "OnFailure":
        return phase != "Succeeded"
    return True


def hostname(pod: Obj, service: Obj) -> str | None:
    """``ShouldSetHostname``: the Pod's hostname when its subdomain is this Service."""
    spec = own.spec(pod)
    if spec.get("hostname") and spec.get("subdomain") == service["metadata"]["name"]:
        return str(spec["hostname"])
    return None


def find_port(pod: Obj, service_port: Obj) -> int | None:
    """``FindPort``: the target port by number, or the container port of that name and protocol."""
    target = service_port.get("targetPort", service_port.get("port"))
    if isinstance(target, int):
        return target
    protocol = service_port.get("protocol") or "TCP"
    for container in own.spec(pod).get("containers") or []:
        for port in container.get("ports") or []:
            if port.get("name") == target and (port.get("protocol") or "TCP") == protocol:
                return int(port["containerPort"])
    return None


def target_ref(pod: Obj) -> Obj:
    meta = pod["metadata"]
    return {"kind": "Pod", "namespace": meta.get("namespace"), "name": meta["name"], "uid": meta.get("uid")}


def services_of(services: Informer, pod: Obj, old: Obj | None = None) -> set[str]:
    """The keys of the cached Services that select ``pod``, or selected it before a change of
    its labels (``old``): those whose endpoints a pod event may change."""
    namespace = pod["metadata"].get("namespace", "")
    pods = [pod] if old is None or old["metadata"].get("labels") == pod["metadata"].get("labels") else [old, pod]
    return {object_key(s) for s in services.lister().namespaced(namespace).list() if any(selects(s, p) for p in pods)}
