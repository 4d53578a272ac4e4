"""DefaultIngressClass (``plugin/pkg/admission/network/defaultingressclass``): an Ingress created
without a class, and without the deprecated ``kubernetes.io/ingress.class`` annotation, gets the
default IngressClass (the newest, if several say they are)."""

from __future__ import annotations

from kplane.api import AdmissionRequest, ListOptions, Operation, Registry, RequestContext

GROUP = "networking.k8s.io"
DEFAULT_CLASS = "ingressclass.kubernetes.io/is-default-class"
LEGACY_CLASS = "kubernetes.io/ingress.class"


class DefaultIngressClass:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def __call__(self, request: AdmissionRequest) -> None:
        rt = request.resource
        if (rt.group, rt.plural) != (GROUP, "ingresses") or request.operation != Operation.CREATE or request.subresource:
            return
        ingress = request.obj
        if ingress.spec.ingress_class_name is not None or LEGACY_CLASS in (ingress.metadata.annotations or {}):
            return
        store = self.registry.store(GROUP, "ingressclasses")
        if store is None:
            return
        page = await store.list(RequestContext(resource="ingressclasses"), ListOptions())
        defaults = [i.obj for i in page.items if (i.obj["metadata"].get("annotations") or {}).get(DEFAULT_CLASS) == "true"]
        if defaults:
            newest = max(defaults, key=lambda c: (c["metadata"].get("creationTimestamp") or "", c["metadata"]["name"]))
            ingress.spec.ingress_class_name = newest["metadata"]["name"]
