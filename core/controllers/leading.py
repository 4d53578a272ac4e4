"""Controllers that run only while their process leads, as kube-controller-manager's
``--leader-elect``: several servers (or stand-alone controller-managers) on one storage run one
set of controllers between them, handed over through a Lease when the leader goes away."""

from __future__ import annotations

import asyncio
import logging
import socket
import uuid
from collections.abc import Awaitable, Callable

from kplane.core.client.leaderelection import LeaderElectionConfig, LeaderElector
from kplane.core.client.rest import RESTClient
from kplane.core.controllers.manager import ControllerManager

log = logging.getLogger(__name__)

LEASE_NAMESPACE = "kube-system"
LEASE_NAME = "kplane-controller-manager"


def default_identity() -> str:
    """Unique per process, readable on the Lease: ``HOSTNAME_UUID`` as client-go's default."""
    return f"{socket.gethostname()}_{uuid.uuid4()}"


async def run_controllers(manager: ControllerManager) -> None:
    """Run the controllers until cancelled, then stop them: what a leader does while it leads."""
    manager.start()
    try:
        await asyncio.get_running_loop().create_future()
    finally:
        await manager.stop()


def elector(client: RESTClient, election: LeaderElectionConfig, manager: ControllerManager) -> LeaderElector:
    """A candidate that runs ``manager`` for as long as it holds the Lease."""
    return LeaderElector(client, election, on_started_leading=lambda: run_controllers(manager),
                         on_stopped_leading=lambda: None,
                         on_new_leader=lambda holder: log.info("the controller-manager leader is %s", holder))


async def stand_for_election(client: RESTClient, election: LeaderElectionConfig, first: ControllerManager,
                             build: Callable[[], Awaitable[ControllerManager]]) -> None:
    """Lead whenever elected, until cancelled: a server's in-process controllers stand again after
    a lost term (with fresh controllers and caches, built by ``build``) where the stand-alone
    controller-manager exits instead."""
    manager = first
    while True:
        try:
            await elector(client, election, manager).run()
            log.warning("%s lost the lease %s/%s; standing again", election.identity, election.lease_namespace,
                        election.lease_name)
        except Exception:
            log.exception("the controllers stopped with an error; standing again")
        await asyncio.sleep(election.retry_period)
        manager = await build()
