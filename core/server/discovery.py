"""API discovery in both forms clients use.

kubectl asks for the aggregated form (``apidiscovery.k8s.io/v2``, exact media type required) and
gets everything in two requests; the Python DynamicClient only speaks the legacy form
(``APIVersions``, ``APIGroupList``, ``APIResourceList`` per group-version). Documents are rebuilt
only when the scheme or registry changed.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
from typing import TYPE_CHECKING, Any

import orjson
from aiohttp import web

from kplane.core.registry.registry import Endpoint, Registry
from kplane.core.runtime.gvk import GroupVersion
from kplane.core.runtime.scheme import ResourceType, Scheme
from kplane.core.server import negotiation

if TYPE_CHECKING:
    from kplane.core.server.apisources import APISources, Ordered

#: The media type of aggregated discovery, to ask another server for it (``Accept``).
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
# An APIGroupDiscovery's metadata is a whole ObjectMeta in Go, whose zero creationTimestamp
# encodes as null: kube-apiserver writes {"name": ..., "creationTimestamp": null}.
_NO_TIMESTAMP = {"creationTimestamp": None}


def storage_version_hash(group: str, version: str, kind: str) -> str:
    """kube-apiserver's ``StorageVersionHash``: base64 of the first 8 bytes of the sha256 of
    ``group/version/kind`` of the storage version. Clients (the storage version migrator) watch
    it change to learn that stored objects need rewriting."""
    digest = hashlib.sha256(f"{group}/{version}/{kind}".encode()).digest()
    return base64.b64encode(digest[:8]).decode()


def wants_aggregated(request: web.Request) -> bool:
    for part in request.headers.get("Accept", "").split(","):
        fields = {p.strip() for p in part.split(";")[1:]}
        if "as=APIGroupDiscoveryList" in fields and "g=apidiscovery.k8s.io" in fields:
            return "v=v2" in fields or "v=v2beta1" in fields
    return False


class Discovery:
    """``sources``: the plugins' (:mod:`kplane.core.server.apisources`); with any, the
    group/versions they name are listed too, and every group in their rank order."""

    def __init__(self, scheme: Scheme, registry: Registry, sources: APISources | None = None) -> None:
        self.scheme = scheme
        self.registry = registry
        self.sources = sources
        self._cache: dict[str, bytes] = {}
        self._generation = -1

    def _cached(self, key: str, build: Any) -> orjson.Fragment:
        """The document ``build`` makes, encoded once per scheme generation."""
        if self._generation != self.scheme.generation:
            self._cache.clear()
            self._generation = self.scheme.generation
        body = self._cache.get(key)
        if body is None:
            body = self._cache[key] = orjson.dumps(build())
        return orjson.Fragment(body)

    def _response(self, key: str, build: Any, content_type: str = negotiation.JSON) -> web.Response:
        """A cached document as a whole answer, Go's escapes and newline added once as well."""
        fragment = self._cached(key, build)
        body = self._cache.get("response:" + key)
        if body is None:
            body = self._cache["response:" + key] = negotiation.encode_json(fragment)
        return web.Response(body=body, headers={"Content-Type": content_type})

    # -- /api and /apis ---------------------------------------------------------------------
    async def core_root(self, request: web.Request) -> web.Response:
        if wants_aggregated(request):
            return self._response("agg:core", lambda: self._aggregated(core=True), AGGREGATED)
        host = request.host
        return self._response(
            f"legacy:core:{host}",
            lambda: {
                "kind": "APIVersions",
                "versions": self.scheme.groups().get("", []),
                "serverAddressByClientCIDRs": [{"clientCIDR": "0.0.0.0/0", "serverAddress": host}],
            },
        )

    def _aggregating(self) -> bool:
        return self.sources is not None and bool(self.sources.sources)

    def _ordered(self) -> Ordered:
        """Named groups with their versions, each with the RemoteVersion serving it (None: served here)."""
        assert self.sources is not None
        return self.sources.ordered({g: vs for g, vs in self.scheme.groups().items() if g})

    async def _aggregated_groups(self) -> dict[str, Any]:
        """``/apis`` in the aggregated form, with the remote group/versions' entries as their
        servers report them (asked concurrently)."""
        order = self._ordered()
        remotes = [remote for _, versions in order for _, remote in versions if remote is not None]
        found = await asyncio.gather(*(remote.discovery() for remote in remotes))
        described = iter(found)
        items = []
        for group, versions in order:
            entries = [
                next(described) if remote is not None
                else self._cached(f"agg:{group}/{version}", lambda g=group, v=version: self._aggregated_version(g, v))
                for version, remote in versions
            ]
            items.append(_group_discovery(group, entries))
        return _discovery_list(items)

    async def groups_root(self, request: web.Request) -> web.Response:
        if self._aggregating():
            if wants_aggregated(request):
                return negotiation.json_response(200, await self._aggregated_groups(), AGGREGATED)
            listed = [self._api_group(g, [v for v, _ in vs]) for g, vs in self._ordered()]
            return negotiation.json_response(200, {"kind": "APIGroupList", "apiVersion": "v1", "groups": listed})
        if wants_aggregated(request):
            return self._response("agg:groups", lambda: self._aggregated(core=False), AGGREGATED)
        return self._response(
            "legacy:groups",
            lambda: {
                "kind": "APIGroupList",
                "apiVersion": "v1",
                "groups": [self._api_group(g, vs) for g, vs in self.scheme.groups().items() if g],
            },
        )

    async def group(self, request: web.Request) -> web.Response:
        group = request.match_info["group"]
        if self._aggregating():
            versions = next(([v for v, _ in vs] for g, vs in self._ordered() if g == group), None)
        else:
            versions = self.scheme.groups().get(group)
        if not versions or not group:
            raise web.HTTPNotFound()
        return negotiation.json_response(200, {"kind": "APIGroup", "apiVersion": "v1", **self._api_group(group, versions)})

    async def resource_list(self, request: web.Request) -> web.Response:
        group = request.match_info.get("group", "")
        version = request.match_info["version"]
        if version not in self.scheme.groups().get(group, []):
            raise web.HTTPNotFound()
        return self._response(f"resources:{group}/{version}", lambda: self._resource_list(group, version))

    # -- documents (fields in the Go structs' order, so the bytes match kube-apiserver's) --
    def _api_group(self, group: str, versions: list[str]) -> dict[str, Any]:
        listed = [{"groupVersion": f"{group}/{v}", "version": v} for v in versions]
        return {"name": group, "versions": listed, "preferredVersion": listed[0]}

    def _endpoints(self, rt: ResourceType, version: str) -> list[tuple[str, Endpoint]]:
        """The resource's own endpoint ("") and its subresources' in ``version``, as the registry declares them."""
        return list(self.registry.endpoints(rt.group, rt.plural, version).items())

    def _resource_list(self, group: str, version: str) -> dict[str, Any]:
        """``APIResourceList``: a resource's entry carries its storage version's hash, a
        subresource's does not (kube-apiserver's subresource storages have no storage version)."""
        resources = []
        for rt in self.scheme.resources_in(group, version):
            for sub, endpoint in self._endpoints(rt, version):
                entry: dict[str, Any] = {
                    "name": f"{rt.plural}/{sub}" if sub else rt.plural,
                    "singularName": "" if sub else rt.singular,
                    "namespaced": rt.namespaced,
                }
                kind = endpoint.kind
                if kind is not None and (kind.group, kind.version) != (group, version):
                    entry.update(group=kind.group, version=kind.version)
                entry["kind"] = kind.kind if kind is not None else rt.kind
                entry["verbs"] = list(endpoint.verbs)
                if not sub:
                    if rt.short_names:
                        entry["shortNames"] = list(rt.short_names)
                    if rt.categories:
                        entry["categories"] = list(rt.categories)
                    entry["storageVersionHash"] = storage_version_hash(rt.group, rt.storage_version, rt.kind)
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
            items.append(_group_discovery(group, [self._aggregated_version(group, v) for v in versions]))
        return _discovery_list(items)

    def _aggregated_version(self, group: str, version: str) -> dict[str, Any]:
        resources = [self._aggregated_resource(rt, version) for rt in self.scheme.resources_in(group, version)]
        return {"version": version, "resources": resources, "freshness": "Current"}

    def _aggregated_resource(self, rt: ResourceType, version: str) -> dict[str, Any]:
        """``APIResourceDiscovery`` (no storageVersionHash in the aggregated form)."""
        own = {"group": rt.group, "version": version, "kind": rt.kind}
        endpoints = self._endpoints(rt, version)
        entry: dict[str, Any] = {
            "resource": rt.plural,
            "responseKind": own,
            "scope": "Namespaced" if rt.namespaced else "Cluster",
            "singularResource": rt.singular,
            "verbs": list(endpoints[0][1].verbs),
        }
        if rt.short_names:
            entry["shortNames"] = list(rt.short_names)
        if rt.categories:
            entry["categories"] = list(rt.categories)
        subresources = [
            {"subresource": sub, "responseKind": endpoint.kind._asdict() if endpoint.kind else own, "verbs": list(endpoint.verbs)}
            for sub, endpoint in endpoints[1:]
        ]
        if subresources:
            entry["subresources"] = subresources
        return entry


def _group_discovery(group: str, versions: list[Any]) -> dict[str, Any]:
    """``APIGroupDiscovery``; the core group's name is empty, so left out."""
    metadata = {"name": group, **_NO_TIMESTAMP} if group else dict(_NO_TIMESTAMP)
    return {"metadata": metadata, "versions": versions}


def _discovery_list(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {"kind": "APIGroupDiscoveryList", "apiVersion": "apidiscovery.k8s.io/v2", "metadata": {}, "items": items}
