"""``status.acceptedNames`` and the ``NamesAccepted`` condition (apiextensions-apiserver's
``NamingConditionController``).

Within one group, no two CRDs may serve the same resource name (plural, singular and short
names share one space) nor the same kind (kinds and list kinds share another). A requested
name is accepted when it is the one accepted already or nobody in the group has it; a
conflicting one keeps the value accepted before (if any) and ``NamesAccepted`` is ``False``,
its reason naming which (``PluralConflict``: ``"widgets" is already in use``; the last conflict
found wins, as in Kubernetes). ``Established`` says ``Installing`` once the names are accepted
and ``NotAccepted`` until then; once ``True`` it stays (the accepted names stay served).

The names served by kinds that are not CRDs (a plugin's kinds in the same group) are taken too,
so such a CRD is never served and its conditions say which name is in use. When a CRD changes or
goes, the others of its group are looked at again: a conflict may just have gone.

One worker decides names one CRD at a time; what it wrote is read back from its own
:class:`MutationCache` until the informer has caught up, so two CRDs created together cannot both
take a name.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kplane.api import ApiError, Handlers, Informer, RESTClient, WorkQueue, Workers
from kplane.plugins.apiextensions.controllers.conditions import condition, with_condition
from kplane.plugins.apiextensions.types import ESTABLISHED, GROUP, NAMES_ACCEPTED

log = logging.getLogger(__name__)

RESOURCE = "customresourcedefinitions"

#: The resource names and kinds of ``group`` served by something else than CRDs.
Reserved = Callable[[str], tuple[set[str], set[str]]]


class MutationCache:
    """The CRDs this controller wrote, kept until the informer delivers them or something newer
    (client-go's integer-resourceVersion ``MutationCache``)."""

    def __init__(self, informer: Informer) -> None:
        self.informer = informer
        self._written: dict[str, dict[str, Any]] = {}

    def mutated(self, crd: dict[str, Any]) -> None:
        self._written[crd["metadata"]["name"]] = crd

    def get(self, name: str) -> dict[str, Any] | None:
        cached = self.informer.indexer.get(name)
        written = self._written.get(name)
        if written is None:
            return cached
        if cached is None or _rv(cached) >= _rv(written):
            del self._written[name]
            return cached
        return written

    def group(self, group: str) -> list[dict[str, Any]]:
        names = [c["metadata"]["name"] for c in self.informer.indexer.list() if c["spec"].get("group") == group]
        return [crd for crd in map(self.get, names) if crd is not None]


def _rv(crd: dict[str, Any]) -> int:
    try:
        return int(crd["metadata"].get("resourceVersion") or 0)
    except ValueError:
        return 0


def _in_use(requested: str | None, accepted: str | None, used: set[str], reserved: set[str]) -> str | None:
    """``equalToAcceptedOrFresh``: the conflict's message, or None. A name another kind serves
    is in use even when accepted before (that kind came later)."""
    if requested in reserved or (requested != accepted and requested in used):
        return f'"{requested}" is already in use'
    return None


def _aggregate(messages: list[str]) -> str:
    """utilerrors' Aggregate: one message as it is, several in brackets, duplicates once."""
    unique = list(dict.fromkeys(messages))
    return unique[0] if len(unique) == 1 else f"[{', '.join(unique)}]"


def names_and_conditions(crd: dict[str, Any], group_crds: list[dict[str, Any]],
                         reserved: tuple[set[str], set[str]] = (set(), set())) -> tuple[dict[str, Any], dict[str, str], dict[str, str]]:
    """The names to accept for ``crd`` given the CRDs of its group (itself included, as read
    back) and the names ``reserved`` by other kinds: (acceptedNames, NamesAccepted, Established),
    the conditions as type/status/reason/message (``calculateNamesAndConditions``)."""
    resources: set[str] = set()
    kinds: set[str] = set()
    for other in group_crds:
        names = (other.get("status") or {}).get("acceptedNames") or {}
        resources.update(n for n in (names.get("plural"), names.get("singular"), *(names.get("shortNames") or ())) if n)
        kinds.update(n for n in (names.get("kind"), names.get("listKind")) if n)
    requested = crd["spec"].get("names") or {}
    accepted = (crd.get("status") or {}).get("acceptedNames") or {}
    names = dict(accepted)
    conflict: tuple[str, str] | None = None

    def check(key: str, used: set[str], taken: set[str], reason: str) -> None:
        nonlocal conflict
        problem = _in_use(requested.get(key), accepted.get(key), used, taken)
        if problem is None:
            names[key] = requested.get(key)
        else:
            conflict = (reason, problem)

    check("plural", resources, reserved[0], "PluralConflict")
    check("singular", resources, reserved[0], "SingularConflict")
    wanted_short, accepted_short = requested.get("shortNames") or [], accepted.get("shortNames") or []
    if wanted_short != accepted_short:
        problems = [p for short in wanted_short
                    if short not in accepted_short and short not in (accepted.get("plural"), accepted.get("singular"))
                    and (p := _in_use(short, "", resources, reserved[0])) is not None]
        if problems:
            conflict = ("ShortNamesConflict", _aggregate(problems))
        else:
            names["shortNames"] = wanted_short
    check("kind", kinds, reserved[1], "KindConflict")
    check("listKind", kinds, reserved[1], "ListKindConflict")
    names["categories"] = requested.get("categories")
    names = {k: v for k, v in names.items() if v not in (None, "", [])}

    if conflict is None:
        names_accepted = {"type": NAMES_ACCEPTED, "status": "True", "reason": "NoConflicts", "message": "no conflicts found"}
    else:
        names_accepted = {"type": NAMES_ACCEPTED, "status": "False", "reason": conflict[0], "message": conflict[1]}
    established = {"type": ESTABLISHED, "status": "False", "reason": "NotAccepted", "message": "not all names are accepted"}
    old = condition(crd, ESTABLISHED)
    if old is not None:
        established = {k: old.get(k) or "" for k in ("type", "status", "reason", "message")}
    if established["status"] != "True" and names_accepted["status"] == "True":
        established = {"type": ESTABLISHED, "status": "False", "reason": "Installing",
                       "message": "the initial names have been accepted"}
    return names, names_accepted, established


def _same(old: dict[str, Any] | None, new: dict[str, str]) -> bool:
    """``IsCRDConditionEquivalent``: the same but for the transition time."""
    return old is not None and all((old.get(k) or "") == new[k] for k in ("type", "status", "reason", "message"))


class NamingController:
    def __init__(self, crds: Informer, client: RESTClient, reserved: Reserved) -> None:
        self.crds = crds
        self.client = client
        self.reserved = reserved
        self.cache = MutationCache(crds)
        self.queue: WorkQueue[str] = WorkQueue()
        crds.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new),
                                   on_delete=self._deleted))

    def _enqueue(self, crd: dict[str, Any]) -> None:
        self.queue.add(crd["metadata"]["name"])

    def _deleted(self, crd: dict[str, Any]) -> None:
        """A deleted CRD freed its names: every other CRD of its group may take them now."""
        self._requeue_group((crd.get("spec") or {}).get("group"), crd["metadata"]["name"])

    def _requeue_group(self, group: str | None, name: str) -> None:
        for other in self.crds.indexer.list():
            if other["spec"].get("group") == group and other["metadata"]["name"] != name:
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
        accepted = (crd.get("status") or {}).get("acceptedNames") or {}
        requested = crd["spec"].get("names") or {}
        group = crd["spec"].get("group") or ""
        reserved = self.reserved(group)
        clash = reserved[0] & {requested.get("plural"), requested.get("singular"), *(requested.get("shortNames") or ())} \
            or reserved[1] & {requested.get("kind"), requested.get("listKind")}
        if _normalized(requested) == _normalized(accepted) and not clash:
            return
        names, names_accepted, established = names_and_conditions(crd, self.cache.group(group), reserved)
        if names == accepted and _same(condition(crd, NAMES_ACCEPTED), names_accepted):
            return
        updated = with_condition(crd, **_args(names_accepted))
        updated = with_condition(updated, **_args(established))
        updated["status"]["acceptedNames"] = names
        try:
            written = await self.client.resource(GROUP, "v1", RESOURCE).update_status(updated)
        except ApiError as err:
            if err.code in (404, 409):
                return  # deleted or changed meanwhile: it comes again
            raise
        self.cache.mutated(written)
        self._requeue_group(group, name)  # names may have been released


def _normalized(names: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in names.items() if v not in (None, "", [])}


def _args(cond: dict[str, str]) -> dict[str, str]:
    return {"kind": cond["type"], "status": cond["status"], "reason": cond["reason"], "message": cond["message"]}
