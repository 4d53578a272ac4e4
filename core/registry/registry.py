"""The Registry: one Store per resource and subresource, built from the scheme and strategies."""

from __future__ import annotations

from core.registry.admission import AdmissionChain
from core.registry.scale import ScaleAdapter
from core.registry.store import Store
from core.registry.strategy import Strategy
from core.runtime.scheme import Scheme
from core.storage.interface import Storage


class Registry:
    """Where the HTTP layer and admission plugins find a resource's Store.

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

    def add_strategy(self, group: str, plural: str, strategy: Strategy, *, subresource: str = "") -> None:
        """Give ``plural.group`` (or its ``subresource``, e.g. "status") its behaviour."""
        self._strategies[(group, plural, subresource)] = strategy
        self.scheme.changed()  # new subresources show in discovery; stores are rebuilt

    def add_scale(self, group: str, plural: str, adapter: ScaleAdapter) -> None:
        """Serve ``plural.group/scale`` as autoscaling/v1 Scale (see :mod:`core.registry.scale`)."""
        self._scales[(group, plural)] = adapter
        self.scheme.changed()

    def scale(self, group: str, plural: str) -> ScaleAdapter | None:
        return self._scales.get((group, plural))

    def subresources(self, group: str, plural: str) -> list[str]:
        subs = {sub for g, p, sub in self._strategies if (g, p) == (group, plural) and sub}
        if (group, plural) in self._scales:
            subs.add("scale")
        return sorted(subs)

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
