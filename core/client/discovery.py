"""Which resources a server serves, from its legacy discovery documents."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from kplane.core.client.rest import ApiError, RESTClient

log = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class APIResource:
    group: str
    version: str
    plural: str
    kind: str
    namespaced: bool
    verbs: frozenset[str]


async def server_resources(client: RESTClient, *, skip_failed: bool = False) -> list[APIResource]:
    """Every top-level resource in each group's preferred version (subresources left out).

    With ``skip_failed``, a group-version whose document cannot be read (an aggregated API server
    that is down answers 503) is left out, as client-go's discovery gives a partial result, so the
    rest is still found; otherwise its error is raised."""
    found: list[APIResource] = []
    core = await client.request("GET", "/api")
    group_versions = [("", v) for v in core.get("versions", [])[:1]]
    groups = await client.request("GET", "/apis")
    group_versions += [(g["name"], g["preferredVersion"]["version"]) for g in groups.get("groups", [])]
    for group, version in group_versions:
        path = f"/apis/{group}/{version}" if group else f"/api/{version}"
        try:
            listing = await client.request("GET", path)
        except ApiError as err:
            if not skip_failed:
                raise
            log.warning("discovery of %s left out: %s", path, err)
            continue
        for r in listing.get("resources", []):
            if "/" not in r["name"]:
                found.append(APIResource(group, version, r["name"], r["kind"], r["namespaced"], frozenset(r.get("verbs", ()))))
    return found
