"""The Registry: one Store per resource and subresource, built from the scheme and strategies."""

from __future__ import annotations

from dataclasses import dataclass

from kplane.core.registry import scale, storeerr
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.scale import ScaleAdapter
from kplane.core.registry.store import Store
from kplane.core.registry.strategy import RESOURCE_VERBS, SUBRESOURCE_VERBS, PostSubresource, Strategy, verbs_of
from kplane.core.runtime.gvk import GroupVersionKind
from kplane.core.runtime.schema import Schema
from kplane.core.runtime.scheme import Scheme
from kplane.core.storage.interface import Storage

# The verbs a named subresource can be reached with (the router sends no list, watch or
# deletecollection to a subresource).
_SUBRESOURCE_REACHABLE = frozenset({"create", "get", "patch", "update"})


@dataclass(frozen=True, slots=True)
class Endpoint:
    """What one resource or subresource supports, read by the router (which answers other verbs
    with 405), discovery and OpenAPI (which list these), from the strategy's declarations."""

    verbs: tuple[str, ...]  # sorted, as kube-apiserver lists them
    kind: GroupVersionKind | None = None  # None: the parent's kind, in the version asked for
    schema: type[Schema] | None = None  # the schema of ``kind`` when it is not the parent's
    returns_deleted: bool = False  # a finished DELETE answers with the object, not a Status


SCALE_ENDPOINT = Endpoint(tuple(sorted(SUBRESOURCE_VERBS)), GroupVersionKind(scale.GROUP, scale.VERSION, scale.KIND),
                          scale.ScaleSchema)


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

    async def storage_health(self) -> str | None:
        """Why the storage behind every Store cannot serve requests now (worded for a health
        probe, see :func:`storeerr.health`); None when it can."""
        return await storeerr.health(self.storage)

    def add_strategy(self, group: str, plural: str, strategy: Strategy, *, subresource: str = "") -> None:
        """Give ``plural.group`` (or its ``subresource``, e.g. "status") its behaviour.

        Raises ValueError when the strategy declares verbs it cannot serve there."""
        verbs = verbs_of(strategy, subresource)
        allowed = _SUBRESOURCE_REACHABLE if subresource else RESOURCE_VERBS
        if not verbs or not verbs <= allowed:
            raise ValueError(f"{plural}{'/' + subresource if subresource else ''}: verbs {sorted(verbs)} must be some of {sorted(allowed)}")
        if subresource and "create" in verbs and not isinstance(strategy, PostSubresource):
            raise ValueError(f"{plural}/{subresource}: the verb create needs a strategy with apply_post (PostSubresource)")
        self._strategies[(group, plural, subresource)] = strategy
        self.scheme.changed()  # new subresources show in discovery; stores are rebuilt

    def add_scale(self, group: str, plural: str, adapter: ScaleAdapter) -> None:
        """Serve ``plural.group/scale`` as autoscaling/v1 Scale (see :mod:`kplane.core.registry.scale`)."""
        self._scales[(group, plural)] = adapter
        self.scheme.changed()

    def scale(self, group: str, plural: str) -> ScaleAdapter | None:
        return self._scales.get((group, plural))

    def subresources(self, group: str, plural: str) -> list[str]:
        subs = {sub for g, p, sub in self._strategies if (g, p) == (group, plural) and sub}
        if (group, plural) in self._scales:
            subs.add("scale")
        return sorted(subs)

    def endpoint(self, group: str, plural: str, subresource: str = "") -> Endpoint | None:
        """What ``plural.group`` (or its ``subresource``) supports; None when it is not served."""
        if subresource == "scale":
            return SCALE_ENDPOINT if (group, plural) in self._scales else None
        strategy = self.strategy(group, plural, subresource)
        if strategy is None:
            return None
        return Endpoint(tuple(sorted(verbs_of(strategy, subresource))), strategy.response_kind, strategy.response_schema,
                        strategy.return_deleted_object)

    def endpoints(self, group: str, plural: str) -> dict[str, Endpoint]:
        """The resource's own endpoint (key "") and each of its subresources', as served."""
        found = {}
        for sub in ["", *self.subresources(group, plural)]:
            endpoint = self.endpoint(group, plural, sub)
            if endpoint is not None:
                found[sub] = endpoint
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
