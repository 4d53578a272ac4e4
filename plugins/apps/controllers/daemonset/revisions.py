"""A DaemonSet's ControllerRevisions (``constructHistory``, ``cleanupHistory`` of update.go): the
revision of the current template (made when missing, renumbered above the others when the
template is one rolled back to), the old ones, and their trimming to ``revisionHistoryLimit``."""

from __future__ import annotations

from typing import Any

from kplane.api import ControllerRefManager, Informer, LabelSelectorExpr, ResourceClient, object_key
from kplane.api import ownership as own
from kplane.plugins.apps.controllers.history import HASH_LABEL, History, new_revision, next_revision, sort_revisions, template_patch

Obj = dict[str, Any]

API_VERSION, KIND = "apps/v1", "DaemonSet"
CONTROLLER_UID_INDEX = own.CONTROLLER_UID_INDEX
DEFAULT_HISTORY_LIMIT = 10


class Revisions:
    """The revisions of one DaemonSet in one sync, read from the informer and written through
    ``client`` (``daemon_sets``: for the check before adopting an orphan)."""

    def __init__(self, client: ResourceClient, daemon_sets: ResourceClient, informer: Informer, ds: Obj,
                 selector: LabelSelectorExpr) -> None:
        self.client = client
        self.daemon_sets = daemon_sets
        self.informer = informer
        self.ds = ds
        self.selector = selector
        self.history = History(client)

    async def construct(self) -> tuple[Obj, list[Obj], int | None]:
        """(the current revision, the old ones, the collision count to record)."""
        ds = self.ds
        collision_count = (ds.get("status") or {}).get("collisionCount")
        revisions = await self._claim()
        data = template_patch(ds)
        current = [r for r in revisions if r.get("data") == data]
        old = [r for r in revisions if r.get("data") != data]
        number = next_revision(old)
        if not current:
            made = new_revision(ds, api_version=API_VERSION, kind=KIND, revision=number, collision_count=collision_count)
            revision, used = await self.history.create(ds, made, collision_count or 0)
            if used != (collision_count or 0):
                collision_count = used
            return revision, old, collision_count
        current = sort_revisions(current)
        for duplicate in current[:-1]:  # the same template twice (a race of two syncs): keep the newest
            await self.history.delete(duplicate)
        newest = current[-1]
        if int(newest.get("revision") or 0) < number:  # a template rolled back to is the newest again
            newest = await self.history.renumber(newest, number)
        return newest, old, collision_count

    async def truncate(self, old: list[Obj], live_hashes: set[str | None]) -> None:
        """``cleanupHistory``: of the old revisions beyond the limit, delete as many as there are
        too many, oldest first, passing over those a live pod still runs."""
        limit = own.spec(self.ds).get("revisionHistoryLimit")
        excess = len(old) - (DEFAULT_HISTORY_LIMIT if limit is None else int(limit))
        doomed = [r for r in sort_revisions(old) if (r["metadata"].get("labels") or {}).get(HASH_LABEL) not in live_hashes]
        for revision in doomed[:max(0, excess)]:
            await self.history.delete(revision)

    async def _claim(self) -> list[Obj]:
        """Revisions it controls, and matching orphans adopted (``controlledHistories``)."""
        owned = self.informer.indexer.by_index(CONTROLLER_UID_INDEX, own.uid(self.ds))
        selected = self.informer.lister().namespaced(self.ds["metadata"]["namespace"]).list(self.selector)
        unique = {object_key(r): r for r in [*owned, *selected]}
        manager = ControllerRefManager(self.ds, self.selector, api_version=API_VERSION, kind=KIND,
                                       controllers=self.daemon_sets, dependents=self.client)
        return await manager.claim(unique.values())
