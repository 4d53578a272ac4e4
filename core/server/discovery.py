"""API discovery in both forms clients use.

kubectl asks for the aggregated form (``apidiscovery.k8s.io/v2``, exact media type required) and
gets everything in two requests; the Python DynamicClient only speaks the legacy form
(``APIVersions``, ``APIGroupList``, ``APIResourceList`` per group-version). Documents are rebuilt
only when the scheme or registry changed.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from core.registry import scale
from core.registry.registry import Registry
from core.runtime.gvk import GroupVersion
from core.runtime.scheme import ResourceType, Scheme

if TYPE_CHECKING:
    from core.server.aggregator import Aggregator

SCALE_KIND = {"group": scale.GROUP, "version": scale.VERSION, "kind": scale.KIND}
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"]
SUBRESOURCE_VERBS = ["get", "patch", "update"]


def wants_aggregated(request: web.Request) -> bool:
    for part in request.headers.get("Accept", "").split(","):
        fields = {p.strip() for p in part.split(";")[1:]}
        if "as=APIGroupDiscoveryList" in fields and "g=apidiscovery.k8s.io" in fields:
            return "v=v2" in fields or "v=v2beta1" in fields
    return False


class Discovery:
    """``aggregator``: when it is on, the groups it proxies are listed too, and every group is
    ordered by its APIServices' priorities (:meth:`Aggregator.ordered`)."""

    def __init__(self, scheme: Scheme, registry: Registry, aggregator: Aggregator | None = None) -> None:
        self.scheme = scheme
        self.registry = registry
        self.aggregator = aggregator
        self._cache: dict[str, bytes] = {}
        self._generation = -1

    def _cached(self, key: str, build: Any) -> bytes:
        if self._generation != self.scheme.generation:
            self._cache.clear()
            self._generation = self.scheme.generation
        body = self._cache.get(key)
        if body is None:
            body = self._cache[key] = orjson.dumps(build())
        return body

    # -- /api and /apis ---------------------------------------------------------------------
    async def core_root(self, request: web.Request) -> web.Response:
        if wants_aggregated(request):
            body = self._cached("agg:core", lambda: self._aggregated(core=True))
            return web.Response(body=body, headers={"Content-Type": AGGREGATED})
        host = request.host
        body = self._cached(
            f"legacy:core:{host}",
            lambda: {
                "kind": "APIVersions",
                "versions": self.scheme.groups().get("", []),
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
            },
        )
        return web.Response(body=body, content_type="application/json")

    def _aggregating(self) -> bool:
        return self.aggregator is not None and self.aggregator.api_services is not None

    def _ordered(self) -> list[tuple[str, list[tuple[str, dict[str, Any] | None]]]]:
        """Named groups with their versions, each with the APIService proxying it (None: served here)."""
        assert self.aggregator is not None
        served = {g: vs for g, vs in self.scheme.groups().items() if g}
        return [(g, vs) for g, vs in self.aggregator.ordered(served) if g]

    async def _aggregated_groups(self) -> dict[str, Any]:
        """``/apis`` in the aggregated form, with the proxied group/versions' entries as their
        backends report them (fetched concurrently, each kept for a few seconds)."""
        assert self.aggregator is not None
        order = self._ordered()
        remote = [api_service for _, versions in order for _, api_service in versions if api_service is not None]
        found = await asyncio.gather(*(self.aggregator.version_discovery(a) for a in remote))
        by_name = {a["metadata"]["name"]: entry for a, entry in zip(remote, found, strict=True)}
        items = []
        for group, versions in order:
            entries = [
                by_name[api_service["metadata"]["name"]] if api_service is not None
                else orjson.Fragment(self._cached(f"agg:{group}/{version}", lambda g=group, v=version: self._aggregated_version(g, v)))
                for version, api_service in versions
            ]
            items.append({"metadata": {"name": group}, "versions": entries})
        return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}

    async def groups_root(self, request: web.Request) -> web.Response:
        if self._aggregating():
            if wants_aggregated(request):
                body = orjson.dumps(await self._aggregated_groups())
                return web.Response(body=body, headers={"Content-Type": AGGREGATED})
            listed = [self._api_group(g, [v for v, _ in vs]) for g, vs in self._ordered()]
            body = orjson.dumps({"kind": "APIGroupList", "apiVersion": "v1", "groups": listed})
            return web.Response(body=body, content_type="application/json")
        if wants_aggregated(request):
            body = self._cached("agg:groups", lambda: self._aggregated(core=False))
            return web.Response(body=body, headers={"Content-Type": AGGREGATED})
        body = self._cached(
            "legacy:groups",
            lambda: {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [self._api_group(g, vs) for g, vs in self.scheme.groups().items() if g],
            },
        )
        return web.Response(body=body, content_type="application/json")

    async def group(self, request: web.Request) -> web.Response:
        group = request.match_info["group"]
        if self._aggregating():
            versions = next(([v for v, _ in vs] for g, vs in self._ordered() if g == group), None)
        else:
            versions = self.scheme.groups().get(group)
        if not versions or not group:
            raise web.HTTPNotFound()
        body = {"kind": "APIGroup", "apiVersion": "v1", **self._api_group(group, versions)}
        return web.Response(body=orjson.dumps(body), content_type="application/json")

    async def resource_list(self, request: web.Request) -> web.Response:
        group = request.match_info.get("group", "")
        version = request.match_info["version"]
        if version not in self.scheme.groups().get(group, []):
            raise web.HTTPNotFound()
        body = self._cached(f"resources:{group}/{version}", lambda: self._resource_list(group, version))
        return web.Response(body=body, content_type="application/json")

    # -- documents --------------------------------------------------------------------------
    def _api_group(self, group: str, versions: list[str]) -> dict[str, Any]:
        listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": listed, "preferredVersion": listed[0]}

    def _subresources(self, rt: ResourceType) -> list[str]:
        return self.registry.subresources(rt.group, rt.plural)

    def _resource_list(self, group: str, version: str) -> dict[str, Any]:
        resources = []
        for rt in self.scheme.resources_in(group, version):
            entry: dict[str, Any] = {
                "name": rt.plural,
                "singularName": rt.singular,
                "namespaced": rt.namespaced,
                "kind": rt.kind,
                "verbs": VERBS,
            }
            if rt.short_names:
                entry["shortNames"] = list(rt.short_names)
            if rt.categories:
                entry["categories"] = list(rt.categories)
            resources.append(entry)
            for sub in self._subresources(rt):
                entry = {"name": f"{rt.plural}/{sub}", "singularName": "", "namespaced": rt.namespaced, "kind": rt.kind, "verbs": SUBRESOURCE_VERBS}
                if sub == "scale":
                    entry.update(group=scale.GROUP, version=scale.VERSION, kind=scale.KIND)
                resources.append(entry)
        return {
            "kind": "APIResourceList",
            "apiVersion": "v1",
            "groupVersion": GroupVersion(group, version).api_version,
            "resources": resources,
        }

    def _aggregated(self, *, core: bool) -> dict[str, Any]:
        items = []
        for group, versions in self.scheme.groups().items():
            if (group == "") != core:
                continue
            items.append({"metadata": {"name": group}, "versions": [self._aggregated_version(group, v) for v in versions]})
        return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}

    def _aggregated_version(self, group: str, version: str) -> dict[str, Any]:
        resources = [self._aggregated_resource(rt, version) for rt in self.scheme.resources_in(group, version)]
        return {"version": version, "freshness": "Current", "resources": resources}

    def _aggregated_resource(self, rt: ResourceType, version: str) -> dict[str, Any]:
        kind = {"group": rt.group, "version": version, "kind": rt.kind}
        entry: dict[str, Any] = {
            "resource": rt.plural,
            "singularResource": rt.singular,
            "scope": "Namespaced" if rt.namespaced else "Cluster",
            "responseKind": kind,
            "verbs": VERBS,
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        subresources = self._subresources(rt)
        if subresources:
            entry["subresources"] = [
                {"subresource": s, "responseKind": SCALE_KIND if s == "scale" else kind, "verbs": SUBRESOURCE_VERBS}
                for s in subresources
            ]
        return entry
