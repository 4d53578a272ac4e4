"""One server's flow-control machinery, from its making to its stop: made in
``kplane_register_admission`` (which hands it the loopback client), started in
``kplane_post_start``, stopped in ``kplane_shutdown``. Kept by the server's Registry: a plugin
module is shared by every server of a process.

Start lists the objects, then ensures the bootstrap configuration before the server reports
ready, as kube-apiserver's post-start hook does (retried each second for a while should a write
fail), and keeps it every ``interval`` seconds after; the Dangling condition follows the
objects as they change."""

from __future__ import annotations

import asyncio
import contextlib
import logging
from weakref import WeakKeyDictionary

from kplane.api import ApiError, Registry, RESTClient, SharedInformerFactory
from kplane.plugins.flowcontrol.dangling import DanglingController
from kplane.plugins.flowcontrol.ensurer import Ensurer
from kplane.plugins.flowcontrol.types import GROUP

log = logging.getLogger(__name__)

START_ATTEMPTS = 10


class FlowControl:
    def __init__(self, registry: Registry, client: RESTClient, interval: float) -> None:
        self.informers = SharedInformerFactory(client)
        schemas = self.informers.informer(GROUP, "v1", "flowschemas")
        levels = self.informers.informer(GROUP, "v1", "prioritylevelconfigurations")
        self.ensurer = Ensurer(registry.scheme, schemas, levels)
        self.dangling = DanglingController(schemas, levels, client)
        self.interval = interval
        self._tasks: list[asyncio.Task[None]] = []

    async def start(self, sync_timeout: float = 10.0) -> None:
        self.informers.start()
        if not await self.informers.wait_for_cache_sync(sync_timeout):
            log.warning("FlowSchemas and PriorityLevelConfigurations not listed within %ss", sync_timeout)
        for attempt in range(START_ATTEMPTS):
            try:
                await self.ensurer.ensure()
                break
            except ApiError as err:
                log.warning("the flow-control bootstrap configuration is not in place yet (%s); retrying", err)
                await asyncio.sleep(1.0 if attempt < START_ATTEMPTS - 1 else 0)
        self._tasks = [asyncio.create_task(self._keep(), name="apf-config-producer"),
                       asyncio.create_task(self.dangling.run(), name="apf-dangling")]

    async def _keep(self) -> None:
        while True:
            await asyncio.sleep(self.interval)
            try:
                await self.ensurer.ensure()
            except ApiError as err:
                log.warning("the flow-control bootstrap configuration could not be kept (%s); retrying later", err)

    async def stop(self) -> None:
        for task in self._tasks:
            task.cancel()
        for task in self._tasks:
            with contextlib.suppress(asyncio.CancelledError):
                await task
        await self.informers.stop()


_servers: WeakKeyDictionary[Registry, FlowControl] = WeakKeyDictionary()


def create(registry: Registry, client: RESTClient, interval: float) -> None:
    _servers[registry] = FlowControl(registry, client, interval)


def of(registry: Registry) -> FlowControl | None:
    return _servers.get(registry)


def forget(registry: Registry) -> FlowControl | None:
    return _servers.pop(registry, None)
