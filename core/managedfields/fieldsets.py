"""Sets of field paths in ``fieldsV1`` form, and SMD's set algebra over them.

A set is a dict from path elements to child sets: ``{}`` is an owned leaf, and a node that is
owned and has children carries ``"."``. Operations return their inputs, or sub-dicts of them,
wherever nothing changes, so sets of managers a write did not touch stay the very same dicts.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

from kplane.core.managedfields.fieldpaths import Path, pe_key

Node = dict[str, Any]  # a field set in fieldsV1 form (values are Nodes)


def is_member(node: Node) -> bool:
    """Whether the path leading to ``node`` is itself in the set."""
    return not node or "." in node


def has_kids(node: Node) -> bool:
    """Whether the set holds paths below ``node``."""
    return len(node) > 1 or (bool(node) and "." not in node)


def _kids(node: Node) -> Node:
    return {k: v for k, v in node.items() if k != "."} if "." in node else dict(node)


def _make(member: bool, kids: Node) -> Node | None:
    if not kids:
        return {} if member else None
    return {".": {}, **kids} if member else kids


def _sort_kids(kids: Node) -> Node:
    return dict(sorted(kids.items(), key=lambda kv: pe_key(kv[0])))


def sort_set(node: Node) -> Node:
    """A set built by insertion, sorted in SMD order at every level (its leaves, ``{}``, as they are)."""
    return {k: node[k] if k == "." or not node[k] else sort_set(node[k]) for k in sorted(node, key=pe_key)}


def insert(root: Node, path: Path) -> None:
    """Add ``path`` to the set ``root`` (in place; sort with :func:`sort_set` when done)."""
    node = root
    for pe in path[:-1]:
        child = node.get(pe)
        if child is None:
            child = node[pe] = {}
        elif not child:
            child["."] = {}  # an owned leaf gets children: keep it owned
        node = child
    last = path[-1]
    child = node.get(last)
    if child is None:
        node[last] = {}
    elif "." not in child and child:
        child["."] = {}


def _diff_kids(a: Node, b: Node) -> Node | None:
    """Children of ``a`` minus those of ``b``; None when nothing is taken away."""
    out = None
    for pe, bn in b.items():
        if pe == ".":
            continue
        an = a.get(pe)
        if an is None:
            continue
        new = _diff_node(an, bn)
        if new is an:
            continue
        if out is None:
            out = _kids(a)
        if new is None:
            del out[pe]
        else:
            out[pe] = new
    return out


def _diff_node(a: Node, b: Node) -> Node | None:
    """SMD ``Set.Difference`` on one node: ``a``'s members not in ``b``, recursively."""
    was_member = is_member(a)
    member = was_member and not is_member(b)
    kids = _diff_kids(a, b)
    if kids is None:
        if member == was_member:
            return a
        kids = _kids(a)
    return _make(member, kids)


def diff(a: Node, b: Node) -> Node:
    """SMD ``Set.Difference``: ``a`` without the paths of ``b``."""
    kids = _diff_kids(a, b)
    return a if kids is None else kids


def _union_kids(a: Node, b: Node) -> Node | None:
    out = None
    added = False
    for pe, bn in b.items():
        if pe == ".":
            continue
        an = a.get(pe)
        if an is None:
            new, added = bn, True
        else:
            new = union_node(an, bn)
            if new is an:
                continue
        if out is None:
            out = _kids(a)
        out[pe] = new
    return _sort_kids(out) if added and out is not None else out


def union_node(a: Node, b: Node) -> Node:
    """SMD ``Set.Union`` of two nodes, keeping whether the path itself is a member."""
    if a is b:
        return a
    was_member = is_member(a)
    member = was_member or is_member(b)
    kids = _union_kids(a, b)
    if kids is None:
        if member == was_member:
            return a
        kids = _kids(a)
    made = _make(member, kids)
    assert made is not None
    return made


def union(a: Node, b: Node) -> Node:
    """SMD ``Set.Union``, in SMD order."""
    kids = _union_kids(a, b)
    return a if kids is None else kids


def _inter_node(a: Node, b: Node) -> Node | None:
    kids = intersect(a, b)
    return _make(is_member(a) and is_member(b), kids)


def intersect(a: Node, b: Node) -> Node:
    """SMD ``Set.Intersection``, in ``a``'s order."""
    out: Node = {}
    for pe, an in a.items():
        if pe == ".":
            continue
        bn = b.get(pe)
        if bn is not None:
            new = _inter_node(an, bn)
            if new is not None:
                out[pe] = new
    return out


def iter_paths(node: Node, prefix: Path) -> Iterator[Path]:
    """Paths of a set in SMD's ``Set.Iterate`` order: a level's members, then its children."""
    for pe, child in node.items():
        if pe != "." and is_member(child):
            yield prefix + [pe]
    for pe, child in node.items():
        if pe != "." and has_kids(child):
            yield from iter_paths(child, prefix + [pe])


def set_of(paths: Iterable[str]) -> Node:
    """A set from dotted struct paths such as ``metadata.labels``."""
    root: Node = {}
    for dotted in paths:
        insert(root, ["f:" + part for part in dotted.split(".")])
    return sort_set(root)
