"""The default StorageClass: ``standard``, made at first start, whose volumes the simulated
provisioner makes; and the DefaultStorageClass admission plugin, which gives a claim that names
no class (``storageClassName`` unset, not empty) the default one, the newest when several are."""

from __future__ import annotations

from typing import Any

from kplane.api import APIError, AdmissionRequest, ListOptions, Operation, Registry, RequestContext
from kplane.plugins.storage.printers import DEFAULT_CLASS, is_default

GROUP = "storage.k8s.io"
PROVISIONER = "kplane.io/simulated"
STANDARD = {"apiVersion": "storage.k8s.io/v1", "kind": "StorageClass",
            "metadata": {"name": "standard", "annotations": {DEFAULT_CLASS: "true"}},
            "provisioner": PROVISIONER, "reclaimPolicy": "Delete", "volumeBindingMode": "Immediate"}


async def ensure_standard(registry: Registry) -> None:
    """Create ``standard`` unless it exists (deleted later by a user, it stays deleted only until the next start)."""
    store = registry.store(GROUP, "storageclasses")
    rt = registry.scheme.get(GROUP, "storageclasses")
    if store is None or rt is None or await store.get_internal("", "standard") is not None:
        return
    try:
        await store.create(RequestContext(resource="storageclasses", name="standard"), rt.decode(STANDARD, "v1")[0])
    except APIError as err:
        if err.code != 409:  # another server on the same storage made it
            raise


class DefaultStorageClass:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def __call__(self, request: AdmissionRequest) -> None:
        rt = request.resource
        if (rt.group, rt.plural) != ("", "persistentvolumeclaims") or request.operation != Operation.CREATE or request.subresource:
            return
        claim = request.obj
        if claim.spec.storage_class_name is not None:
            return
        default = await self._default()
        if default is not None:
            claim.spec.storage_class_name = default

    async def _default(self) -> str | None:
        store = self.registry.store(GROUP, "storageclasses")
        if store is None:
            return None
        page = await store.list(RequestContext(resource="storageclasses"), ListOptions())
        defaults: list[dict[str, Any]] = [item.obj for item in page.items if is_default(item.obj)]
        if not defaults:
            return None
        newest = max(defaults, key=lambda c: (c["metadata"].get("creationTimestamp") or "", c["metadata"]["name"]))
        return str(newest["metadata"]["name"])
