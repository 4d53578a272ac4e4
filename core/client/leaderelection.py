"""Leader election on a coordination.k8s.io/v1 Lease, the way client-go's
``tools/leaderelection`` does it, so that several replicas of a controller run it one at a time.

    config = LeaderElectionConfig("kube-system", "my-controller", identity=f"{host}_{uuid4()}")
    elector = LeaderElector(client, config, on_started_leading=controllers.run,
                            on_stopped_leading=lambda: sys.exit(1))
    await elector.run()  # returns when leadership is lost; cancel it to stop

Every candidate reads the Lease every ``retry_period`` (with jitter). A candidate takes the Lease
when nobody holds it or when its holder has not renewed it for ``leaseDurationSeconds``; the
leader renews it every ``retry_period`` and gives up if a renewal has not succeeded within
``renew_deadline``. Each write carries the resourceVersion it read, so of two candidates racing
for the Lease one wins and the other gets 409 and tries again later.

Timing is judged by the local monotonic clock only, as in client-go: a candidate notes *when it
saw* the Lease's content change, never trusts ``renewTime`` (another machine's clock), and treats
the Lease as expired once ``leaseDurationSeconds`` have passed on its own clock without a change.
Clock skew between machines therefore does not matter; a difference in clock *rate* is tolerated
up to about ``lease_duration / renew_deadline``.

There is no fencing, as client-go's documentation says: nothing stops a former leader that has
not noticed its loss yet (a paused process, a slow network) from acting for a moment while
another one already leads. The margin is ``lease_duration - renew_deadline`` on a healthy
machine. Writes that must not be made by two leaders should carry their own resourceVersion
preconditions, so that a stale leader's write fails with 409.
"""

from __future__ import annotations

import asyncio
import inspect
import logging
import math
import random
from collections.abc import Awaitable, Callable, Coroutine
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import aiohttp

from kplane.core.client.rest import ApiError, RESTClient

log = logging.getLogger(__name__)

JITTER_FACTOR = 1.2  # a candidate waits retry_period * (1 + up to 1.2) between tries, as client-go
GROUP, VERSION, PLURAL = "coordination.k8s.io", "v1", "leases"  # the lock, as client-go's LeaseLock
_REQUEST_ERRORS = (ApiError, aiohttp.ClientError, OSError)


def micro_time() -> str:
    """Now as a ``metav1.MicroTime``: RFC 3339, UTC, microseconds."""
    return datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%fZ")


@dataclass(frozen=True, slots=True)
class LeaderElectionConfig:
    """Which Lease to compete for, as whom, and how fast (seconds; client-go's defaults)."""

    lease_namespace: str
    lease_name: str
    identity: str
    #: How long candidates wait, without seeing the Lease change, before taking it over.
    lease_duration: float = 15.0
    #: How long the leader keeps retrying a failing renewal before it gives up leading.
    renew_deadline: float = 10.0
    #: How long to wait between tries, to acquire or to renew.
    retry_period: float = 2.0
    #: On cancellation of ``run()``, hand the Lease back so that another candidate takes it at
    #: its next try rather than after ``lease_duration``. Leave it False if the work guarded by
    #: the Lease may outlive the cancellation of ``on_started_leading``.
    release_on_cancel: bool = False

    @property
    def lock(self) -> tuple[str, str, str]:
        """The group, version and resource of the lock: what a server must serve for this election."""
        return GROUP, VERSION, PLURAL

    def __post_init__(self) -> None:
        for name in ("lease_duration", "renew_deadline", "retry_period"):
            if getattr(self, name) <= 0:
                raise ValueError(f"{name} must be greater than zero")
        if self.lease_duration <= self.renew_deadline:
            raise ValueError("lease_duration must be greater than renew_deadline")
        if self.renew_deadline <= JITTER_FACTOR * self.retry_period:
            raise ValueError(f"renew_deadline must be greater than retry_period*{JITTER_FACTOR}")
        for name in ("lease_namespace", "lease_name", "identity"):
            if not getattr(self, name):
                raise ValueError(f"{name} must not be empty")

    @property
    def lease_duration_seconds(self) -> int:
        """What the Lease records: whole seconds, rounded up so that no candidate ever waits less
        than the leader allows itself (client-go truncates, which can undercut renew_deadline)."""
        return math.ceil(self.lease_duration)


