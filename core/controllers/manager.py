"""The controller-manager: runs controllers as tasks and stops them together.

A controller is any object with ``async def run(self) -> None`` that works until cancelled.
Plugins add theirs through the ``kplane_register_controllers`` hook.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from typing import Protocol

from core.client.informer import SharedInformerFactory
from core.client.rest import RESTClient

log = logging.getLogger(__name__)


class Controller(Protocol):
    async def run(self) -> None: ...


class ControllerManager:
    """Controllers share one client and one informer per resource (``manager.informers``)."""

    def __init__(self, client: RESTClient) -> None:
        self.client = client
        self.informers = SharedInformerFactory(client)
        self.controllers: dict[str, Controller] = {}
        self._tasks: list[asyncio.Task[None]] = []

    def add(self, name: str, controller: Controller) -> None:
        if name in self.controllers:
            raise ValueError(f"controller {name!r} is already registered")
        self.controllers[name] = controller

    def start(self) -> None:
        for name, controller in self.controllers.items():
            task = asyncio.create_task(controller.run(), name=f"controller:{name}")
            task.add_done_callback(_report_crash)
            self._tasks.append(task)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        self._tasks.clear()
        await self.informers.stop()


def _report_crash(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and task.exception() is not None:
        log.error("%s stopped with an error", task.get_name(), exc_info=task.exception())
