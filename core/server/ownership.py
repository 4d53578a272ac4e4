"""Who owns which fields: ``metadata.managedFields`` on every write, and server-side apply.

A write names its field manager with ``?fieldManager=`` (or is known by its User-Agent); the
:class:`FieldTracker` of a request records, in the request's version, which fields the write set
or changed, and runs server-side apply for ``application/apply-patch+yaml``.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import web

from kplane.core.managedfields import fieldmanager
from kplane.core.meta import clock
from kplane.core.registry.strategy import RequestContext, Strategy
from kplane.core.runtime.gvk import GroupVersion
from kplane.core.runtime.scheme import ResourceType
from kplane.core.runtime.schema import Shape


class FieldTracker:
    def __init__(self, request: web.Request, ctx: RequestContext, rt: ResourceType, strategy: Strategy, *,
                 version: str, shape: Shape | None = None) -> None:
        self.version = version
        self.manager = ctx.field_manager or fieldmanager.default_manager(request.headers.get("User-Agent", ""))
        self.subresource = ctx.subresource
        self.shape = shape or rt.versions[version].shape
        self.api_version = GroupVersion(rt.group, version).api_version
        self.ignored = strategy.reset_fields if strategy.reset_fields is not None else fieldmanager.default_ignored(ctx.subresource)

    def update(self, old: dict[str, Any] | None, new: dict[str, Any]) -> dict[str, Any]:
        """``new`` (as decoded and defaulted: only fields the schema knows) with managedFields
        recording this write (create, PUT or patch)."""
        managed = fieldmanager.managed_fields_after_update(
            old, new, self.shape, manager=self.manager, api_version=self.api_version, now=clock.now(),
            subresource=self.subresource, ignored=self.ignored,
        )
        meta = {k: v for k, v in (new.get("metadata") or {}).items() if k != "managedFields"}
        if managed:
            meta["managedFields"] = managed
        return {**new, "metadata": meta}

    def decode(self, rt: ResourceType, old: dict[str, Any] | None, new: dict[str, Any], validation: str,
               duplicates: Sequence[str] = ()) -> tuple[Any, list[str]]:
        """The internal object a create, PUT or patch stores, with the warnings to send.

        Like kube-apiserver, whose decoder defaults an object before the field manager sees it,
        ownership is recorded on the validated, defaulted object: the writer owns the defaults
        its write brought (``spec.strategy`` of a new Deployment), and nothing a decoder drops.
        """
        obj, warnings = rt.decode(new, self.version, validation, duplicates)
        tracked = self.update(old, rt.encode(obj, self.version))
        return rt.internalize(tracked, self.version), warnings

    def apply(self, live: dict[str, Any] | None, config: dict[str, Any], *, force: bool) -> dict[str, Any]:
        """Server-side apply of ``config`` onto ``live`` (None: create); 409 on conflicts."""
        try:
            return fieldmanager.apply(
                live, config, self.shape, manager=self.manager, force=force, api_version=self.api_version,
                now=clock.now(), subresource=self.subresource, ignored=self.ignored,
            )
        except fieldmanager.ApplyConflict as conflict:
            raise conflict.api_error() from None

