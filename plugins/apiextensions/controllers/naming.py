"""``status.acceptedNames`` and the ``NamesAccepted`` condition (apiextensions-apiserver's
``NamingConditionController``).

Within one group, no two CRDs may serve the same plural, singular, short name, kind or list kind.
A CRD's requested names are accepted one by one where no other CRD of the group has them accepted;
a conflicting name keeps the value accepted before (if any), and ``NamesAccepted`` is ``False``
with a reason naming which (``PluralConflict``: ``"widgets" is already in use``). A CRD whose
names are all accepted is ``True``, ``NoConflicts``. Whenever a CRD changes, the others of its
group are looked at again: a conflict may just have gone.
"""

from __future__ import annotations

import logging
from typing import Any

from kplane.api import ApiError, Handlers, Informer, RESTClient, WorkQueue, Workers
from kplane.plugins.apiextensions.controllers.conditions import condition, is_true, with_condition
from kplane.plugins.apiextensions.types import ESTABLISHED, GROUP, NAMES_ACCEPTED

log = logging.getLogger(__name__)

RESOURCE = "customresourcedefinitions"


def _taken(others: list[dict[str, Any]]) -> dict[str, set[str]]:
    taken: dict[str, set[str]] = {"plural": set(), "singular": set(), "kind": set(), "listKind": set()}
    for other in others:
        accepted = (other.get("status") or {}).get("acceptedNames") or {}
        for key in ("plural", "singular"):
            if accepted.get(key):
                taken["plural"].add(accepted[key])  # resource names: plural, singular and short names share one space
        taken["plural"].update(accepted.get("shortNames") or [])
        if accepted.get("kind"):
            taken["kind"].add(accepted["kind"])
        if accepted.get("listKind"):
            taken["listKind"].add(accepted["listKind"])
    return taken


def accepted_names(crd: dict[str, Any], others: list[dict[str, Any]]) -> tuple[dict[str, Any], str, str, str]:
    """The names to accept for ``crd`` given the other CRDs of its group, with the
    ``NamesAccepted`` condition's status, reason and message (``calculateNamesAndConditions``)."""
    requested = crd["spec"].get("names") or {}
    accepted = dict((crd.get("status") or {}).get("acceptedNames") or {})
    taken = _taken(others)
    problems: list[tuple[str, str]] = []

    plural = requested.get("plural")
    if plural in taken["plural"]:
        problems.append(("PluralConflict", f'"{plural}" is already in use'))
    else:
        accepted["plural"] = plural
    singular = requested.get("singular")
    if singular in taken["plural"]:
        problems.append(("SingularConflict", f'"{singular}" is already in use'))
    else:
        accepted["singular"] = singular
    short_names = requested.get("shortNames") or []
    clashing = [name for name in short_names if name in taken["plural"]]
    if clashing:
        problems.append(("ShortNamesConflict", f'"{clashing[0]}" is already in use'))
    else:
        accepted["shortNames"] = short_names
    kind = requested.get("kind")
    if kind in taken["kind"]:
        problems.append(("KindConflict", f'"{kind}" is already in use'))
    else:
        accepted["kind"] = kind
    list_kind = requested.get("listKind")
    if list_kind in taken["listKind"]:
        problems.append(("ListKindConflict", f'"{list_kind}" is already in use'))
    else:
        accepted["listKind"] = list_kind
    accepted["categories"] = requested.get("categories") or []  # categories may be shared
    accepted = {k: v for k, v in accepted.items() if v not in (None, [])}
    if problems:
        reason, message = problems[0]
        return accepted, "False", reason, message
    return accepted, "True", "NoConflicts", "no conflicts found"


class NamingController:
    def __init__(self, crds: Informer, client: RESTClient) -> None:
        self.crds = crds
        self.client = client
        self.queue: WorkQueue[str] = WorkQueue()
        crds.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new),
                                   on_delete=self._requeue_group))

    def _enqueue(self, crd: dict[str, Any]) -> None:
        self.queue.add(crd["metadata"]["name"])
        self._requeue_group(crd)

    def _requeue_group(self, crd: dict[str, Any]) -> None:
        """Another CRD of the group may have been waiting for a name this one held."""
        group = (crd.get("spec") or {}).get("group")
        for other in self.crds.indexer.list():
            if other["spec"].get("group") == group and other["metadata"]["name"] != crd["metadata"]["name"]:
                self.queue.add(other["metadata"]["name"])

    async def run(self) -> None:
        async with Workers(self.queue) as workers:
            await self.crds.synced.wait()
            workers.start(1, self.sync, name="crd naming")  # one worker: names are decided one CRD at a time
            await workers.wait()

    async def sync(self, name: str) -> None:
        crd = self.crds.indexer.get(name)
        if crd is None:
            return
        group = crd["spec"].get("group")
        others = [o for o in self.crds.indexer.list() if o["spec"].get("group") == group and o["metadata"]["name"] != name]
        accepted, status, reason, message = accepted_names(crd, others)
        updated = with_condition(crd, NAMES_ACCEPTED, status, reason, message)
        updated["status"]["acceptedNames"] = accepted
        if not is_true(crd, ESTABLISHED):  # the Established condition says why it is not yet
            if status == "True":
                updated = with_condition(updated, ESTABLISHED, "False", "Installing", "the initial names have been accepted")
            else:
                updated = with_condition(updated, ESTABLISHED, "False", "NotAccepted", "not all names are accepted")
        if _same_status(crd, updated):
            return
        try:
            await self.client.resource(GROUP, "v1", RESOURCE).update_status(updated)
        except ApiError as err:
            if err.code == 404:
                return
            raise  # a conflict: retried with the newer object


def _same_status(crd: dict[str, Any], updated: dict[str, Any]) -> bool:
    before, after = crd.get("status") or {}, updated["status"]
    if before.get("acceptedNames") != after.get("acceptedNames"):
        return False
    for kind in (NAMES_ACCEPTED, ESTABLISHED):
        old, new = condition(crd, kind), condition(updated, kind)
        if (old or {}).get("status") != (new or {}).get("status") or (old or {}).get("reason") != (new or {}).get("reason"):
            return False
    return True
