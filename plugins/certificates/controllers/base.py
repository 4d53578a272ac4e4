"""What the certificate controllers share: one informer of CertificateSigningRequests, a queue of
their names and one worker, each request handled on its own (``certificates.CertificateController``)."""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from typing import Any

from kplane.api import Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, get_condition, wait_synced
from kplane.plugins.certificates.types import APPROVED, DENIED, FAILED, GROUP

Obj = dict[str, Any]
RESOURCE = "certificatesigningrequests"


def has_true(csr: Obj, type_: str) -> bool:
    condition = get_condition(csr.get("status") or {}, type_)
    return condition is not None and condition.get("status") == "True"


def approved(csr: Obj) -> bool:
    """``IsCertificateRequestApproved``: Approved and not Denied."""
    return has_true(csr, APPROVED) and not has_true(csr, DENIED)


def failed(csr: Obj) -> bool:
    return has_true(csr, FAILED)


Handle = Callable[[Obj], Awaitable[None]]


class CertificateController:
    """Calls ``handle`` for each request added or changed (and again, backing off, after an error)."""

    def __init__(self, name: str, informers: SharedInformerFactory, handle: Handle) -> None:
        self.name = name
        self.handle = handle
        self.requests = informers.informer(GROUP, "v1", RESOURCE)
        self.informers = informers
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        self.requests.add_handlers(Handlers(on_add=self.enqueue, on_update=lambda _, csr: self.enqueue(csr)))
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.requests)
            workers.start(1, self.sync, name=self.name)
            await workers.wait()

    def enqueue(self, csr: Obj) -> None:
        self.queue.add(csr["metadata"]["name"])

    async def sync(self, name: str) -> None:
        csr = self.requests.indexer.get(name)
        if csr is not None:
            await self.handle(csr)


def requests_of(client: RESTClient) -> Any:
    """The client of CertificateSigningRequests."""
    return client.resource(GROUP, "v1", RESOURCE)
