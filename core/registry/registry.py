"""The Registry: one Store per resource and subresource, built from the scheme and strategies,
and the object serving each (its capabilities: :mod:`kplane.core.registry.rest`)."""

from __future__ import annotations

from dataclasses import dataclass

from kplane.core.registry import storeerr
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.rest import Served, capabilities, verbs_of
from kplane.core.registry.scale import ScaleAdapter, ScaleREST
from kplane.core.registry.store import Store
from kplane.core.registry.strategy import Strategy
from kplane.core.registry.subresources import serving
from kplane.core.runtime.gvk import GroupVersionKind
from kplane.core.runtime.schema import Schema
from kplane.core.runtime.scheme import Scheme
from kplane.core.storage.interface import Storage


@dataclass(frozen=True, slots=True)
class Endpoint:
    """What one resource or subresource serves, as discovery and OpenAPI list it: the verbs its
    serving object has the capabilities for (:func:`~kplane.core.registry.rest.verbs_of`), and the
    kind it declares."""

    verbs: tuple[str, ...]  # sorted, as kube-apiserver lists them
    kind: GroupVersionKind | None = None  # None: the parent's kind, in the version asked for
    schema: type[Schema] | None = None  # the schema of ``kind`` when it is not the parent's
    returns_deleted: bool = False  # a finished DELETE answers with the object, not a Status

    @classmethod
    def of(cls, served: Served) -> Endpoint:
        return cls(verbs_of(served), served.kind, served.schema, served.returns_deleted)


class Registry:
    """Where the HTTP layer and admission plugins find a resource's Store, and the object serving
    each resource and subresource (:meth:`rest`).

    Stores are made on first use, so kinds and strategies may be added while the server runs.
    A kind registered without a strategy gets the default :class:`Strategy`.
    """

    def __init__(self, scheme: Scheme, storage: Storage, admission: AdmissionChain) -> None:
        self.scheme = scheme
        self.storage = storage
        self.admission = admission
        self._strategies: dict[tuple[str, str, str], Strategy] = {}
        self._scales: dict[tuple[str, str], ScaleAdapter] = {}
        self._stores: dict[tuple[str, str, str], Store] = {}
        self._generation = -1

    async def storage_health(self) -> str | None:
        """Why the storage behind every Store cannot serve requests now (worded for a health
        probe, see :func:`storeerr.health`); None when it can."""
        return await storeerr.health(self.storage)

    def add_strategy(self, group: str, plural: str, strategy: Strategy, *, subresource: str = "") -> None:
        """Give ``plural.group`` (or its ``subresource``, e.g. "status") its behaviour.

        A subresource's strategy with ``apply_post`` (:class:`~kplane.core.registry.strategy.PostSubresource`)
        takes POST; any other reads and writes the parent. Raises ValueError when the strategy
        declares verbs the object serving it has no capability for."""
        declared = strategy.verbs
        able = capabilities(serving(strategy) if subresource else Store)
        if declared is not None and (not declared or not declared <= able):
            where = f"{plural}{'/' + subresource if subresource else ''}"
            why = f"{where}: verbs {sorted(declared)} must be some of {sorted(able)}"
            if subresource and "create" in declared:
                why += "; the verb create needs a strategy with apply_post (PostSubresource)"
            raise ValueError(why)
        self._strategies[(group, plural, subresource)] = strategy
        self.scheme.changed()  # new subresources show in discovery; stores are rebuilt

    def add_scale(self, group: str, plural: str, adapter: ScaleAdapter) -> None:
        """Serve ``plural.group/scale`` as autoscaling/v1 Scale (see :mod:`kplane.core.registry.scale`)."""
        self._scales[(group, plural)] = adapter
        self.scheme.changed()

    def subresources(self, group: str, plural: str) -> list[str]:
        subs = {sub for g, p, sub in self._strategies if (g, p) == (group, plural) and sub}
        if (group, plural) in self._scales:
            subs.add("scale")
        return sorted(subs)

    def rest(self, group: str, plural: str, subresource: str = "") -> Served | None:
        """The object serving ``plural.group`` (or its ``subresource``); None when it is not served."""
        parent = self.store(group, plural)
        if parent is None or not subresource:
            return parent
        adapter = self._scales.get((group, plural))
        if subresource == "scale" and adapter is not None:
            return ScaleREST(parent, adapter)
        store = self.store(group, plural, subresource)
        return serving(store.strategy)(store) if store is not None else None

    def endpoints(self, group: str, plural: str) -> dict[str, Endpoint]:
        """The resource's own endpoint (key "") and each of its subresources', as served."""
        found = {}
        for sub in ["", *self.subresources(group, plural)]:
            served = self.rest(group, plural, sub)
            if served is not None:
                found[sub] = Endpoint.of(served)
        return found

    def strategy(self, group: str, plural: str, subresource: str = "") -> Strategy | None:
        found = self._strategies.get((group, plural, subresource))
        return found if found is not None or subresource else Strategy()

    def store(self, group: str, plural: str, subresource: str = "") -> Store | None:
        if self._generation != self.scheme.generation:
            self._stores.clear()
            self._generation = self.scheme.generation
        key = (group, plural, subresource)
        store = self._stores.get(key)
        if store is None:
            resource = self.scheme.get(group, plural)
            strategy = self.strategy(group, plural, subresource)
            if resource is None or strategy is None:
                return None
            store = self._stores[key] = Store(resource, strategy, self.storage, self.admission, subresource=subresource)
        return store
