"""Claiming dependents: which objects a controller owns (client-go's ``ControllerRefManager``).

A controller (a ReplicaSet over its pods, a Deployment over its ReplicaSets) owns what carries
its controller ownerReference. On each sync it claims the candidates it listed: it adopts the
orphans its selector matches, releases those it controls that no longer match, and leaves
alone what another controller controls.

Adoption and release write the dependent's whole ``ownerReferences`` by a merge patch that
carries the resourceVersion the controller read: a dependent that changed meanwhile (relabelled,
adopted by another) answers 409, and the sync runs again on the informer's newer copy. A merge
patch serves every kind, built-in or a plugin's.
"""

from __future__ import annotations

from collections.abc import Iterable

from kplane.core.client.rest import ApiError, ResourceClient
from kplane.core.controllers.ownership import Obj, controller_ref, controller_reference, owner_refs, uid
from kplane.core.meta.selectors import LabelSelectorExpr


class ControllerRefManager:
    """Claims dependents for one controller object, as read from the informer cache.

    ``controllers`` serves the controller's own resource (for the fresh read before the first
    adoption), ``dependents`` the dependents' resource in the controller's namespace.
    """

    def __init__(self, controller: Obj, selector: LabelSelectorExpr, *, api_version: str, kind: str,
                 controllers: ResourceClient, dependents: ResourceClient) -> None:
        self.controller = controller
        self.selector = selector
        self.api_version = api_version
        self.kind = kind
        self.controllers = controllers
        self.dependents = dependents
        self._may_adopt: bool | None = None  # checked against the server at the first adoption

    async def claim(self, candidates: Iterable[Obj]) -> list[Obj]:
        """The candidates this controller controls once orphans are adopted and strays released
        (``ClaimObject`` over each); an adopted one is the server's reply to the adoption."""
        claimed: list[Obj] = []
        deleting = bool(self.controller["metadata"].get("deletionTimestamp"))
        for obj in candidates:
            ref, matches = controller_ref(obj), self.selector.matches(obj["metadata"].get("labels"))
            if ref is not None:
                if ref.get("uid") != uid(self.controller):
                    continue  # another controller's
                if matches:
                    claimed.append(obj)
                elif not deleting:
                    await self.release(obj)
                continue
            if deleting or not matches or obj["metadata"].get("deletionTimestamp"):
                continue
            if await self._can_adopt():
                adopted = await self.adopt(obj)
                if adopted is not None:
                    claimed.append(adopted)
        return claimed

    async def adopt(self, obj: Obj) -> Obj | None:
        """Make this controller ``obj``'s controller; None when ``obj`` is gone."""
        reference = controller_reference(self.controller, self.api_version, self.kind)
        return await self._patch_owner_refs(obj, [*owner_refs(obj), reference])

    async def release(self, obj: Obj) -> None:
        """Drop this controller's ownerReference from ``obj`` (the garbage collector then leaves it)."""
        await self._patch_owner_refs(obj, [ref for ref in owner_refs(obj) if ref.get("uid") != uid(self.controller)])

    async def _can_adopt(self) -> bool:
        """A quorum read, once per manager (one sync): the cache may not show yet that the controller is being
        deleted (``RecheckDeletionTimestamp``), and a deleted controller must adopt nothing."""
        if self._may_adopt is None:
            try:
                fresh = await self.controllers.get(self.controller["metadata"]["name"])
            except ApiError as err:
                if err.code != 404:
                    raise
                self._may_adopt = False
            else:
                self._may_adopt = uid(fresh) == uid(self.controller) and not fresh["metadata"].get("deletionTimestamp")
        return self._may_adopt

    async def _patch_owner_refs(self, obj: Obj, refs: list[Obj]) -> Obj | None:
        """Set ``obj``'s ownerReferences if it is still the version we saw; None when it is gone."""
        meta = obj["metadata"]
        patch = {"metadata": {"resourceVersion": meta["resourceVersion"], "ownerReferences": refs or None}}
        try:
            return await self.dependents.patch(meta["name"], patch)
        except ApiError as err:
            if err.code == 404:
                return None
            raise  # changed meanwhile (409): the sync is retried on the informer's newer copy
