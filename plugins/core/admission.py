"""The core group's admission chain, in kube-apiserver's order: NamespaceLifecycle, then the
pod plugins of :mod:`kplane.plugins.core.pod_admission` (ServiceAccount, Priority,
DefaultTolerationSeconds).

NamespaceLifecycle: content only goes into namespaces that exist and are not being deleted (a
mutating-phase check, as in kube-apiserver, so that it runs before any plugin that reads the
namespace's objects), and the system namespaces can never be deleted."""

from __future__ import annotations

from kplane.core.meta import errors
from kplane.core.registry.admission import AdmissionChain, AdmissionRequest, Operation, deny
from kplane.core.registry.registry import Registry
from kplane.plugins.core import pod_admission

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


def register(chain: AdmissionChain, registry: Registry) -> None:
    def immortal_namespaces(request: AdmissionRequest) -> None:
        rt = request.resource
        if rt.group == "" and rt.plural == "namespaces":
            if request.operation == Operation.DELETE and request.name in IMMORTAL_NAMESPACES:
                raise deny(request, "this namespace may not be deleted")

    async def namespace_lifecycle(request: AdmissionRequest) -> None:
        rt = request.resource
        if rt.group == "" and rt.plural == "namespaces":
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

    chain.add_mutating("NamespaceLifecycle", namespace_lifecycle)
    chain.add_mutating("ServiceAccount", pod_admission.ServiceAccountAdmission(registry))
    chain.add_mutating("Priority", pod_admission.priority)
    chain.add_mutating("DefaultTolerationSeconds", pod_admission.default_toleration_seconds)
    chain.add_validating("NamespaceLifecycle", immortal_namespaces)
