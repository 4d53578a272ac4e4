"""Leader election against a real server, with short timings (lease 1 s, renew 0.6 s, retry 0.2 s).

The guarded work records when each candidate does it, so the tests see overlaps the way a user
would: two pieces of leader work running at once.
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

import pytest

from kplane.core.client.leaderelection import LeaderElectionConfig, LeaderElector
from kplane.core.client.rest import RESTClient
from kplane.core.serving.apiserver import APIServer
from tests.waiting import eventually

FAST = {"lease_duration": 1.0, "renew_deadline": 0.6, "retry_period": 0.2}


def now() -> float:
    return asyncio.get_running_loop().time()


class Work:
    """The leader's work, shared by every candidate: terms as [identity, start, end]."""

    def __init__(self) -> None:
        self.current: str | None = None
        self.terms: list[list[Any]] = []
        self.overlaps: list[tuple[str, str]] = []

    async def lead(self, identity: str, crash_after: float | None) -> None:
        if self.current is not None:
            self.overlaps.append((self.current, identity))
        self.current = identity
        term = [identity, now(), None]
        self.terms.append(term)
        try:
            if crash_after is None:
                await asyncio.Event().wait()  # until cancelled
            else:
                await asyncio.sleep(crash_after)
                raise RuntimeError("boom")
        finally:
            term[2] = now()
            self.current = None


class PartitionableClient(RESTClient):
    """A client whose requests hang once ``partition()`` is called, like a cut network."""

    def __init__(self, server: str) -> None:
        super().__init__(server)
        self.connected = asyncio.Event()
        self.connected.set()

    def partition(self) -> None:
        self.connected.clear()

    async def request(self, *args: Any, **kwargs: Any) -> Any:
        await self.connected.wait()
        return await super().request(*args, **kwargs)


class Candidate:
    def __init__(self, client: RESTClient, work: Work, identity: str, release: bool, crash_after: float | None,
                 timings: dict[str, float]) -> None:
        self.identity = identity
        self.client = client
        self.stopped = 0
        self.new_leaders: list[str] = []
        config = LeaderElectionConfig("default", "lock", identity, release_on_cancel=release, **timings)
        self.elector = LeaderElector(client, config, on_started_leading=lambda: work.lead(identity, crash_after),
                                     on_stopped_leading=self._stopped, on_new_leader=self.new_leaders.append)
        self.task = asyncio.create_task(self.elector.run())

    async def _stopped(self) -> None:
        self.stopped += 1


class Election:
    def __init__(self, server: APIServer) -> None:
        self.server = server
        self.work = Work()
        self.candidates: list[Candidate] = []
        self.reader = RESTClient(server.url)

    def start(self, identity: str, *, release: bool = False, crash_after: float | None = None,
              client: type[RESTClient] = RESTClient, timings: dict[str, float] = FAST) -> Candidate:
        candidate = Candidate(client(self.server.url), self.work, identity, release, crash_after, timings)
        self.candidates.append(candidate)
        return candidate

    async def lease(self) -> dict[str, Any]:
        return (await self.reader.resource("coordination.k8s.io", "v1", "leases", "default").get("lock"))["spec"]


@pytest.fixture
async def election(server: APIServer) -> AsyncIterator[Election]:
    elect = Election(server)
    try:
        yield elect
    finally:
        for candidate in elect.candidates:
            candidate.task.cancel()
        await asyncio.gather(*(c.task for c in elect.candidates), return_exceptions=True)
        for client in [elect.reader, *(c.client for c in elect.candidates)]:
            await client.close()


async def test_one_of_three_leads_and_keeps_leading(election: Election) -> None:
    candidates = [election.start(name) for name in ("a", "b", "c")]
    await eventually(lambda: bool(election.work.terms), 3)
    await asyncio.sleep(1.5)  # longer than the lease: only renewals keep the others out
    assert len(election.work.terms) == 1 and election.work.overlaps == []
    leader = election.work.terms[0][0]
    assert [c.elector.is_leader for c in candidates] == [c.identity == leader for c in candidates]
    assert [c.elector.leader for c in candidates] == [leader] * 3
    assert [c.new_leaders for c in candidates] == [[leader]] * 3
    assert [c.stopped for c in candidates] == [0, 0, 0]
    spec = await election.lease()
    assert spec["holderIdentity"] == leader and spec["leaseTransitions"] == 0 and spec["leaseDurationSeconds"] == 1
    assert spec["renewTime"] > spec["acquireTime"] and spec["renewTime"].endswith("Z") and len(spec["renewTime"]) == 27


