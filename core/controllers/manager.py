"""The controller-manager: runs controllers as tasks and stops them together.

A controller is any object with ``async def run(self) -> None`` that works until cancelled.
Plugins add theirs through the ``kplane_register_controllers`` hook. Which ones run is chosen
the way kube-controller-manager's ``--controllers`` chooses, by a :class:`ControllerSelection`.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from kplane.core.client.informer import SharedInformerFactory, strip_managed_fields
from kplane.core.client.rest import RESTClient
from kplane.core.client.workqueue import WorkQueue
from kplane.core.controllers.clients import ClientBuilder, SharedClient
from kplane.core.metrics.workqueue import WorkqueueMetrics

log = logging.getLogger(__name__)


class Controller(Protocol):
    async def run(self) -> None: ...


@dataclass(frozen=True, slots=True)
class ControllerSelection:
    """kube-controller-manager's ``--controllers``: ``*`` enables all, ``name`` enables one,
    ``-name`` disables one; the first entry naming a controller decides, as in Kubernetes."""

    items: tuple[str, ...] = ("*",)

    @classmethod
    def parse(cls, text: str) -> ControllerSelection:
        items = tuple(item.strip() for item in text.split(","))
        if not all(item.lstrip("-") for item in items):
            raise ValueError(f"empty controller name in {text!r}")
        return cls(items)

    def enabled(self, name: str) -> bool:
        for item in self.items:
            if item == name:
                return True
            if item == f"-{name}":
                return False
        return "*" in self.items

    def unknown(self, known: set[str]) -> list[str]:
        """Names the selection mentions that no controller has: a typo must not pass silently."""
        return [item for item in self.items if item != "*" and item.lstrip("-") not in known]


ALL = ControllerSelection()

#: The longest validity a signed certificate gets (kube-controller-manager's default: a year).
SIGNING_DURATION = 365 * 24 * 3600.0


@dataclass(frozen=True, slots=True)
class ClusterSigning:
    """The CA the certificate signers sign with and the longest validity they give, as
    kube-controller-manager's ``--cluster-signing-cert-file``, ``--cluster-signing-key-file`` and
    ``--cluster-signing-duration``; without the files, no request is signed."""

    cert_file: Path | None = None
    key_file: Path | None = None
    duration: float = SIGNING_DURATION


class ControllerManager:
    """Controllers share one informer per resource (``manager.informers``, on the manager's own
    ``client``) and act each through its own client (``client_for``), as kube-controller-manager.

    Every name added is known (``known``), but only those the selection enables are kept.
    ``clients`` decides who a controller's client is (by default the manager's own client).
    With ``metrics``, the work queues of the controllers kept are counted under the controller's
    name (``name_attribute`` for a controller holding several), as kube-controller-manager's
    ``workqueue_*`` series."""

    def __init__(self, client: RESTClient, selection: ControllerSelection = ALL, *,
                 clients: ClientBuilder | None = None, root_ca: bytes | None = None,
                 signing: ClusterSigning = ClusterSigning(), metrics: WorkqueueMetrics | None = None) -> None:
        self.client = client
        self.metrics = metrics
        #: The CA certificate signers sign with (:class:`ClusterSigning`).
        self.signing = signing
        #: The CA bundle that verifies the API server, which pods get as ``kube-root-ca.crt``
        #: (kube-controller-manager's ``--root-ca-file``); None when nobody knows it.
        self.root_ca = root_ca
        self.selection = selection
        self.clients = clients if clients is not None else SharedClient(client)
        self.informers = SharedInformerFactory(client, transform=strip_managed_fields)  # as kube-controller-manager's
        #: The ServiceAccount names controllers asked for, and the client each got.
        self.accounts: dict[str, RESTClient] = {}
        self.known: set[str] = set()
        self.controllers: dict[str, Controller] = {}
        self._tasks: list[asyncio.Task[None]] = []

    def client_for(self, account: str) -> RESTClient:
        """The client of a controller acting as ServiceAccount ``kube-system/<account>`` (kube's
        ``ClientBuilder.ClientOrDie``), authorized by what is granted to that account (the
        bootstrap role ``system:controller:<account>`` for kplane's own controllers)."""
        client = self.accounts.get(account)
        if client is None:
            client = self.accounts[account] = self.clients.client_for(account)
        return client

    def add(self, name: str, controller: Controller) -> None:
        if name in self.known:
            raise ValueError(f"controller {name!r} is already registered")
        self.known.add(name)
        if self.selection.enabled(name):
            self.controllers[name] = controller
            if self.metrics is not None:
                self._instrument(name, controller)

    def _instrument(self, name: str, controller: Controller) -> None:
        queues = [(attribute, value) for attribute, value in getattr(controller, "__dict__", {}).items()
                  if isinstance(value, WorkQueue)]
        assert self.metrics is not None
        for attribute, queue in queues:
            queue.instrument(self.metrics.for_queue(name if len(queues) == 1 else f"{name}_{attribute}", queue.__len__))

    def start(self) -> None:
        for name, controller in self.controllers.items():
            task = asyncio.create_task(controller.run(), name=f"controller:{name}")
            task.add_done_callback(_report_crash)
            self._tasks.append(task)

    async def stop(self, timeout: float = 5.0) -> None:
        """Cancel every controller and wait for them, at most ``timeout`` seconds: a controller
        slow to wind down (an event recorder flushing, say) must not hold up a shutdown or the
        hand-over of the Lease; it is named in the log instead."""
        for task in self._tasks:
            task.cancel()
        if self._tasks:
            _, pending = await asyncio.wait(self._tasks, timeout=timeout)
            if pending:
                log.warning("controllers still stopping after %.3gs: %s", timeout,
                            ", ".join(sorted(task.get_name() for task in pending)))
        self._tasks.clear()
        await self.informers.stop()


def _report_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("%s stopped with an error", task.get_name(), exc_info=task.exception())
