"""The informer's local store: an indexed cache of objects, and listers that read it.

client-go's ``cache.Indexer`` and listers: objects are kept by ``namespace/name``; index
functions map an object to index values (the ``namespace`` index is always there) so a lister
answers "everything in this namespace" or "everything owned by X" without a scan and without a
request to the server.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

from kplane.core.meta.selectors import LabelSelectorExpr

Obj = dict[str, Any]
IndexFunc = Callable[[Obj], Iterable[str]]
NAMESPACE_INDEX = "namespace"


def object_key(obj: Obj) -> str:
    """``namespace/name``, or ``name`` for cluster-scoped objects (client-go's MetaNamespaceKeyFunc)."""
    meta = obj["metadata"]
    return f"{meta['namespace']}/{meta['name']}" if meta.get("namespace") else meta["name"]


def namespace_index(obj: Obj) -> list[str]:
    return [obj["metadata"].get("namespace", "")]


class Indexer:
    """Objects by key, plus one reverse index per index function."""

    def __init__(self, indexers: dict[str, IndexFunc] | None = None) -> None:
        self._items: dict[str, Obj] = {}
        self._indexers: dict[str, IndexFunc] = {NAMESPACE_INDEX: namespace_index, **(indexers or {})}
        self._indices: dict[str, dict[str, set[str]]] = {name: {} for name in self._indexers}

    def add_indexer(self, name: str, func: IndexFunc) -> None:
        """Add an index; existing objects are indexed right away."""
        if name in self._indexers:
            raise ValueError(f"index {name!r} already exists")
        self._indexers[name] = func
        self._indices[name] = {}
        for key, obj in self._items.items():
            self._index(name, key, obj)

    def has_indexer(self, name: str) -> bool:
        """Whether the index exists: controllers sharing an informer add one they share once."""
        return name in self._indexers

    def get(self, key: str) -> Obj | None:
        return self._items.get(key)

    def keys(self) -> list[str]:
        return list(self._items)

    def list(self) -> list[Obj]:
        return list(self._items.values())

    def by_index(self, name: str, value: str) -> list[Obj]:
        return [self._items[key] for key in self._indices[name].get(value, ())]

    def count(self, name: str, value: str) -> int:
        """How many objects the index holds under ``value`` (``len(IndexKeys)``), without listing them."""
        return len(self._indices[name].get(value, ()))

    def __len__(self) -> int:
        return len(self._items)

    def put(self, obj: Obj) -> Obj | None:
        """Store ``obj``; returns the object it replaced."""
        key = object_key(obj)
        old = self._items.get(key)
        if old is not None:
            self._unindex(key, old)
        self._items[key] = obj
        for name in self._indexers:
            self._index(name, key, obj)
        return old

    def pop(self, key: str) -> Obj | None:
        old = self._items.pop(key, None)
        if old is not None:
            self._unindex(key, old)
        return old

    def _index(self, name: str, key: str, obj: Obj) -> None:
        for value in self._indexers[name](obj):
            self._indices[name].setdefault(value, set()).add(key)

    def _unindex(self, key: str, obj: Obj) -> None:
        for name, func in self._indexers.items():
            for value in func(obj):
                keys = self._indices[name].get(value)
                if keys is not None:
                    keys.discard(key)
                    if not keys:
                        del self._indices[name][value]


class Lister:
    """Reads of one resource from an informer's cache, never from the server."""

    def __init__(self, indexer: Indexer, namespace: str | None = None) -> None:
        self.indexer = indexer
        self.namespace = namespace

    def namespaced(self, namespace: str) -> Lister:
        return Lister(self.indexer, namespace)

    def get(self, name: str) -> Obj | None:
        return self.indexer.get(f"{self.namespace}/{name}" if self.namespace else name)

    def list(self, selector: LabelSelectorExpr | None = None) -> list[Obj]:
        objects = self.indexer.by_index(NAMESPACE_INDEX, self.namespace) if self.namespace is not None else self.indexer.list()
        if selector is None:
            return objects
        return [o for o in objects if selector.matches(o["metadata"].get("labels"))]
