"""ControllerRevision history of a StatefulSet or DaemonSet (``pkg/controller/history``).

Both controllers keep one ControllerRevision per pod template they have run: its ``data`` is the
patch that puts that template back (``{"spec": {"template": {..., "$patch": "replace"}}}``, what
``kubectl rollout undo`` applies), its name ``<owner>-<hash>``, its ``revision`` a number above
all the others'. The pods carry the hash in the ``controller-revision-hash`` label, so a
controller tells updated pods from old ones by label alone.

A template rolled back to gets its old revision renumbered rather than a copy; a hash already
taken by a different revision (a collision) is retried with ``status.collisionCount`` + 1,
which the owner then records.
"""

from __future__ import annotations

import copy
from typing import Any

import orjson

from kplane.api import ApiError, ResourceClient, controller_reference, safe_encode_string

Obj = dict[str, Any]

HASH_LABEL = "controller-revision-hash"
MAX_PREFIX = 223  # a name of 253 characters at most: prefix, dash, and a hash of up to 10


def template_patch(owner: Obj) -> Obj:
    """The revision data of ``owner``'s current template: the patch that restores it whole."""
    template = copy.deepcopy(owner["spec"]["template"])
    template["$patch"] = "replace"
    return {"spec": {"template": template}}


def revision_hash(data: Obj, collision_count: int | None = None) -> str:
    """``HashControllerRevision``: FNV-1 (32 bits) of the data's canonical JSON and of the
    collision count's decimal digits, in the safe alphabet."""
    raw = orjson.dumps(data, option=orjson.OPT_SORT_KEYS)
    if collision_count is not None:
        raw += str(collision_count).encode()
    value = 0x811C9DC5
    for byte in raw:
        value = ((value * 0x01000193) & 0xFFFFFFFF) ^ byte
    return safe_encode_string(str(value))


def revision_name(owner_name: str, hash_: str) -> str:
    return f"{owner_name[:MAX_PREFIX]}-{hash_}"


def new_revision(owner: Obj, *, api_version: str, kind: str, revision: int, collision_count: int | None = None) -> Obj:
    """``NewControllerRevision``: the revision of ``owner``'s template, labelled as its pods are
    (the template's labels and the hash), controlled by ``owner`` and annotated as it is."""
    data = template_patch(owner)
    hash_ = revision_hash(data, collision_count)
    labels = dict((owner["spec"]["template"].get("metadata") or {}).get("labels") or {})
    labels[HASH_LABEL] = hash_
    metadata: Obj = {
        "name": revision_name(owner["metadata"]["name"], hash_),
        "namespace": owner["metadata"].get("namespace"),
        "labels": labels,
        "ownerReferences": [controller_reference(owner, api_version, kind)],
    }
    if owner["metadata"].get("annotations"):
        metadata["annotations"] = dict(owner["metadata"]["annotations"])
    return {"apiVersion": "apps/v1", "kind": "ControllerRevision", "metadata": metadata, "data": data, "revision": revision}


def sort_revisions(revisions: list[Obj]) -> list[Obj]:
    """Oldest first: by number, then creation, then name (``SortControllerRevisions``)."""
    return sorted(revisions, key=lambda r: (int(r.get("revision") or 0), r["metadata"].get("creationTimestamp") or "",
                                            r["metadata"]["name"]))


def next_revision(revisions: list[Obj]) -> int:
    """One above the highest number, 1 for the first."""
    return max((int(r.get("revision") or 0) for r in revisions), default=0) + 1


def equal_revision(a: Obj, b: Obj) -> bool:
    """``EqualRevision``: the same hash label and the same data."""
    def hash_of(r: Obj) -> str | None:
        return (r["metadata"].get("labels") or {}).get(HASH_LABEL)
    return hash_of(a) == hash_of(b) and a.get("data") == b.get("data")


def find_equal(revisions: list[Obj], needle: Obj) -> list[Obj]:
    return [r for r in revisions if equal_revision(r, needle)]


class History:
    """The ControllerRevisions of one namespace, written through the API (``realHistory``)."""

    def __init__(self, revisions: ResourceClient) -> None:
        self.revisions = revisions

    async def create(self, owner: Obj, revision: Obj, collision_count: int) -> tuple[Obj, int]:
        """Create ``revision``; on a name taken by a different revision, retry with the next collision
        count. Returns the stored revision (an equal one that exists is returned as is) and the
        collision count used, which the caller records in its owner's status."""
        while True:
            hashed = copy.deepcopy(revision)
            hash_ = revision_hash(hashed["data"], collision_count)
            hashed["metadata"]["labels"][HASH_LABEL] = hash_
            hashed["metadata"]["name"] = revision_name(owner["metadata"]["name"], hash_)
            try:
                return await self.revisions.create(hashed), collision_count
            except ApiError as err:
                if err.code != 409:
                    raise
            existing = await self.revisions.get(hashed["metadata"]["name"])
            if existing.get("data") == hashed["data"]:
                return existing, collision_count
            collision_count += 1

    async def renumber(self, revision: Obj, number: int) -> Obj:
        """Give an existing revision a new number (the template it holds is current again)."""
        if int(revision.get("revision") or 0) == number:
            return revision
        updated = copy.deepcopy(revision)
        updated["revision"] = number
        return await self.revisions.update(updated)

    async def delete(self, revision: Obj) -> None:
        try:
            await self.revisions.delete(revision["metadata"]["name"])
        except ApiError as err:
            if err.code != 404:
                raise

    async def truncate(self, revisions: list[Obj], live: set[str], limit: int) -> None:
        """Delete the oldest revisions beyond ``limit`` that no live pod or current state uses
        (``live`` holds the names to keep)."""
        old = [r for r in sort_revisions(revisions) if r["metadata"]["name"] not in live]
        for revision in old[:max(0, len(old) - limit)]:
            await self.delete(revision)
