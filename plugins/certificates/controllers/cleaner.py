"""csrcleaner (``pkg/controller/certificates/cleaner``): requests do not stay forever.

Deleted: one issued and approved over an hour ago, denied or failed over an hour ago, pending
(no condition, no certificate) for a day, or whose certificate has expired. kube looks every
hour; this cleaner computes when each request becomes due and looks then, so none stays
longer than its deadline and none is looked at in between."""

from __future__ import annotations

import base64
import datetime
from typing import Any

from cryptography import x509

from kplane.api import ApiError, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, wait_synced
from kplane.plugins.certificates import validation
from kplane.plugins.certificates.controllers.base import Obj, has_true, requests_of
from kplane.plugins.certificates.types import APPROVED, DENIED, FAILED, GROUP

APPROVED_EXPIRATION = DENIED_EXPIRATION = 3600.0
PENDING_EXPIRATION = 24 * 3600.0


def _parse(timestamp: str | None) -> datetime.datetime | None:
    if not timestamp:
        return None
    try:
        return datetime.datetime.fromisoformat(timestamp.replace("Z", "+00:00"))
    except ValueError:
        return None


def _updated(csr: Obj, type_: str) -> datetime.datetime | None:
    for c in (csr.get("status") or {}).get("conditions") or []:
        if c.get("type") == type_:
            return _parse(c.get("lastUpdateTime"))
    return None


def certificate_end(pem: bytes) -> datetime.datetime | None:
    """The earliest end of the certificates in ``pem`` (None: none that parses)."""
    if validation.certificate_problem(pem) is not None:
        return None
    try:
        return min(c.not_valid_after_utc for c in x509.load_pem_x509_certificates(pem))
    except ValueError:
        return None


def deadline(csr: Obj) -> datetime.datetime | None:
    """When ``csr`` is to be deleted (``isIssuedPastDeadline``, ``isDeniedPastDeadline``,
    ``isFailedPastDeadline``, ``isPendingPastDeadline``, ``isIssuedExpired``); None: never."""
    hour = datetime.timedelta(seconds=APPROVED_EXPIRATION)
    status = csr.get("status") or {}
    issued = base64.b64decode(status.get("certificate") or "")
    due: list[datetime.datetime] = []
    if issued and has_true(csr, APPROVED) and (at := _updated(csr, APPROVED)) is not None:
        due.append(at + hour)
    for type_ in (DENIED, FAILED):
        if (at := _updated(csr, type_)) is not None:
            due.append(at + datetime.timedelta(seconds=DENIED_EXPIRATION))
    if not status.get("conditions") and not issued and (created := _parse(csr["metadata"].get("creationTimestamp"))):
        due.append(created + datetime.timedelta(seconds=PENDING_EXPIRATION))
    if issued and (end := certificate_end(issued)) is not None:
        due.append(end)
    return min(due) if due else None


class CSRCleaner:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory) -> None:
        self.client = client
        self.informers = informers
        self.requests = informers.informer(GROUP, "v1", "certificatesigningrequests")
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        self.requests.add_handlers(Handlers(on_add=self._schedule, on_update=lambda _, csr: self._schedule(csr)))
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.requests)
            workers.start(1, self.sync, name="csrcleaner")
            await workers.wait()

    def _schedule(self, csr: Obj) -> None:
        due = deadline(csr)
        if due is not None:
            wait = (due - datetime.datetime.now(datetime.timezone.utc)).total_seconds()
            self.queue.add_after(csr["metadata"]["name"], max(wait, 0.0))

    async def sync(self, name: str) -> None:
        csr: Any = self.requests.indexer.get(name)
        if csr is None:
            return
        due = deadline(csr)
        if due is None:
            return
        if due > datetime.datetime.now(datetime.timezone.utc):
            self._schedule(csr)  # changed since it was scheduled
            return
        try:
            await requests_of(self.client).delete(name)
        except ApiError as err:
            if err.code != 404:
                raise
