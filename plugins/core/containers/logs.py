"""``GET /api/v1/namespaces/NS/pods/NAME/log``: a container's log (kube's ``LogREST`` and the
kubelet's ``containerLogs``), what ``kubectl logs`` reads.

The log is what the container's main process wrote (:mod:`.process`: its command's output, or
the image process's lines), each line stamped with the moment it was written from the instance's
``startedAt`` on; lines not yet written (a ``sleep`` ahead) come when their time comes. The
``PodLogOptions`` query: ``container``, ``follow`` (stream until the instance ends, the container
restarts or the pod goes), ``previous`` (the last terminated instance), ``timestamps``,
``sinceSeconds``/``sinceTime``, ``tailLines``, ``limitBytes``; invalid ones are a 422 as kube's
``ValidatePodLogOptions`` says, malformed ones a 400. A pod not yet on a node has an empty log.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import time
from typing import Any

from kplane.api import Exchange, FieldError, Registry, RequestContext, Served, clock, errors, forbidden, invalid
from kplane.plugins.core.containers import files, instances
from kplane.plugins.core.containers.instances import Line

Obj = dict[str, Any]
#: How often an idle ``follow`` looks whether its client is still there.
IDLE_CHECK = 1.0
_INT = re.compile(r"[+-]?[0-9]+")
_TRUE, _FALSE = frozenset({"1", "t", "T", "TRUE", "true", "True"}), frozenset({"0", "f", "F", "FALSE", "false", "False"})


def flag(exchange: Exchange, name: str) -> bool:
    """A boolean query parameter, as Go's ``strconv.ParseBool`` reads it; 400 for another value."""
    values = exchange.query(name)
    if not values or values[0] == "":
        return False
    if values[0] in _TRUE:
        return True
    if values[0] in _FALSE:
        return False
    raise errors.bad_request(f'strconv.ParseBool: parsing "{values[0]}": invalid syntax')


def number(exchange: Exchange, name: str) -> int | None:
    """An integer query parameter, as Go's ``strconv.ParseInt(value, 10, 64)`` reads it; 400 for
    another value or one out of int64's range."""
    values = exchange.query(name)
    if not values:
        return None
    text = values[0]
    if not _INT.fullmatch(text):
        raise errors.bad_request(f'strconv.ParseInt: parsing "{text}": invalid syntax')
    if len(text.lstrip("+-").lstrip("0")) > 19 or not -(1 << 63) <= int(text) < 1 << 63:
        raise errors.bad_request(f'strconv.ParseInt: parsing "{text}": value out of range')
    return int(text)


class LogOptions:
    """A ``PodLogOptions`` from the query, validated."""

    def __init__(self, exchange: Exchange, name: str) -> None:
        self.container = (exchange.query("container") or [""])[0]
        self.follow = flag(exchange, "follow")
        self.previous = flag(exchange, "previous")
        self.timestamps = flag(exchange, "timestamps")
        self.since_seconds = number(exchange, "sinceSeconds")
        self.tail_lines = number(exchange, "tailLines")
        self.limit_bytes = number(exchange, "limitBytes")
        since_time = (exchange.query("sinceTime") or [""])[0]
        try:
            self.since_time = clock.epoch(since_time) if since_time else None
        except ValueError:
            raise errors.bad_request(f'parsing time "{since_time}" as "2006-01-02T15:04:05Z07:00": cannot parse') from None
        problems: list[FieldError] = []
        if self.tail_lines is not None and self.tail_lines < 0:
            problems.append(invalid("tailLines", self.tail_lines, "must be greater than or equal to 0"))
        if self.limit_bytes is not None and self.limit_bytes < 1:
            problems.append(invalid("limitBytes", self.limit_bytes, "must be greater than 0"))
        if self.since_seconds is not None and self.since_time is not None:
            problems.append(forbidden("", "at most one of `sinceTime` or `sinceSeconds` may be specified"))
        elif self.since_seconds is not None and self.since_seconds < 1:
            problems.append(invalid("sinceSeconds", self.since_seconds, "must be greater than 0"))
        if problems:
            raise errors.invalid_object("PodLogOptions", "", name, problems)

    def since(self, now: float) -> float | None:
        return now - self.since_seconds if self.since_seconds is not None else self.since_time


class PodLogREST(Served):
    """``pods/log``: GET, streamed as text/plain."""

    connect_methods = frozenset({"GET"})

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None:
        options = LogOptions(exchange, name)
        pod = await instances.get_pod(self.registry, ctx, name)
        container = instances.pick_container(pod, options.container)
        if not (pod.get("spec") or {}).get("nodeName"):
            await exchange.start("text/plain")
            return  # not on a node yet: an empty log, as kube-apiserver answers
        run = instances.instance(pod, container["name"], previous=options.previous)
        sources = await files.load_sources(self.registry, ctx, pod, tokens=False)
        lines = instances.output(pod, container, sources, run)
        now = time.time()
        since = options.since(now)
        written = [line for line in lines if line.at <= now and (since is None or line.at >= since)]
        if options.tail_lines is not None:
            written = written[len(written) - options.tail_lines:] if options.tail_lines else []
        await exchange.start("text/plain")
        writer = _Writer(exchange, options)
        for line in written:
            if not await writer.write(line):
                return
        if options.follow and run.finished is None and not options.previous:
            await self._follow(ctx, pod, container["name"], run, lines[len([x for x in lines if x.at <= now]):], writer)

    async def _follow(self, ctx: RequestContext, pod: Obj, name: str, run: instances.Instance, ahead: list[Line],
                      writer: _Writer) -> None:
        """Write ``ahead`` as its lines come due, until the instance ends or the pod goes."""
        changes = instances.pod_changes(self.registry, ctx, pod)
        waiting: asyncio.Task[Obj | None] | None = None
        try:
            while True:
                due = ahead[0].at - time.time() if ahead else None
                if due is not None and due <= 0:
                    if not await writer.write(ahead.pop(0)):
                        return
                    continue
                changed, now_pod, waiting = await instances.next_change(
                    changes, waiting, IDLE_CHECK if due is None else min(due, IDLE_CHECK))
                if writer.gone():
                    return
                if not changed:
                    continue
                current = instances.same_instance(now_pod, name, run) if now_pod is not None else None
                if current is None or current.finished is not None:
                    end = current.finished if current is not None else time.time()
                    for line in ahead:
                        if line.at <= end + 1 and not await writer.write(line):
                            return
                    return
        finally:
            if waiting is not None:
                waiting.cancel()
            with contextlib.suppress(Exception):
                await changes.aclose()  # type: ignore[attr-defined]


class _Writer:
    """Writes lines as the options say (timestamps, limitBytes); False once it must stop."""

    def __init__(self, exchange: Exchange, options: LogOptions) -> None:
        self.exchange = exchange
        self.timestamps = options.timestamps
        self.left = options.limit_bytes

    def gone(self) -> bool:
        return self.exchange.client_gone()

    async def write(self, line: Line) -> bool:
        data = (instances.timestamp(line.at).encode() + b" " if self.timestamps else b"") + line.data
        if self.left is not None:
            data = data[:self.left]
            self.left -= len(data)
        if data:
            await self.exchange.write(data)
        return self.left is None or self.left > 0
