"""Answering ``Accept: application/json;as=PartialObjectMetadataList;v=v1;g=meta.k8s.io``.

client-go's metadata client (metadata informers: the garbage collector, the namespace controller,
any operator that needs only names, labels and owners) asks for objects as
``PartialObjectMetadata``: kind, apiVersion and metadata, without spec and status. A GET and a
WATCH answer ``PartialObjectMetadata``, a LIST ``PartialObjectMetadataList``; asking for the one
where the other is served is a 406, as ``asPartialObjectMetadata(List)`` refuses it.
"""

from __future__ import annotations

from typing import Any

from aiohttp import web

from kplane.core.meta import errors
from kplane.core.registry.stored import StoredObject
from kplane.core.runtime.scheme import ResourceType
from kplane.core.server.listing import list_meta

OBJECT, LIST = "PartialObjectMetadata", "PartialObjectMetadataList"
VERSIONS = ("v1", "v1beta1")


def wanted(request: web.Request) -> tuple[str, str] | None:
    """The (kind, version) of ``meta.k8s.io`` the Accept header asks for, if it asks for one."""
    for part in request.headers.get("Accept", "").split(","):
        params = dict(p.strip().partition("=")[::2] for p in part.split(";")[1:])
        if params.get("g") == "meta.k8s.io" and params.get("as") in (OBJECT, LIST) and params.get("v") in VERSIONS:
            return params["as"], params["v"]
    return None


class PartialMetadata:
    """Objects as metadata only, in the kind and ``meta.k8s.io`` version the client asked for."""

    def __init__(self, kind: str, version: str, rt: ResourceType) -> None:
        self.kind, self.version, self.rt = kind, version, rt
        self.content_type = f"application/json;as={kind};v={version};g=meta.k8s.io"
        self.memo_key = (OBJECT, version)
        self.objects = False  # metadata only: nothing to convert between versions

    def object(self, stored: StoredObject) -> dict[str, Any]:
        """One object (a GET, a watch event)."""
        if self.kind == LIST:
            raise _not_acceptable(f"you requested {LIST}, but the requested object is not a list ({self.rt.kind})")
        return self.item(stored)

    def envelope(self, resource_version: str = "", token: str = "") -> dict[str, Any]:
        """A LIST's answer without its items (``items``, its last field, is an empty list)."""
        if self.kind == OBJECT:
            raise _not_acceptable(f"you requested {OBJECT}, but the requested object is a list ({self.rt.list_kind})")
        return {"kind": LIST, "apiVersion": f"meta.k8s.io/{self.version}", "metadata": list_meta(resource_version, token),
                "items": []}

    def item(self, stored: StoredObject) -> dict[str, Any]:
        """One object as PartialObjectMetadata: a list's item, and a watch event's object
        whichever of the two kinds was asked for."""
        return {"kind": OBJECT, "apiVersion": f"meta.k8s.io/{self.version}", "metadata": stored.obj["metadata"]}

    watch_object = item


def _not_acceptable(message: str) -> errors.APIError:
    return errors.APIError(406, errors.StatusReason.NOT_ACCEPTABLE, message, {})
