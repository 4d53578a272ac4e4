"""The ``Established`` condition (apiextensions-apiserver's ``EstablishingController``): once a
CRD's names are accepted it is ``True``, ``InitialNamesAccepted``, and the server serves the
resource from then on, even should a later name change conflict (the accepted names stay)."""

from __future__ import annotations

from typing import Any

from kplane.api import ApiError, Handlers, Informer, RESTClient, WorkQueue, Workers
from kplane.plugins.apiextensions.controllers.conditions import is_true, with_condition
from kplane.plugins.apiextensions.types import ESTABLISHED, GROUP, NAMES_ACCEPTED

RESOURCE = "customresourcedefinitions"


class EstablishingController:
    def __init__(self, crds: Informer, client: RESTClient) -> None:
        self.crds = crds
        self.client = client
        self.queue: WorkQueue[str] = WorkQueue()
        crds.add_handlers(Handlers.for_any(self._enqueue))

    def _enqueue(self, crd: dict[str, Any]) -> None:
        if is_true(crd, NAMES_ACCEPTED) and not is_true(crd, ESTABLISHED):
            self.queue.add(crd["metadata"]["name"])

    async def run(self) -> None:
        async with Workers(self.queue) as workers:
            await self.crds.synced.wait()
            workers.start(1, self.sync, name="crd establishing")
            await workers.wait()

    async def sync(self, name: str) -> None:
        crd = self.crds.indexer.get(name)
        if crd is None or not is_true(crd, NAMES_ACCEPTED) or is_true(crd, ESTABLISHED):
            return
        updated = with_condition(crd, ESTABLISHED, "True", "InitialNamesAccepted", "the initial names have been accepted")
        try:
            await self.client.resource(GROUP, "v1", RESOURCE).update_status(updated)
        except ApiError as err:
            if err.code != 404:
                raise
