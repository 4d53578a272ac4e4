"""The RuntimeClass admission plugin (``plugin/pkg/admission/runtimeclass``), on pod creates.

Mutating: a pod naming a ``runtimeClassName`` gets the class's ``overhead.podFixed`` as its
``spec.overhead`` and the class's scheduling (its node selector merged into the pod's, its
tolerations added). Refused (403) with kube's messages: ``pod rejected: RuntimeClass "x" not
found``, ``pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead``,
``conflict: runtimeClass.scheduling.nodeSelector[k] = a; pod.spec.nodeSelector[k] = b``.
Validating: a pod with an overhead must name a class, whose overhead it is (``pod rejected:
Pod Overhead set without corresponding RuntimeClass``). Classes are read from the loopback
informer (:mod:`kplane.plugins.core.lookup`)."""

from __future__ import annotations

from typing import Any

from kplane.api import AdmissionRequest, Informer, Operation, Registry, deny, quantity
from kplane.plugins.core import lookup
from kplane.plugins.core.types import Pod

GROUP = "node.k8s.io"


def _same_resources(a: dict[str, Any] | None, b: dict[str, Any] | None) -> bool:
    a, b = a or {}, b or {}
    try:
        return set(a) == set(b) and all(quantity.parse(a[n]) == quantity.parse(b[n]) for n in a)
    except ValueError:
        return False


class RuntimeClassAdmission:
    def __init__(self, registry: Registry, classes: Informer | None) -> None:
        self.registry = registry
        self.classes = classes

    def _pod(self, request: AdmissionRequest) -> Pod | None:
        rt = request.resource
        if (rt.group, rt.plural) != ("", "pods") or request.subresource or request.operation != Operation.CREATE:
            return None
        return request.obj if isinstance(request.obj, Pod) else None

    async def _class(self, request: AdmissionRequest, pod: Pod) -> dict[str, Any] | None:
        name = pod.spec.runtime_class_name
        if not name:
            return None
        found = await lookup.get(self.registry, self.classes, GROUP, "runtimeclasses", name)
        if found is None:
            raise deny(request, f'pod rejected: RuntimeClass "{name}" not found')
        return found

    async def mutate(self, request: AdmissionRequest) -> None:
        pod = self._pod(request)
        if pod is None:
            return
        rc = await self._class(request, pod)
        if rc is None:
            return
        overhead = (rc.get("overhead") or {}).get("podFixed")
        if overhead:
            if pod.spec.overhead is not None and not _same_resources(pod.spec.overhead, overhead):
                raise deny(request, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
            pod.spec.overhead = dict(overhead)
        scheduling = rc.get("scheduling") or {}
        selector = dict(pod.spec.node_selector or {})
        for key, value in (scheduling.get("nodeSelector") or {}).items():
            if key in selector and selector[key] != value:
                raise deny(request, f"conflict: runtimeClass.scheduling.nodeSelector[{key}] = {value}; "
                                    f"pod.spec.nodeSelector[{key}] = {selector[key]}")
            selector[key] = value
        if selector:
            pod.spec.node_selector = selector
        tolerations = list(pod.spec.tolerations or [])
        for toleration in scheduling.get("tolerations") or ():
            if toleration not in tolerations:
                tolerations.append(toleration)
        if tolerations:
            pod.spec.tolerations = tolerations

    async def validate(self, request: AdmissionRequest) -> None:
        pod = self._pod(request)
        if pod is None or pod.spec.overhead is None:
            return
        rc = await self._class(request, pod)
        if rc is None:
            raise deny(request, "pod rejected: Pod Overhead set without corresponding RuntimeClass")
        if not _same_resources(pod.spec.overhead, (rc.get("overhead") or {}).get("podFixed")):
            raise deny(request, "pod rejected: Pod's Overhead doesn't match RuntimeClass's defined Overhead")
