"""NamespaceLifecycle admission: content only goes into namespaces that exist and are not being
deleted, and the system namespaces can never be deleted."""

from __future__ import annotations

from core.meta import errors
from core.registry.admission import AdmissionChain, AdmissionRequest, Operation, deny
from core.registry.registry import Registry

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


def register(chain: AdmissionChain, registry: Registry) -> None:
    async def namespace_lifecycle(request: AdmissionRequest) -> None:
        rt = request.resource
        if rt.group == "" and rt.plural == "namespaces":
            if request.operation == Operation.DELETE and request.name in IMMORTAL_NAMESPACES:
                raise deny(request, "this namespace may not be deleted")
            return
        if request.operation != Operation.CREATE or not rt.namespaced:
            return
        namespaces = registry.store("", "namespaces")
        namespace = await namespaces.get_internal("", request.namespace) if namespaces else None
        if namespace is None:
            raise errors.not_found("namespaces", "", request.namespace)
        if namespace.metadata.deletion_timestamp:
            raise errors.forbidden_error(
                rt.plural,
                rt.group,
                request.name,
                f"unable to create new content in namespace {request.namespace} because it is being terminated",
                causes=[
                    {
                        "reason": "NamespaceTerminating",
                        "message": f"namespace {request.namespace} is being terminated",
                        "field": "metadata.namespace",
                    }
                ],
            )

    chain.add_validating("NamespaceLifecycle", namespace_lifecycle)
