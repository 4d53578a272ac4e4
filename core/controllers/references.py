"""Objects as events' involved objects."""

from __future__ import annotations

from kplane.core.controllers.ownership import Obj


def involved_object(obj: Obj, api_version: str, kind: str) -> Obj:
    """``obj`` with its apiVersion and kind, for ``EventRecorder.event``: copies from an informer
    cache may lack both, and an Event's involvedObject needs them."""
    return {"apiVersion": api_version, "kind": kind, "metadata": obj["metadata"]}
