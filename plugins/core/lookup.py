"""What admission plugins read of other objects: the loopback informer's cache once it has
listed, storage (through the watch cache) before then, as kube's plugins fall back to a live
lookup while their informers sync; so a post-start hook's write never waits for an informer."""

from __future__ import annotations

from typing import Any

from kplane.api import Informer, ListOptions, Registry, RequestContext

Obj = dict[str, Any]


async def objects(registry: Registry, informer: Informer | None, group: str, plural: str, namespace: str = "") -> list[Obj]:
    """The wire-form objects of ``group``/``plural`` (in ``namespace``, for a namespaced one)."""
    if informer is not None and informer.synced.is_set():
        lister = informer.lister()
        return lister.namespaced(namespace).list() if namespace else lister.list()
    store = registry.store(group, plural)
    if store is None:
        return []
    page = await store.list(RequestContext(group=group, resource=plural, namespace=namespace), ListOptions())
    return [item.obj for item in page.items]


async def get(registry: Registry, informer: Informer | None, group: str, plural: str, name: str, namespace: str = "") -> Obj | None:
    """One wire-form object by name, or None."""
    if informer is not None and informer.synced.is_set():
        return informer.indexer.get(f"{namespace}/{name}" if namespace else name)
    store = registry.store(group, plural)
    if store is None:
        return None
    found = await store.get_internal(namespace, name)
    return None if found is None else store.resource.encode(found, store.resource.storage_version)
