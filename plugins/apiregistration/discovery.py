"""The discovery and OpenAPI source of APIServices (kube-aggregator's discovery merge).

Discovery (``/apis`` in both forms, ``/apis/<group>``) lists the group/versions of APIServices
with a backend, ordered by ``groupPriorityMinimum`` and ``versionPriority`` as Kubernetes orders
them, with the resources the backend reports in its own aggregated discovery (or its legacy
``APIResourceList``), kept for :attr:`Settings.discovery_ttl`; the OpenAPI v3 index lists
``apis/<group>/<version>`` with the backend's URL for it (the document is proxied, hashes
included, so kubectl's cache keeps working). Core merges them (:mod:`kplane.api`'s
``APISources``); this says what there is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Mapping, Sequence
from typing import Any

from kplane.api import AGGREGATED_DISCOVERY, Handlers, ListedVersion, UnreachableError, describe_error
from kplane.plugins.apiregistration.aggregator import Aggregator
from kplane.plugins.apiregistration.apiservices import GROUP, condition, group_version, priorities, priorities_of

# kube-aggregator lists its own group first ("It's good to be king"): above any priority an
# APIService may have (at most 20000).
OWN_GROUP_FIRST = 20001


class DiscoveryMerge:
    """The APIServices as an ``APISource``; what backends tell is cached, and asked afresh when
    an APIService or Service changes."""

    def __init__(self, aggregator: Aggregator) -> None:
        self.aggregator = aggregator
        self._cache: dict[Any, tuple[float, Any]] = {}  # key -> (fetched at, value or UnreachableError)
        self._inflight: dict[Any, asyncio.Task[Any]] = {}
        for informer in (aggregator.api_services, aggregator.services):
            if informer is not None:
                informer.add_handlers(Handlers.for_any(self._changed))

    def _changed(self, obj: dict[str, Any]) -> None:
        self._cache.clear()  # a backend moved, appeared, or changed availability: ask it afresh

    def stop(self) -> None:
        for task in self._inflight.values():
            task.cancel()

    def listed(self, served: Mapping[str, Sequence[str]]) -> list[ListedVersion]:
        """Every group/version with an APIService: those with a backend (not of our own group)
        to be described by it, the Local ones of group/versions still served here; and a
        group/version served here without an APIService yet ranks as its Local APIService will
        (``priorities``)."""
        routes = self.aggregator.routes()
        entries: dict[tuple[str, str], ListedVersion] = {}
        for api_service in self.aggregator.all_api_services():
            gv = group_version(api_service)
            remote = _Remote(self, api_service) if gv in routes else None
            if remote is not None or gv[1] in served.get(gv[0], ()):
                entries[gv] = _listed(gv, *priorities_of(api_service), api_service["metadata"]["name"], remote)
        for group, versions in served.items():
            for version, (group_priority, version_priority) in priorities(group, list(versions)).items():
                entries.setdefault((group, version), _listed((group, version), group_priority, version_priority,
                                                             f"{version}.{group}", None))
        return list(entries.values())

    async def _cached(self, key: Any, fetch: Callable[[], Awaitable[Any]]) -> Any:
        """``fetch()``'s value (or UnreachableError), kept for the discovery TTL; concurrent askers
        share one fetch."""
        hit = self._cache.get(key)
        if hit is not None and time.monotonic() - hit[0] < self.aggregator.settings.discovery_ttl:
            return hit[1]
        task = self._inflight.get(key)
        if task is None:
            async def run() -> Any:
                try:
                    value = await fetch()
                except UnreachableError as err:
                    value = err
                except Exception as err:  # whatever a backend answers, discovery must go on
                    value = UnreachableError("FailedDiscoveryCheck", describe_error(err))
                self._cache[key] = (time.monotonic(), value)
                return value

            task = self._inflight[key] = asyncio.create_task(run())
            task.add_done_callback(lambda _: self._inflight.pop(key, None))
        return await asyncio.shield(task)

    async def version_discovery(self, api_service: dict[str, Any]) -> dict[str, Any]:
        """The aggregated-discovery entry (``APIVersionDiscovery``) of a proxied group/version, from
        the backend's aggregated ``/apis`` (or its legacy ``APIResourceList``); ``Stale`` with no
        resources when the backend cannot tell."""
        group, version = group_version(api_service)
        available = condition(api_service)
        if available is not None and available.get("status") == "False":
            return {"version": version, "freshness": "Stale", "resources": []}
        try:
            base = self.aggregator.backends.backend(api_service).base
        except UnreachableError:
            return {"version": version, "freshness": "Stale", "resources": []}

        async def aggregated() -> Any:
            status, content_type, body = await self.aggregator.fetch(api_service, "/apis", AGGREGATED_DISCOVERY)
            if status == 200 and "as=APIGroupDiscoveryList" in content_type and isinstance(body, dict):
                return body
            return None

        listing = await self._cached(("apis", base), aggregated)
        if isinstance(listing, dict):
            for item in listing.get("items") or []:
                if (item.get("metadata") or {}).get("name") == group:
                    for entry in item.get("versions") or []:
                        if entry.get("version") == version:
                            return {**entry, "freshness": entry.get("freshness") or "Current"}
            return {"version": version, "freshness": "Stale", "resources": []}

        async def legacy() -> Any:
            status, _, body = await self.aggregator.fetch(api_service, f"/apis/{group}/{version}", "application/json")
            if status != 200 or not isinstance(body, dict):
                raise UnreachableError("FailedDiscoveryCheck", f"bad status from the backend: {status}")
            return body

        resource_list = await self._cached(("legacy", base, group, version), legacy)
        if not isinstance(resource_list, dict):
            return {"version": version, "freshness": "Stale", "resources": []}
        return {"version": version, "freshness": "Current", "resources": _from_legacy(group, version, resource_list)}

    async def openapi_entry(self, api_service: dict[str, Any]) -> dict[str, Any] | None:
        """The backend's ``/openapi/v3`` index entry for the APIService's group/version."""
        group, version = group_version(api_service)
        try:
            base = self.aggregator.backends.backend(api_service).base
        except UnreachableError:
            return None

        async def index() -> Any:
            status, _, body = await self.aggregator.fetch(api_service, "/openapi/v3", "application/json")
            if status != 200 or not isinstance(body, dict):
                raise UnreachableError("FailedDiscoveryCheck", f"bad status from the backend: {status}")
            return body

        found = await self._cached(("openapi", base), index)
        if not isinstance(found, dict):
            return None
        entry = (found.get("paths") or {}).get(f"apis/{group}/{version}")
        return entry if isinstance(entry, dict) else None


class _Remote:
    """One proxied group/version, as discovery and the OpenAPI index describe it."""

    def __init__(self, merge: DiscoveryMerge, api_service: dict[str, Any]) -> None:
        self.merge = merge
        self.api_service = api_service

    async def discovery(self) -> dict[str, Any]:
        return await self.merge.version_discovery(self.api_service)

    async def openapi_entry(self) -> dict[str, Any] | None:
        return await self.merge.openapi_entry(self.api_service)


def _listed(gv: tuple[str, str], group_priority: int, version_priority: int, name: str,
            remote: _Remote | None) -> ListedVersion:
    return ListedVersion(gv[0], gv[1], OWN_GROUP_FIRST if gv[0] == GROUP else group_priority, version_priority,
                         name, remote)


def _from_legacy(group: str, version: str, resource_list: dict[str, Any]) -> list[dict[str, Any]]:
    """Aggregated-discovery resources from a legacy ``APIResourceList``
    (``endpoints.ConvertGroupVersionIntoToDiscovery``)."""
    resources: dict[str, dict[str, Any]] = {}
    for entry in resource_list.get("resources") or []:
        name = entry.get("name", "")
        kind = {"group": entry.get("group", group), "version": entry.get("version", version), "kind": entry.get("kind", "")}
        if "/" in name:
            parent, sub = name.split("/", 1)
            resources.setdefault(parent, {"resource": parent, "verbs": []}).setdefault("subresources", []).append(
                {"subresource": sub, "responseKind": kind, "verbs": entry.get("verbs") or []})
            continue
        found = resources.setdefault(name, {"resource": name})
        found.update({
            "responseKind": kind,
            "scope": "Namespaced" if entry.get("namespaced") else "Cluster",
            "singularResource": entry.get("singularName") or "",
            "verbs": entry.get("verbs") or [],
        })
        for key in ("shortNames", "categories"):
            if entry.get(key):
                found[key] = entry[key]
    return list(resources.values())
