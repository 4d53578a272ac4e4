"""Owners and selectors of wire-form objects, as controllers read them from their caches."""

from __future__ import annotations

from typing import Any

from kplane.core.client.informer import Informer
from kplane.core.meta import errors
from kplane.core.meta.selectors import LabelSelectorExpr, label_selector_from_internal
from kplane.core.meta.types import LabelSelector, LabelSelectorRequirement

Obj = dict[str, Any]


def spec(obj: Obj) -> Obj:
    return obj.get("spec") or {}


def uid(obj: Obj) -> str:
    """An object's ``metadata.uid`` ('' without one), what owner references point at."""
    return str(obj["metadata"].get("uid", ""))


def owner_refs(obj: Obj) -> list[Obj]:
    return obj["metadata"].get("ownerReferences") or []


def controller_ref(obj: Obj) -> Obj | None:
    """The ownerReference marked ``controller: true``, if any."""
    return next((ref for ref in owner_refs(obj) if ref.get("controller")), None)


def controller_reference(owner: Obj, api_version: str, kind: str) -> Obj:
    """The ownerReference a controller puts on what it creates (it blocks foreground deletion)."""
    meta = owner["metadata"]
    return {"apiVersion": api_version, "kind": kind, "name": meta["name"], "uid": uid(owner), "controller": True, "blockOwnerDeletion": True}


def selector(obj: Obj) -> LabelSelectorExpr | None:
    """``spec.selector`` parsed; None when missing, empty or invalid: it then selects nothing."""
    wire = spec(obj).get("selector") or {}
    if not wire.get("matchLabels") and not wire.get("matchExpressions"):
        return None
    expressions = [LabelSelectorRequirement(e.get("key", ""), e.get("operator", ""), e.get("values")) for e in wire.get("matchExpressions") or ()]
    try:
        return label_selector_from_internal(LabelSelector(wire.get("matchLabels"), expressions))
    except errors.APIError:
        return None


def resolve_controller(owners: Informer, obj: Obj, ref: Obj, *, group: str, kind: str) -> Obj | None:
    """The cached owner ``ref`` points at, when it is of ``group``/``kind`` and has the same uid."""
    if ref.get("kind") != kind or ref.get("apiVersion", "").split("/")[0] != group:
        return None
    owner = owners.indexer.get(f"{obj['metadata'].get('namespace')}/{ref.get('name')}")
    return owner if owner is not None and uid(owner) == ref.get("uid") else None


def selecting(owners: Informer, obj: Obj) -> list[Obj]:
    """The cached owners in ``obj``'s namespace whose selector matches its labels."""
    namespace = obj["metadata"].get("namespace", "")
    labels = obj["metadata"].get("labels")
    found = []
    for owner in owners.lister().namespaced(namespace).list():
        chosen = selector(owner)
        if chosen is not None and chosen.matches(labels):
            found.append(owner)
    return found
