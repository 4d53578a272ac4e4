"""Subresources served through a strategy of their own (``registry.add_strategy(..., subresource=)``).

Two shapes, chosen by the strategy: :class:`ParentREST` reads and writes the parent object
whole (``status``, ``namespaces/finalize``, as Kubernetes' ``StatusREST``); :class:`PostREST`
takes a POSTed body of a kind of its own and applies it to the parent (``pods/binding``, as
``BindingREST``). Both write through a Store built with the subresource's strategy, so its
hooks (what an update may change) and admission's view (the subresource's name) apply.
"""

from __future__ import annotations

from typing import Any

from kplane.core.registry.rest import Served, UpdateFunc
from kplane.core.registry.store import Store
from kplane.core.registry.stored import StoredObject
from kplane.core.registry.strategy import PostSubresource, RequestContext, Strategy


class ParentREST(Served):
    """get, update and patch of the parent object, through the subresource's Store."""

    def __init__(self, store: Store) -> None:
        self.store = store
        self.verbs, self.kind, self.schema, self.protobuf = store.verbs, store.kind, store.schema, store.protobuf

    async def get(self, ctx: RequestContext, name: str) -> StoredObject:
        return await self.store.get(ctx, name)

    async def update(self, ctx: RequestContext, name: str, updater: UpdateFunc, *,
                     force_allow_create: bool = False) -> tuple[StoredObject, bool]:
        return await self.store.update(ctx, name, updater, force_allow_create=force_allow_create)


class PostREST(Served):
    """create only: the strategy's ``apply_post`` turns the posted body into the parent's next
    state inside the Store's guarded update, so two posters never both win."""

    own_kind = True

    def __init__(self, store: Store) -> None:
        assert isinstance(store.strategy, PostSubresource)
        self.store = store
        self.post = store.strategy
        self.verbs, self.kind, self.schema, self.protobuf = store.verbs, store.kind, store.schema, store.protobuf

    async def create(self, ctx: RequestContext, obj: Any) -> dict[str, Any]:
        async def updater(old: Any) -> Any:
            return self.post.apply_post(ctx, obj, old)

        await self.store.update(ctx, ctx.name, updater)
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def serving(strategy: Strategy) -> type[ParentREST] | type[PostREST]:
    """The class serving a subresource with ``strategy``."""
    return PostREST if isinstance(strategy, PostSubresource) else ParentREST
