"""A plugin serving subresources with objects of its own, through kplane.api only.

journals.test.kplane.io/v1 Journal (``spec.lines``) has three subresources, one of each shape a
later built-in needs:

* ``log``: a :class:`Connecter` streaming GET (as ``pods/log``): the journal's lines, one at a
  time ``spec.interval`` seconds apart; ``?follow=true`` then writes ``tick N`` lines until the
  client goes away; ``?tailLines=N`` only the last N lines;
* ``echo``: a Connecter taking GET and POST (as ``pods/exec``; over a WebSocket, too): it answers the ``text`` query
  values, or the posted body, upper-cased;
* ``retire``: a :class:`Creater` of a kind of its own, JournalRetirement (as ``pods/eviction``):
  it deletes the journal through its parent's GracefulDeleter.
"""

from __future__ import annotations

import asyncio
import itertools
from dataclasses import dataclass, field
from typing import Any, cast

from kplane.api import (
    DeleteOptions, Exchange, GracefulDeleter, Getter, GroupVersionKind, ObjectMeta,
    ObjectMetaSchema, Registry, RequestContext, Schema, Scheme, Served, errors, fields, hookimpl,
)

GROUP = "journals.test.kplane.io"
PLURAL = "journals"


@dataclass(slots=True)
class JournalSpec:
    lines: list[str] | None = None
    interval: float | None = None


@dataclass(slots=True)
class Journal:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: JournalSpec = field(default_factory=JournalSpec)


class JournalSpecSchema(Schema):
    lines = fields.List(fields.Str())
    interval = fields.Float()


class JournalSchema(Schema):
    """A Journal: lines to stream."""

    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(JournalSpecSchema)


class JournalRetirementSchema(Schema):
    """JournalRetirement asks for a Journal to go."""

    metadata = fields.Nested(ObjectMetaSchema)
    reason = fields.Str()


class Subresource(Served):
    """Reaches the parent Journal through the registry on each request."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    def parent(self) -> Any:
        parent = self.registry.rest(GROUP, PLURAL)
        assert parent is not None
        return parent

    async def journal(self, ctx: RequestContext, name: str) -> dict[str, Any]:
        return (await cast(Getter, self.parent()).get(ctx, name)).obj


class JournalLog(Subresource):
    connect_methods = frozenset({"GET"})

    def __init__(self, registry: Registry) -> None:
        super().__init__(registry)
        self.ended: list[str] = []  # the names of the streams that ended because the client went away

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None:
        tail = exchange.query("tailLines")
        if tail and not tail[0].isdigit():
            raise errors.bad_request(f"tailLines must be a number, not {tail[0]!r}")
        journal = await self.journal(ctx, name)
        spec = journal.get("spec") or {}
        lines = spec.get("lines") or []
        if tail:
            lines = lines[len(lines) - int(tail[0]):] if int(tail[0]) else []
        await exchange.start("text/plain")
        try:
            for n, line in enumerate(lines):
                if n:
                    await asyncio.sleep(spec.get("interval") or 0)
                await exchange.write(line.encode() + b"\n")
            if exchange.query("follow") == ["true"]:
                for n in itertools.count(1):
                    await asyncio.sleep(0.05)
                    await exchange.write(f"tick {n}\n".encode())
        except ConnectionResetError:
            self.ended.append(name)
            raise


class JournalEcho(Subresource):
    connect_methods = frozenset({"GET", "POST"})

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None:
        await self.journal(ctx, name)
        offered = exchange.websocket_protocols()
        if offered is not None:  # over a WebSocket: each message echoed upper-cased until the client closes
            ws = await exchange.websocket("echo.v1" if "echo.v1" in offered else None)
            while (message := await ws.receive()) is not None:
                await ws.send(message.upper())
            return
        said = await exchange.read() if exchange.method == "POST" else " ".join(exchange.query("text")).encode()
        await exchange.start("application/octet-stream")
        await exchange.write(said.upper())


class JournalRetire(Subresource):
    kind = GroupVersionKind(GROUP, "v1", "JournalRetirement")
    schema = JournalRetirementSchema
    own_kind = True

    async def create(self, ctx: RequestContext, obj: Any) -> dict[str, Any]:
        if not isinstance(obj, dict) or obj.get("kind") != "JournalRetirement":
            raise errors.bad_request("the body must be a JournalRetirement")
        if (obj.get("metadata") or {}).get("name", ctx.name) != ctx.name:
            raise errors.bad_request("name in URL does not match name in JournalRetirement object")
        await cast(GracefulDeleter, self.parent()).delete(ctx, ctx.name, DeleteOptions())
        return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}


def add_kind(scheme: Scheme, plugin_name: str) -> None:
    scheme.add_kind(group=GROUP, kind="Journal", plural=PLURAL, internal=Journal, versions={"v1": JournalSchema},
                    storage_version="v1", plugin=plugin_name)


class JournalsPlugin:
    def __init__(self) -> None:
        self.log: JournalLog | None = None

    @hookimpl
    def kplane_register_types(self, scheme: Scheme, plugin_name: str) -> None:
        add_kind(scheme, plugin_name)

    @hookimpl
    def kplane_register_strategies(self, registry: Registry) -> None:
        self.log = JournalLog(registry)
        registry.add_subresource(GROUP, PLURAL, "log", self.log)
        registry.add_subresource(GROUP, PLURAL, "echo", JournalEcho(registry))
        registry.add_subresource(GROUP, PLURAL, "retire", JournalRetire(registry))