class LeaderElector:
    """One candidate. ``run()`` competes for the Lease, leads while it can renew, and returns
    when leadership is lost; the caller decides whether to exit or run again.

    ``on_started_leading`` runs as a task while this candidate leads and is cancelled when it
    stops; it must honour cancellation. ``on_stopped_leading`` (plain or async) is called every
    time ``run()`` ends, even if it never led, as in client-go. ``on_new_leader`` is called with
    the holder's identity each time a new holder is observed, this candidate included.
    """

    def __init__(
        self,
        client: RESTClient,
        config: LeaderElectionConfig,
        *,
        on_started_leading: Callable[[], Coroutine[Any, Any, None]],
        on_stopped_leading: Callable[[], Awaitable[None] | None],
        on_new_leader: Callable[[str], None] | None = None,
    ) -> None:
        self.config = config
        self._leases = client.resource(*config.lock, namespace=config.lease_namespace)
        self._on_started_leading = on_started_leading
        self._on_stopped_leading = on_stopped_leading
        self._on_new_leader = on_new_leader
        self._lease: dict[str, Any] | None = None  # as last read or written: the precondition of a fast renewal
        self._observed: dict[str, Any] = {}  # the Lease's spec as last observed
        self._observed_at = 0.0  # local monotonic time at which that spec was first seen
        self._renewed_at = 0.0  # local time at which the last successful acquire/renew attempt began
        self._reported = ""
        self._leading: asyncio.Task[None] | None = None

    @property
    def leader(self) -> str:
        """The holder identity last observed on the Lease; empty if nobody holds it."""
        return str(self._observed.get("holderIdentity") or "")

    @property
    def is_leader(self) -> bool:
        """True while this candidate leads, between on_started_leading and its cancellation."""
        return self._leading is not None

    def _describe(self) -> str:
        return f"{self.config.lease_namespace}/{self.config.lease_name}"

    async def run(self) -> None:
        """Acquire, lead, and return once a renewal fails; raises what ``on_started_leading``
        raised, after stopping, so that a crashed leader does not go on holding the Lease."""
        try:
            await self._acquire()
            self._leading = asyncio.create_task(self._on_started_leading(), name=f"leading:{self.config.identity}")
            crash = await self._renew(self._leading)
        except asyncio.CancelledError:
            # A fresh task: this one is being cancelled, which would spoil timeouts in the release.
            await asyncio.create_task(self._stop(release=self.config.release_on_cancel))
            raise
        await self._stop(release=self.config.release_on_cancel and crash is not None)
        if crash is not None:
            raise crash

    async def _acquire(self) -> None:
        """Try until the Lease is ours, every retry_period with jitter."""
        log.info("attempting to acquire leader lease %s", self._describe())
        while True:
            try:
                async with asyncio.timeout(self.config.renew_deadline):  # a hung request must not stall us
                    acquired = await self._try_acquire_or_renew()
            except TimeoutError:
                acquired = False
            self._report_transition()
            if acquired:
                log.info("%s acquired lease %s", self.config.identity, self._describe())
                return
            await asyncio.sleep(self.config.retry_period * (1 + random.random() * JITTER_FACTOR))

    async def _renew(self, leading: asyncio.Task[None]) -> BaseException | None:
        """Renew every retry_period; return when a renewal has not succeeded within renew_deadline
        of the start of the last successful one or another holder is seen (None), or when the
        leading task has crashed (its exception).

        The deadline counts from the last success rather than, as in client-go, from the start
        of the current round: that is up to one retry_period earlier, so the leader gives up
        before any candidate can have waited out lease_duration since it saw that success.
        """
        loop = asyncio.get_running_loop()
        while True:
            if leading.done():
                await asyncio.sleep(self.config.retry_period)
            else:  # wake early if it crashes
                await asyncio.wait([leading], timeout=self.config.retry_period)
                if leading.done() and not leading.cancelled() and leading.exception() is not None:
                    return leading.exception()
            try:
                async with asyncio.timeout_at(self._renewed_at + self.config.renew_deadline):
                    while not await self._try_acquire_or_renew():
                        self._report_transition()
                        if self.leader and self.leader != self.config.identity:
                            log.info("%s lost lease %s to %s", self.config.identity, self._describe(), self.leader)
                            return None
                        await asyncio.sleep(self.config.retry_period)
            except TimeoutError:
                log.info("%s failed to renew lease %s within %.3gs (last renewal %.3gs ago)", self.config.identity,
                         self._describe(), self.config.renew_deadline, loop.time() - self._renewed_at)
                return None
            self._report_transition()

    async def _try_acquire_or_renew(self) -> bool:
        """One attempt (client-go's ``tryAcquireOrRenew``): renew from the cached Lease while our
        own lease is valid, else read the Lease and create, renew or take it over if allowed."""
        loop = asyncio.get_running_loop()
        started, now, identity = loop.time(), micro_time(), self.config.identity
        ours = {"holderIdentity": identity, "leaseDurationSeconds": self.config.lease_duration_seconds, "renewTime": now}

        if self._lease is not None and self.leader == identity and self._valid(started):
            try:
                self._wrote(await self._leases.update({**self._lease, "spec": {**self._observed, **ours}}), started)
                return True
            except _REQUEST_ERRORS as err:
                log.debug("fast renewal of %s failed, reading it: %s", self._describe(), err)

        try:
            lease = await self._leases.get(self.config.lease_name)
        except ApiError as err:
            if err.code != 404:
                log.warning("cannot read lease %s: %s", self._describe(), err)
                return False
            return await self._create({**ours, "acquireTime": now, "leaseTransitions": 0}, started)
        except _REQUEST_ERRORS as err:
            log.warning("cannot read lease %s: %s", self._describe(), err)
            return False

        self._observe(lease)
        holder = self.leader
        if holder and holder != identity and self._valid(loop.time()):
            return False
        spec = dict(self._observed)
        if holder != identity:
            spec.update(acquireTime=now, leaseTransitions=int(spec.get("leaseTransitions") or 0) + 1)
        try:
            self._wrote(await self._leases.update({**lease, "spec": {**spec, **ours}}), started)
        except _REQUEST_ERRORS as err:  # 409: another candidate wrote first; read again next time
            log.debug("cannot write lease %s: %s", self._describe(), err)
            return False
        return True

    async def _create(self, spec: dict[str, Any], started: float) -> bool:
        body = {
            "apiVersion": f"{GROUP}/{VERSION}",
            "kind": "Lease",
            "metadata": {"name": self.config.lease_name, "namespace": self.config.lease_namespace},
            "spec": spec,
        }
        try:
            self._wrote(await self._leases.create(body), started)
        except _REQUEST_ERRORS as err:  # 409: another candidate created it first
            log.debug("cannot create lease %s: %s", self._describe(), err)
            return False
        return True

    def _wrote(self, lease: dict[str, Any], started: float) -> None:
        self._observe(lease)
        self._renewed_at = started

    def _observe(self, lease: dict[str, Any]) -> None:
        """Remember the Lease; restart the expiry clock only if its content changed."""
        self._lease = lease
        spec = lease.get("spec") or {}
        if spec != self._observed:
            self._observed, self._observed_at = spec, asyncio.get_running_loop().time()

    def _valid(self, now: float) -> bool:
        """Whether the observed holder's term runs on, by our clock since we saw its last change."""
        return self._observed_at + float(self._observed.get("leaseDurationSeconds") or 0) > now

    def _report_transition(self) -> None:
        if self.leader == self._reported:
            return
        self._reported = self.leader
        if self._reported and self._on_new_leader is not None:
            self._on_new_leader(self._reported)

    async def _stop(self, *, release: bool) -> None:
        """Cancel and await the leading task, release the Lease if asked, then tell the caller."""
        leading, self._leading = self._leading, None
        if leading is not None:
            leading.cancel()
            await asyncio.wait([leading])
        if release and self.leader == self.config.identity:
            await self._release()
        stopped = self._on_stopped_leading()
        if inspect.isawaitable(stopped):
            await stopped

    async def _release(self) -> None:
        """Clear the holder and shorten the term to 1 s, if the Lease is still ours on the server:
        reading first means a candidate that has already taken over is never overwritten."""
        try:
            async with asyncio.timeout(self.config.renew_deadline):
                while True:
                    lease = await self._leases.get(self.config.lease_name)
                    spec = lease.get("spec") or {}
                    if spec.get("holderIdentity") != self.config.identity:
                        return
                    now = micro_time()
                    released = {**spec, "holderIdentity": "", "leaseDurationSeconds": 1, "acquireTime": now, "renewTime": now}
                    try:
                        self._observe(await self._leases.update({**lease, "spec": released}))
                        log.info("%s released lease %s", self.config.identity, self._describe())
                        return
                    except ApiError as err:
                        if err.code != 409:
                            raise
        except (*_REQUEST_ERRORS, TimeoutError) as err:
            log.warning("%s could not release lease %s: %s", self.config.identity, self._describe(), err)
