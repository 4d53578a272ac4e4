"""Server-side printing: answering ``Accept: application/json;as=Table;v=v1;g=meta.k8s.io``.

kubectl asks for a Table on ``get`` and prints its rows; the columns come from the resource's
strategy for the request's version (:mod:`kplane.core.registry.printing`). Each row carries the
object as ``includeObject`` asks: ``None``, ``Metadata`` (the default, a PartialObjectMetadata) or
the whole ``Object``. A kind whose columns read its request's version (custom resources) has each
object converted to it first, as kube-apiserver converts before its table convertor runs; a
conversion webhook's is awaited by the handlers before the rows are made (:attr:`objects`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from aiohttp import web

from kplane.core.meta import errors
from kplane.core.registry.printing import Column
from kplane.core.registry.stored import StoredObject
from kplane.core.runtime.scheme import ResourceType
from kplane.core.server.listing import list_meta

TABLE = "application/json;as=Table;v=v1;g=meta.k8s.io"
INCLUDE_OBJECT = ("None", "Metadata", "Object")


def wants_table(request: web.Request) -> bool:
    for part in request.headers.get("Accept", "").split(","):
        params = {p.strip() for p in part.split(";")[1:]}
        if "as=Table" in params and "g=meta.k8s.io" in params and params & {"v=v1", "v=v1beta1"}:
            return True
    return False


def include_object(request: web.Request) -> str:
    value = request.query.get("includeObject", "") or "Metadata"
    if value not in INCLUDE_OBJECT:
        raise errors.bad_request(f'includeObject: unsupported value "{value}" (supported: None, Metadata, Object)')
    return value


class TableBuilder:
    """Rows for one request: the columns of a resource, objects shown in one version."""

    def __init__(self, rt: ResourceType, columns: Sequence[Column], version: str, include: str) -> None:
        self.rt, self.columns, self.version, self.include = rt, columns, version, include
        #: Whether rows need whole objects in ``version``: to carry them, or to compute the cells.
        self.objects = include == "Object" or (rt.reads_in_request_version and not rt.reads_stored(version))

    content_type = TABLE

    @property
    def memo_key(self) -> tuple[str, str]:
        return TABLE, self.include

    def object(self, stored: StoredObject) -> dict[str, Any]:
        """A GET's answer: a Table of one row (a watch event's object too)."""
        return self.table([stored])

    watch_object = object

    def table(self, items: Sequence[StoredObject], resource_version: str = "", token: str = "") -> dict[str, Any]:
        return {**self.envelope(resource_version, token), "rows": [self.item(item) for item in items]}

    def envelope(self, resource_version: str = "", token: str = "") -> dict[str, Any]:
        """The Table without rows (``rows`` is its last field, an empty list)."""
        return {
            "kind": "Table",
            "apiVersion": "meta.k8s.io/v1",
            "metadata": list_meta(resource_version, token),
            "columnDefinitions": [c.definition() for c in self.columns],
            "rows": [],
        }

    def item(self, stored: StoredObject) -> dict[str, Any]:
        """One object's row."""
        obj = stored.obj
        rt, as_stored = self.rt, self.rt.reads_stored(self.version)
        in_version = obj if as_stored or not self.objects else rt.convert(obj, rt.storage_version, self.version)
        row: dict[str, Any] = {"cells": [column.cell(in_version if rt.reads_in_request_version else obj)
                                         for column in self.columns]}
        if self.include == "Metadata":
            row["object"] = {"kind": "PartialObjectMetadata", "apiVersion": "meta.k8s.io/v1", "metadata": in_version["metadata"]}
        elif self.include == "Object":
            row["object"] = stored.fragment() if as_stored else in_version
        return row


