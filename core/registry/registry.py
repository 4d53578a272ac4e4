"""The Registry: one Store per resource and subresource, built from the scheme and strategies,
and the object serving each (its capabilities: :mod:`kplane.core.registry.rest`), be it one the
registry makes (a Store, status, scale, binding) or a plugin's own (:meth:`Registry.add_subresource`,
and :meth:`Registry.add_rest` for a resource that is never stored)."""

from __future__ import annotations

from dataclasses import dataclass

from kplane.core.registry import storeerr
from kplane.core.registry.admission import AdmissionChain
from kplane.core.registry.rest import Served, capabilities, connect_methods, problems, verbs_of
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
    connect_methods: tuple[str, ...] = ()  # the HTTP methods a Connecter takes, in CONNECT_VERBS' order

    @classmethod
    def of(cls, served: Served) -> Endpoint:
        return cls(verbs_of(served), served.kind, served.schema, served.returns_deleted, connect_methods(served))


class Registry:
    """Where the HTTP layer and admission plugins find a resource's Store, and the object serving
    each resource and subresource (:meth:`rest`).

    Stores are made on first use, so kinds and strategies may be added while the server runs.
    A kind registered without a strategy gets the default :class:`Strategy`.

    A strategy or scale adapter is registered for every version of the kind, or (``version=``)
    for one version, where it takes the place of the former: a kind whose versions behave
    differently (a CustomResourceDefinition's per-version columns and subresources). A
    subresource registered for some versions only is not served in the others.
    """

    def __init__(self, scheme: Scheme, storage: Storage, admission: AdmissionChain) -> None:
        self.scheme = scheme
        self.storage = storage
        self.admission = admission
        # By (group, plural, subresource, version); version "": every version.
        self._strategies: dict[tuple[str, str, str, str], Strategy] = {}
        self._scales: dict[tuple[str, str, str], ScaleAdapter] = {}  # by (group, plural, version)
        # Plugins' own serving objects by (group, plural, subresource); subresource "": a resource
        # served without storage (add_rest).
        self._subresources: dict[tuple[str, str, str], Served] = {}
        self._stores: dict[tuple[str, str, str, str], Store] = {}
        self._generation = -1

    async def storage_health(self) -> str | None:
        """Why the storage behind every Store cannot serve requests now (worded for a health
        probe, see :func:`storeerr.health`); None when it can."""
        return await storeerr.health(self.storage)

    def add_strategy(self, group: str, plural: str, strategy: Strategy, *, subresource: str = "",
                     version: str = "") -> None:
        """Give ``plural.group`` (or its ``subresource``, e.g. "status") its behaviour, in every
        version or in ``version`` only.

        A subresource's strategy with ``apply_post`` (:class:`~kplane.core.registry.strategy.PostSubresource`)
        takes POST; any other reads and writes the parent. Raises ValueError when the strategy
        declares verbs the object serving it has no capability for."""
        if subresource:
            self._not_served_otherwise(group, plural, subresource, "a strategy")
        declared = strategy.verbs
        able = capabilities(serving(strategy) if subresource else Store)
        if declared is not None and (not declared or not declared <= able):
            where = f"{plural}{'/' + subresource if subresource else ''}"
            why = f"{where}: verbs {sorted(declared)} must be some of {sorted(able)}"
            if subresource and "create" in declared:
                why += "; the verb create needs a strategy with apply_post (PostSubresource)"
            raise ValueError(why)
        self._strategies[(group, plural, subresource, version)] = strategy
        self.scheme.changed()  # new subresources show in discovery; stores are rebuilt

    def add_scale(self, group: str, plural: str, adapter: ScaleAdapter, *, version: str = "") -> None:
        """Serve ``plural.group/scale`` as autoscaling/v1 Scale (see :mod:`kplane.core.registry.scale`),
        in every version or in ``version`` only."""
        self._not_served_otherwise(group, plural, "scale", "a scale adapter")
        self._scales[(group, plural, version)] = adapter
        self.scheme.changed()

    def add_subresource(self, group: str, plural: str, subresource: str, served: Served) -> None:
        """Serve ``plural.group``'s ``subresource`` with ``served``: an object of the plugin's
        own, a :class:`~kplane.core.registry.rest.Served` with the capabilities it has (say a
        :class:`~kplane.core.registry.rest.Creater` of a kind of its own, as ``pods/eviction``,
        or a :class:`~kplane.core.registry.rest.Connecter` streaming, as ``pods/log``). The
        router, discovery and OpenAPI serve exactly those. It reaches its parent object through
        ``registry.rest(group, plural)`` on each request (the parent's Store is rebuilt when the
        scheme changes). Registering the same subresource again replaces it; ValueError when
        ``served`` is unfit (:func:`~kplane.core.registry.rest.problems`) or a strategy or scale
        adapter serves that subresource already."""
        where = f"{plural}/{subresource}"
        if not subresource or "/" in subresource:
            raise ValueError(f"{where}: a subresource is one path segment")
        if not isinstance(served, Served):
            raise ValueError(f"{where}: {type(served).__name__} must derive from Served (kplane.api)")
        found = problems(served)
        if found:
            raise ValueError(f"{where}: {'; '.join(found)}")
        self._not_served_otherwise(group, plural, subresource, "add_subresource")
        self._subresources[(group, plural, subresource)] = served
        self.scheme.changed()

    def add_rest(self, group: str, plural: str, served: Served) -> None:
        """Serve the resource ``plural.group`` with ``served`` instead of a Store: a resource that
        is never stored, as kube-apiserver's review resources (TokenReview, SubjectAccessReview),
        which are a :class:`~kplane.core.registry.rest.Creater` only. ``create`` receives the
        internal object the HTTP layer decoded from the body (managedFields recorded, as for any
        create) and returns the internal object to answer with, encoded in the request's version.
        A ``Getter`` and ``Lister`` of objects made on request (metrics.k8s.io's) answer internal
        objects too (``list``: a ``ListPage`` of them), encoded by the HTTP layer, Tables included.
        The router, discovery (verbs ``["create"]``) and OpenAPI serve exactly its capabilities.
        Registering it again replaces it; ValueError when ``served`` is unfit
        (:func:`~kplane.core.registry.rest.problems` with ``resource=True``)."""
        if not isinstance(served, Served):
            raise ValueError(f"{plural}: {type(served).__name__} must derive from Served (kplane.api)")
        found = problems(served, resource=True)
        if found:
            raise ValueError(f"{plural}: {'; '.join(found)}")
        self._subresources[(group, plural, "")] = served
        self.scheme.changed()

    def remove(self, group: str, plural: str) -> None:
        """Forget everything serving ``plural.group``: its strategies (the resource's and its
        subresources'), scale adapter and plugins' serving objects, as when a
        CustomResourceDefinition goes or changes (its kind is then registered anew)."""
        for table in (self._strategies, self._subresources, self._scales):
            for key in [k for k in table if k[:2] == (group, plural)]:
                del table[key]
        self.scheme.changed()

    def _not_served_otherwise(self, group: str, plural: str, subresource: str, way: str) -> None:
        """One way to serve each subresource: ValueError when another than ``way`` serves it."""
        ways = {
            "a strategy": any(k[:3] == (group, plural, subresource) for k in self._strategies),
            "a scale adapter": subresource == "scale" and any(k[:2] == (group, plural) for k in self._scales),
            "add_subresource": (group, plural, subresource) in self._subresources,
        }
        taken = [other for other, serves in ways.items() if serves and other != way]
        if taken:
            raise ValueError(f"{plural}/{subresource} is served by {taken[0]} already")

    def subresources(self, group: str, plural: str, version: str = "") -> list[str]:
        """The subresources of ``plural.group`` served in ``version`` (""; in every version)."""
        subs = {key[2] for key in self._strategies if key[:2] == (group, plural) and key[2] and key[3] in ("", version)}
        subs |= {sub for g, p, sub in self._subresources if (g, p) == (group, plural) and sub}
        if any(key[:2] == (group, plural) and key[2] in ("", version) for key in self._scales):
            subs.add("scale")
        return sorted(subs)

    def rest(self, group: str, plural: str, subresource: str = "", version: str = "") -> Served | None:
        """The object serving ``plural.group`` (or its ``subresource``) in ``version`` ("": in
        every version); None when it is not served."""
        unstored = self._subresources.get((group, plural, "")) if not subresource else None
        if unstored is not None:
            return unstored if self.scheme.get(group, plural) is not None else None
        parent = self.store(group, plural, version=version)
        if parent is None or not subresource:
            return parent
        own = self._subresources.get((group, plural, subresource))
        if own is not None:
            return own
        adapter = self._scales.get((group, plural, version)) or self._scales.get((group, plural, ""))
        if subresource == "scale" and adapter is not None:
            return ScaleREST(parent, adapter)
        store = self.store(group, plural, subresource, version)
        return serving(store.strategy)(store) if store is not None else None

    def endpoints(self, group: str, plural: str, version: str = "") -> dict[str, Endpoint]:
        """The resource's own endpoint (key "") and each of its subresources', as served in
        ``version`` ("": in every version)."""
        found = {}
        for sub in ["", *self.subresources(group, plural, version)]:
            served = self.rest(group, plural, sub, version)
            if served is not None:
                found[sub] = Endpoint.of(served)
        return found

    def _version_of(self, group: str, plural: str, subresource: str, version: str) -> str | None:
        """The version a strategy was registered for that serves ``version`` ("" for every
        version); None when there is none."""
        for key in (version, "") if version else ("",):
            if (group, plural, subresource, key) in self._strategies:
                return key
        return None

    def strategy(self, group: str, plural: str, subresource: str = "", version: str = "") -> Strategy | None:
        """The behaviour of ``plural.group`` (or its ``subresource``) in ``version``; a resource
        without one has the default Strategy, a subresource without one is not served (None)."""
        found = self._version_of(group, plural, subresource, version)
        if found is None:
            return None if subresource else Strategy()
        return self._strategies[(group, plural, subresource, found)]

    def store(self, group: str, plural: str, subresource: str = "", version: str = "") -> Store | None:
        if self._generation != self.scheme.generation:
            self._stores.clear()
            self._generation = self.scheme.generation
        key = (group, plural, subresource, self._version_of(group, plural, subresource, version) or "")
        store = self._stores.get(key)
        if store is None:
            resource = self.scheme.get(group, plural)
            strategy = self.strategy(group, plural, subresource, version)
            if resource is None or strategy is None:
                return None
            store = self._stores[key] = Store(resource, strategy, self.storage, self.admission, subresource=subresource)
        return store