async def test_release_on_cancel_hands_over_at_once(election: Election) -> None:
    slow = {"lease_duration": 3.0, "renew_deadline": 2.0, "retry_period": 0.2}  # expiry would take 3 s
    a = election.start("a", release=True, timings=slow)
    await eventually(lambda: a.elector.is_leader, 3)
    others = [election.start(name, timings=slow) for name in ("b", "c")]
    await eventually(lambda: all(o.elector.leader == "a" for o in others), 2)

    cancelled = now()
    a.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await a.task
    assert a.stopped == 1 and not a.elector.is_leader and a.elector.leader == ""
    await eventually(lambda: len(election.work.terms) == 2, 1.0)
    (_, _, a_end), (successor, b_start, _) = election.work.terms
    assert a_end <= cancelled + 0.1 and b_start - cancelled < 1.0 and election.work.overlaps == []
    spec = await election.lease()
    assert spec["holderIdentity"] == successor and spec["leaseTransitions"] == 1 and spec["leaseDurationSeconds"] == 3
    assert next(o for o in others if o.identity == successor).new_leaders == ["a", successor]


async def test_without_release_the_lease_must_expire_first(election: Election) -> None:
    a = election.start("a")
    await eventually(lambda: a.elector.is_leader, 10)
    b = election.start("b")
    await eventually(lambda: b.elector.leader == "a", 5)

    cancelled = now()
    a.task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await a.task
    assert a.stopped == 1 and (await election.lease())["holderIdentity"] == "a"
    await eventually(lambda: len(election.work.terms) == 2, 2.5)
    # a renewed at most one retry period before it was cancelled; b waits a full second after seeing that
    assert election.work.terms[1][0] == "b" and election.work.terms[1][1] - cancelled > 0.7
    spec = await election.lease()
    assert spec["holderIdentity"] == "b" and spec["leaseTransitions"] == 1


async def test_a_cut_off_leader_steps_down_before_anyone_takes_over(election: Election) -> None:
    a = election.start("a", client=PartitionableClient)
    await eventually(lambda: a.elector.is_leader, 3)
    b = election.start("b")
    await eventually(lambda: b.elector.leader == "a", 2)

    assert isinstance(a.client, PartitionableClient)
    a.client.partition()
    cut = now()
    assert await asyncio.wait_for(a.task, 2) is None  # run() returns: leadership lost
    assert now() - cut < 0.75  # renew_deadline after the start of its last successful renewal
    assert a.stopped == 1 and not a.elector.is_leader and election.work.terms[0][2] is not None

    await eventually(lambda: len(election.work.terms) == 2, 2.5)
    (_, _, a_end), (successor, b_start, _) = election.work.terms
    assert successor == "b" and a_end < b_start and b_start - cut > 0.7 and election.work.overlaps == []
    assert (await election.lease())["leaseTransitions"] == 1


async def test_a_crashed_leader_stops_and_releases(election: Election) -> None:
    a = election.start("a", release=True, crash_after=0.3)
    with pytest.raises(RuntimeError, match="boom"):
        await asyncio.wait_for(a.task, 3)
    assert a.stopped == 1 and not a.elector.is_leader
    spec = await election.lease()
    assert spec["holderIdentity"] == "" and spec["leaseDurationSeconds"] == 1 and spec["leaseTransitions"] == 0


@pytest.mark.parametrize(("timings", "message"), [
    ({"lease_duration": 10, "renew_deadline": 10, "retry_period": 2}, "lease_duration must be greater than renew_deadline"),
    ({"lease_duration": 15, "renew_deadline": 2.4, "retry_period": 2}, r"renew_deadline must be greater than retry_period\*1.2"),
    ({"lease_duration": 15, "renew_deadline": 10, "retry_period": 0}, "retry_period must be greater than zero"),
    ({"lease_duration": -1, "renew_deadline": -2, "retry_period": -3}, "lease_duration must be greater than zero"),
    ({"identity": ""}, "identity must not be empty"),
    ({"lease_name": ""}, "lease_name must not be empty"),
])
def test_config_validation(timings: dict[str, Any], message: str) -> None:
    with pytest.raises(ValueError, match=message):
        LeaderElectionConfig(**{"lease_namespace": "default", "lease_name": "lock", "identity": "a", **timings})


def test_config_defaults_and_whole_seconds() -> None:
    config = LeaderElectionConfig("default", "lock", "a")
    assert (config.lease_duration, config.renew_deadline, config.retry_period, config.release_on_cancel) == (15.0, 10.0, 2.0, False)
    assert LeaderElectionConfig("default", "lock", "a", 1.5, 1.0, 0.2).lease_duration_seconds == 2
