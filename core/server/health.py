"""``/healthz``, ``/livez`` and ``/readyz``, answered as kube-apiserver's ``healthz`` package does.

Each endpoint runs a list of named checks: ``ok`` when all pass (``?verbose`` lists them, one
``[+]name ok`` line each, then ``<endpoint> check passed``); when one fails, 503 with every line
(``[-]etcd failed: reason withheld``) and ``<endpoint> check failed``. ``?exclude=name`` skips a
check; ``/<endpoint>/<name>`` runs one (``ok``, or 503 ``internal server error: <reason>``).

kube's healthz answers a failed check with 500; kplane answers 503 Service Unavailable, which
every probe (kubelet, load balancers, ``kubectl get --raw``) reads as a failure just the same,
and which keeps 500 for what it is everywhere else here: a bug worth an alert.

- ``/livez``: ``ping`` only, so a storage outage does not get the server restarted;
- ``/readyz`` and ``/healthz``: ``ping``, ``etcd`` (the storage answers, whichever backend: the
  name is Kubernetes'), ``poststarthook/kplane-start`` (start-up finished) and ``shutdown``
  (the server is not stopping).
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from aiohttp import web

log = logging.getLogger(__name__)

FAILED = 503  # a failed check (kube's healthz says 500; see the module docstring)
# A check returns None when it passes, else a reason fit to show (no addresses or internals).
CheckFn = Callable[[], Awaitable[str | None]]


@dataclass
class Lifecycle:
    started: bool = False  # start-up (post-start work) finished
    stopping: bool = False  # stop() began: readiness fails so that clients go elsewhere


@dataclass(frozen=True, slots=True)
class Check:
    name: str
    run: CheckFn


def standard_checks(storage: CheckFn, lifecycle: Lifecycle) -> tuple[list[Check], list[Check]]:
    """(liveness checks, readiness checks); ``storage`` is the registry's storage check."""

    async def ping() -> str | None:
        return None

    async def started() -> str | None:
        return None if lifecycle.started else "start-up has not finished"

    async def shutdown() -> str | None:
        return "the server is shutting down" if lifecycle.stopping else None

    live = [Check("ping", ping)]
    return live, [*live, Check("etcd", storage), Check("poststarthook/kplane-start", started), Check("shutdown", shutdown)]


def _text(status: int, text: str) -> web.Response:
    response = web.Response(status=status, text=text, content_type="text/plain", charset="utf-8")
    response.headers["X-Content-Type-Options"] = "nosniff"
    return response


def install(router: web.UrlDispatcher, endpoint: str, checks: list[Check]) -> None:
    """``/<endpoint>`` and one ``/<endpoint>/<check>`` per check."""

    async def root(request: web.Request) -> web.Response:
        excluded = set(request.query.getall("exclude", []))
        lines, failed = [], []
        for check in checks:
            if check.name in excluded:
                excluded.discard(check.name)
                lines.append(f"[+]{check.name} excluded: ok\n")
                continue
            reason = await check.run()
            if reason is None:
                lines.append(f"[+]{check.name} ok\n")
            else:
                lines.append(f"[-]{check.name} failed: reason withheld\n")
                failed.append(f"{check.name}: {reason}")
        if excluded:
            names = ",".join(f'"{name}"' for name in sorted(excluded))
            lines.append(f"warn: some health checks cannot be excluded: no matches for {names}\n")
        if failed:
            log.debug("%s check failed: %s", endpoint, "; ".join(failed))
            return _text(FAILED, "".join(lines) + f"{endpoint} check failed\n")
        if "verbose" not in request.query:
            return _text(200, "ok")
        return _text(200, "".join(lines) + f"{endpoint} check passed\n")

    def single(check: Check) -> Callable[[web.Request], Awaitable[web.Response]]:
        async def handler(request: web.Request) -> web.Response:
            reason = await check.run()
            return _text(200, "ok") if reason is None else _text(FAILED, f"internal server error: {reason}\n")
        return handler

    router.add_get(f"/{endpoint}", root)
    for check in checks:
        router.add_get(f"/{endpoint}/{check.name}", single(check))
