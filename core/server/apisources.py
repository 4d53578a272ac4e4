"""Group/versions a plugin lists in discovery and OpenAPI besides the scheme's
(``kplane_register_api_sources``): those another server serves behind a proxy filter, and the
rank of every group, as kube-aggregator lists APIServices.

A source's :meth:`APISource.listed` names group/versions with their priorities. Discovery
(``/apis`` in both forms, ``/apis/<group>``) then lists the groups by their highest
``group_priority`` (ties by ``name``), each group's versions by ``version_priority`` (ties GA >
beta > alpha), and the group/versions served here that no source names after them. A version
with a :class:`RemoteVersion` is described by it (its resources in the aggregated form, its
OpenAPI index entry, which replaces the document served here); one without is a version served
here, listed only while the scheme serves it. Of two sources naming one group/version, the first
added wins. Without sources discovery lists the scheme's groups in their registration order.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from kplane.core.runtime.gvk import version_priority_key


class RemoteVersion(Protocol):
    """A group/version served by another server, described by what that server says."""

    async def discovery(self) -> dict[str, Any]:
        """Its ``APIVersionDiscovery`` (aggregated discovery), ``freshness: Stale`` when unknown."""
        ...

    async def openapi_entry(self) -> dict[str, Any] | None:
        """Its entry in the ``/openapi/v3`` index (``{"serverRelativeURL": ...}``); None: not listed."""
        ...


@dataclass(frozen=True, slots=True)
class ListedVersion:
    """A group/version a source lists, with its rank; ``remote`` when another server serves it."""

    group: str
    version: str
    group_priority: int  # the group ranks by its versions' highest (kube's groupPriorityMinimum)
    version_priority: int  # within the group, higher first (kube's versionPriority)
    name: str = ""  # breaks ties between groups of one priority (an APIService's name)
    remote: RemoteVersion | None = None  # None: served here


class APISource(Protocol):
    """What ``kplane_register_api_sources`` adds: group/versions to list and rank (the module docstring)."""

    def listed(self, served: Mapping[str, Sequence[str]]) -> list[ListedVersion]:
        """What to list; ``served``: the named groups served here, each with its versions."""
        ...


Ordered = list[tuple[str, list[tuple[str, RemoteVersion | None]]]]


class APISources:
    """The sources plugins added, merged into one order for discovery and the OpenAPI index."""

    def __init__(self) -> None:
        self.sources: list[tuple[str, APISource]] = []  # (name, source) in the order added

    def add(self, name: str, source: APISource) -> None:
        self.sources.append((name, source))

    def _listed(self, served: Mapping[str, Sequence[str]]) -> dict[tuple[str, str], ListedVersion]:
        found: dict[tuple[str, str], ListedVersion] = {}
        for _, source in self.sources:
            for entry in source.listed(served):
                if entry.remote is not None or entry.version in served.get(entry.group, ()):
                    found.setdefault((entry.group, entry.version), entry)
        return found

    def ordered(self, served: Mapping[str, Sequence[str]]) -> Ordered:
        """Every named group to list, in rank order, each version with its RemoteVersion (None:
        served here)."""
        listed = self._listed(served)
        groups: dict[str, list[ListedVersion]] = {}
        for entry in sorted(listed.values(), key=lambda e: (-e.group_priority, e.name)):
            if entry.group:
                groups.setdefault(entry.group, []).append(entry)
        result: Ordered = []
        for group, members in groups.items():
            members.sort(key=lambda e: (-e.version_priority, version_priority_key(e.version)))
            result.append((group, [(e.version, e.remote) for e in members]))
        ranked = dict(result)
        for group, versions in served.items():
            rest = [(v, None) for v in versions if group and (group, v) not in listed]
            if rest and group in ranked:
                ranked[group].extend(rest)
            elif rest:
                result.append((group, rest))
        return result

    def remotes(self, served: Mapping[str, Sequence[str]]) -> list[tuple[str, str, RemoteVersion]]:
        """(group, version, remote) of each group/version served elsewhere."""
        return [(g, v, e.remote) for (g, v), e in self._listed(served).items() if e.remote is not None]
