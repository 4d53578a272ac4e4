"""NamespaceLifecycle, the core group's first admission plugin (the pod plugins that follow it are
in :mod:`kplane.plugins.core.pod_admission`; the plugin's ``kplane_register_admission`` puts
them in kube-apiserver's order).

NamespaceLifecycle: content only goes into namespaces that exist and are not being deleted (a
mutating-phase check, as in kube-apiserver, so that it runs before any plugin that reads the
namespace's objects), and the system namespaces can never be deleted."""

from __future__ import annotations

from kplane.api import AdmissionRequest, Operation, Registry, deny, errors

IMMORTAL_NAMESPACES = frozenset({"default", "kube-system", "kube-public"})


def immortal_namespaces(request: AdmissionRequest) -> None:
    """NamespaceLifecycle's validating half: the system namespaces are never deleted."""
    rt = request.resource
    if rt.group == "" and rt.plural == "namespaces":
        if request.operation == Operation.DELETE and request.name in IMMORTAL_NAMESPACES:
            raise deny(request, "this namespace may not be deleted")


class NamespaceLifecycle:
    """NamespaceLifecycle's mutating half: content is created only in a namespace that exists
    and is not being deleted."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def __call__(self, request: AdmissionRequest) -> None:
        rt = request.resource
        if rt.group == "" and rt.plural == "namespaces":
            return
        if request.operation != Operation.CREATE or not rt.namespaced:
            return
        namespaces = self.registry.store("", "namespaces")
        namespace = await namespaces.get_recent("", request.namespace) if namespaces else None
        if namespace is None:
            raise errors.not_found("namespaces", "", request.namespace)
        if (namespace.get("metadata") or {}).get("deletionTimestamp"):
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
