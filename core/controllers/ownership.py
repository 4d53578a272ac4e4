"""Owners and selectors of wire-form objects, as controllers read them from their caches."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
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


ORPHANS_INDEX = "orphans by namespace"
CONTROLLER_UID_INDEX = "controllerUID"


def _controller_uids(obj: Obj) -> list[str]:
    return [str(ref.get("uid", "")) for ref in owner_refs(obj) if ref.get("controller")]


def index_by_controller(informer: Informer) -> str:
    """The name of ``informer``'s index of objects by their controller's uid, added by the first
    controller that asks (controllers of several kinds share the pod informer)."""
    if not informer.indexer.has_indexer(CONTROLLER_UID_INDEX):
        informer.indexer.add_indexer(CONTROLLER_UID_INDEX, _controller_uids)
    return CONTROLLER_UID_INDEX


def _orphan_namespace(obj: Obj) -> list[str]:
    return [] if controller_ref(obj) is not None else [str(obj["metadata"].get("namespace", ""))]


def index_orphans(informer: Informer) -> str:
    """The name of ``informer``'s index of the objects without a controller, by namespace: with
    :func:`index_by_controller`, what a controller may claim, without looking at every object of
    the namespace (those of other controllers it leaves alone)."""
    if not informer.indexer.has_indexer(ORPHANS_INDEX):
        informer.indexer.add_indexer(ORPHANS_INDEX, _orphan_namespace)
    return ORPHANS_INDEX


def selector(obj: Obj) -> LabelSelectorExpr | None:
    """``spec.selector`` parsed; None when missing, empty or invalid: it then selects nothing.
    A ReplicationController's is a plain map of labels, read as ``matchLabels``."""
    wire = spec(obj).get("selector") or {}
    if obj.get("kind") == "ReplicationController" or not set(wire) <= {"matchLabels", "matchExpressions"}:
        wire = {"matchLabels": wire}
    if not wire.get("matchLabels") and not wire.get("matchExpressions"):
        return None
    expressions = [LabelSelectorRequirement(e.get("key", ""), e.get("operator", ""), e.get("values")) for e in wire.get("matchExpressions") or ()]
    try:
        return label_selector_from_internal(LabelSelector(wire.get("matchLabels"), expressions))
    except errors.APIError:
        return None


def controller_of(owners: Informer, obj: Obj, *, group: str, kind: str) -> Obj | None:
    """The cached controller of ``obj``, when it is of ``group``/``kind`` and has the uid its
    controller reference names (``resolveControllerRef``)."""
    ref = controller_ref(obj)
    if ref is None or ref.get("kind") != kind or ref.get("apiVersion", "").rpartition("/")[0] != group:
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


@dataclass(frozen=True, slots=True)
class Owners:
    """The owners an event about one dependent concerns, in the order they are to be synced."""

    previous: Obj | None = None  # the former controller, when the controller reference changed
    current: Obj | None = None  # the controller
    adopters: tuple[Obj, ...] = ()  # of an orphan: the owners whose selector matches it

    def __iter__(self) -> Iterator[Obj]:
        if self.previous is not None:
            yield self.previous
        if self.current is not None:
            yield self.current
        yield from self.adopters


def owners_of(owners: Informer, obj: Obj, *, group: str, kind: str) -> Owners:
    """A dependent that appeared: its controller, or, an orphan, whoever selects it (and may adopt it)."""
    if controller_ref(obj) is not None:
        return Owners(current=controller_of(owners, obj, group=group, kind=kind))
    return Owners(adopters=tuple(selecting(owners, obj)))


def owners_of_update(owners: Informer, old: Obj, new: Obj, *, group: str, kind: str) -> Owners:
    """A dependent that changed (``updatePod``, ``updateReplicaSet``): the controller it left, and
    its controller, or, an orphan whose labels or reference changed, whoever selects it now."""
    ref, old_ref = controller_ref(new), controller_ref(old)
    previous = controller_of(owners, old, group=group, kind=kind) if ref != old_ref else None
    if ref is not None:
        return Owners(previous, controller_of(owners, new, group=group, kind=kind))
    if ref != old_ref or old["metadata"].get("labels") != new["metadata"].get("labels"):
        return Owners(previous, adopters=tuple(selecting(owners, new)))
    return Owners(previous)
