"""The aggregator of one server, from its making to its stop: made in
``kplane_register_filters``, listed in ``kplane_register_api_sources``, started in
``kplane_post_start``, stopped in ``kplane_shutdown``.

A plugin module is shared by every server of a process (tests run several at once), so each
server's aggregation is kept by that server's Registry, which each of those hooks receives.
"""

from __future__ import annotations

import asyncio
import contextlib
from dataclasses import dataclass
from weakref import WeakKeyDictionary

from kplane.api import Registry, SharedInformerFactory
from kplane.plugins.apiregistration.aggregator import Aggregator
from kplane.plugins.apiregistration.availability import AvailabilityController
from kplane.plugins.apiregistration.discovery import DiscoveryMerge
from kplane.plugins.apiregistration.proxy import ProxyFilter
from kplane.plugins.apiregistration.settings import Settings


@dataclass
class Aggregation:
    aggregator: Aggregator
    proxy: ProxyFilter
    discovery: DiscoveryMerge
    availability: AvailabilityController
    task: asyncio.Task[None] | None = None  # the availability controller, once started

    async def start(self) -> None:
        """kube-aggregator's post-start hooks: proxying (the informers listed), then availability."""
        await self.aggregator.start()
        self.task = asyncio.create_task(self.availability.run(), name="apiservice-availability")

    async def stop(self) -> None:
        if self.task is not None:
            self.task.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await self.task
        self.discovery.stop()
        await self.aggregator.stop()


_servers: WeakKeyDictionary[Registry, Aggregation] = WeakKeyDictionary()


def create(registry: Registry, informers: SharedInformerFactory, settings: Settings) -> Aggregation | None:
    """The server's aggregation, on the loopback client of its ``informers``; None when it
    serves no APIServices (``--runtime-config apiregistration.k8s.io/v1=false``)."""
    if not Aggregator.serves_api_services(registry.scheme):
        return None
    aggregator = Aggregator(registry.scheme, settings, informers.client)
    aggregation = _servers[registry] = Aggregation(aggregator, ProxyFilter(aggregator), DiscoveryMerge(aggregator),
                                                   AvailabilityController(aggregator, informers.client))
    return aggregation


def of(registry: Registry) -> Aggregation | None:
    return _servers.get(registry)


def forget(registry: Registry) -> Aggregation | None:
    """The server's aggregation, no longer kept (it is stopping)."""
    return _servers.pop(registry, None)
