"""A bounded cache of answers that expire, asked once per key at a time: what the delegated
authenticator and authorizer keep of the host's TokenReview and SubjectAccessReview answers
(k8s.io/apiserver's token cache and the webhook authorizer's LRU expiring cache)."""

from __future__ import annotations

import asyncio
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Hashable
from typing import Generic, TypeVar

V = TypeVar("V")


class ExpiringCache(Generic[V]):
    """At most ``size`` answers, each kept for the seconds ``ttl(answer)`` says (0: not kept);
    the least recently used goes first. Callers asking for a key being computed wait for that
    computation instead of starting their own (a burst of requests with one token makes one review)."""

    def __init__(self, size: int, ttl: Callable[[V], float], clock: Callable[[], float] = time.monotonic) -> None:
        self.size, self.ttl, self.clock = size, ttl, clock
        self._answers: OrderedDict[Hashable, tuple[float, V]] = OrderedDict()
        self._pending: dict[Hashable, asyncio.Future[V]] = {}

    async def get(self, key: Hashable, compute: Callable[[], Awaitable[V]]) -> V:
        found = self._answers.get(key)
        if found is not None:
            if found[0] > self.clock():
                self._answers.move_to_end(key)
                return found[1]
            del self._answers[key]
        pending = self._pending.get(key)
        if pending is None:  # its own task: a caller that goes away does not cancel it for the others
            pending = self._pending[key] = asyncio.ensure_future(self._compute(key, compute))
        return await asyncio.shield(pending)

    async def _compute(self, key: Hashable, compute: Callable[[], Awaitable[V]]) -> V:
        try:
            answer = await compute()
        finally:
            del self._pending[key]
        ttl = self.ttl(answer)
        if ttl > 0:
            self._answers[key] = (self.clock() + ttl, answer)
            while len(self._answers) > self.size:
                self._answers.popitem(last=False)
        return answer
