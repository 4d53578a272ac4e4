"""Walks over objects along their field types: compare, field set, merge and prune.

These are SMD's ``TypedValue`` operations (``Compare``, ``ToFieldSet``, ``Merge`` and the
pruning of fields an applier stopped applying) on wire-format dicts. They share unchanged
subtrees with their inputs and skip subtrees both sides share.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

from kplane.core.managedfields.fieldpaths import Path, TypedError, index_items, item_pe, pe_key, pe_text, path_text
from kplane.core.managedfields.fieldsets import Node, has_kids, insert, is_member, sort_set
from kplane.core.managedfields.fieldtypes import (
    ASSOC, ATOMIC, LEAVES, MAP, MISSING, SET, STRUCT, FieldType, effective, is_value_struct,
)
from kplane.core.runtime.gojson import json_equal

Skip = dict[str, Any]  # field name -> None (skip the field) or a nested Skip


def skip_tree(paths: Iterable[str]) -> Skip:
    """Dotted struct paths (``metadata.managedFields``) as the tree the walks consult key by key
    (made once per set of paths: a write's are its kind's; the walks only read it)."""
    return _skip_tree(tuple(paths))


@lru_cache(maxsize=256)
def _skip_tree(paths: tuple[str, ...]) -> Skip:
    tree: Skip = {}
    for dotted in paths:
        node = tree
        *parents, last = dotted.split(".")
        for part in parents:
            if part in node and node[part] is None:
                break  # an ancestor is skipped whole already
            node = node.setdefault(part, {})
        else:
            node[last] = None
    return tree


@dataclass(slots=True)
class Comparison:
    """SMD's ``Comparison``: fields added, modified and removed by the right-hand object."""

    added: Node
    modified: Node
    removed: Node

    def changed(self) -> bool:
        return bool(self.added or self.modified or self.removed)


def _compare(l: Any, r: Any, t: FieldType, path: Path, c: Comparison, mark: bool, skip: Skip | None) -> None:
    """SMD ``TypedValue.Compare``; subtrees shared by both objects are not visited."""
    if l is r:
        return
    kind, t = effective(t, r if r is not MISSING else l)
    if l is not MISSING and r is not MISSING and effective(t, l)[0] != kind:
        kind = ATOMIC
    if kind in LEAVES:
        _compare_leaf(l, r, path, c)
        return
    if kind in (STRUCT, MAP):
        ld = l if isinstance(l, dict) else None
        rd = r if isinstance(r, dict) else None
        if not ld and not rd:
            _compare_leaf(l, r, path, c)
            return
        ld, rd = ld or {}, rd or {}
        for key in ld.keys() | rd.keys() if ld and rd else ld or rd:  # order does not matter: sets are sorted after
            sub = None
            if skip is not None and key in skip:
                sub = skip[key]
                if sub is None:
                    continue
            lv, rv = ld.get(key, MISSING), rd.get(key, MISSING)
            if lv is rv:
                continue
            ct = t.member(key)
            path.append("f:" + key)
            _compare(lv, rv, ct, path, c, not is_value_struct(kind, ct), sub)
            path.pop()
    else:
        ll = l if isinstance(l, list) else None
        rl = r if isinstance(r, list) else None
        if not ll and not rl:
            _compare_leaf(l, r, path, c)
            return
        _compare_items(index_items(ll or [], t, path), index_items(rl or [], t, path), t.item, path, c)
    if mark and path:
        if l is MISSING:
            insert(c.added, path)
        elif r is MISSING:
            insert(c.removed, path)


def _compare_leaf(l: Any, r: Any, path: Path, c: Comparison) -> None:
    if l is MISSING:
        insert(c.added, path)
    elif r is MISSING:
        insert(c.removed, path)
    elif not json_equal(l, r):
        insert(c.modified, path)


def _compare_items(
    left: dict[str, list[Any]], right: dict[str, list[Any]], elem: FieldType, path: Path, c: Comparison
) -> None:
    """Items matched by key; duplicated keys are compared as SMD does (as a whole)."""
    for pe in [*left, *(pe for pe in right if pe not in left)]:
        li, ri = left.get(pe, ()), right.get(pe, ())
        path.append(pe)
        if len(li) <= 1 and len(ri) <= 1:
            _compare(li[0] if li else MISSING, ri[0] if ri else MISSING, elem, path, c, True, None)
        elif len(li) >= 2 and len(ri) >= 2:
            if not json_equal(list(li), list(ri)):
                insert(c.modified, path)
        elif len(li) >= 2:
            if ri:
                _compare(MISSING, ri[0], elem, path, c, True, None)
            insert(c.removed, path)
        else:
            if li:
                _compare(li[0], MISSING, elem, path, c, True, None)
            insert(c.added, path)
        path.pop()


def compare_objects(old: dict[str, Any], new: dict[str, Any], root: FieldType, skip: Skip) -> Comparison:
    """What ``new`` added, modified and removed relative to ``old`` (sets sorted), skipping ``skip``."""
    c = Comparison({}, {}, {})
    _compare(old, new, root, [], c, False, skip)
    return Comparison(sort_set(c.added), sort_set(c.modified), sort_set(c.removed))


def changed_set(old: dict[str, Any], new: dict[str, Any], root: FieldType, skip: Skip) -> Node:
    """The fields ``new`` added or modified relative to ``old``: ``union(c.modified, c.added)``
    of :func:`compare_objects`, built in one walk, each level sorted as it is made. What a
    write owns when no other entry can lose fields to it (a create): its removals do not matter."""
    return _changed(old, new, root, [], False, skip) or {}


def _changed(l: Any, r: Any, t: FieldType, path: Path, mark: bool, skip: Skip | None) -> Node | None:
    """The node at ``path`` of the changed set (None: nothing there), as :func:`_compare` would
    insert it into ``added`` or ``modified``."""
    if l is r:
        return None
    kind, t = effective(t, r if r is not MISSING else l)
    if l is not MISSING and r is not MISSING and effective(t, l)[0] != kind:
        kind = ATOMIC
    if kind in LEAVES:
        return _changed_leaf(l, r)
    kids: Node = {}
    if kind in (STRUCT, MAP):
        ld = l if isinstance(l, dict) else None
        rd = r if isinstance(r, dict) else None
        if not ld and not rd:
            return _changed_leaf(l, r)
        ld, rd = ld or {}, rd or {}
        for key in ld.keys() | rd.keys() if ld and rd else ld or rd:
            sub = None
            if skip is not None and key in skip:
                sub = skip[key]
                if sub is None:
                    continue
            lv, rv = ld.get(key, MISSING), rd.get(key, MISSING)
            if lv is rv:
                continue
            ct = t.member(key)
            path.append("f:" + key)
            node = _changed(lv, rv, ct, path, not is_value_struct(kind, ct), sub)
            path.pop()
            if node is not None:
                kids["f:" + key] = node
    else:
        ll = l if isinstance(l, list) else None
        rl = r if isinstance(r, list) else None
        if not ll and not rl:
            return _changed_leaf(l, r)
        _changed_items(index_items(ll or [], t, path), index_items(rl or [], t, path), t.item, path, kids)
    member = mark and bool(path) and l is MISSING
    if not kids:
        return {} if member else None
    ordered = dict(sorted(kids.items(), key=lambda kv: pe_key(kv[0]))) if len(kids) > 1 else kids
    return {".": {}, **ordered} if member else ordered


def _changed_leaf(l: Any, r: Any) -> Node | None:
    if l is MISSING:
        return {}
    if r is MISSING or json_equal(l, r):
        return None
    return {}


def _changed_items(left: dict[str, list[Any]], right: dict[str, list[Any]], elem: FieldType, path: Path, kids: Node) -> None:
    """:func:`_compare_items`' additions and modifications, into ``kids``."""
    for pe in [*left, *(pe for pe in right if pe not in left)]:
        li, ri = left.get(pe, ()), right.get(pe, ())
        node: Node | None = None
        path.append(pe)
        if len(li) <= 1 and len(ri) <= 1:
            node = _changed(li[0] if li else MISSING, ri[0] if ri else MISSING, elem, path, True, None)
        elif len(li) >= 2 and len(ri) >= 2:
            node = None if json_equal(list(li), list(ri)) else {}
        elif len(li) >= 2:
            node = _changed(MISSING, ri[0], elem, path, True, None) if ri else None
        else:
            if li:  # only loses fields, but its walk finds the same errors
                _changed(li[0], MISSING, elem, path, True, None)
            node = {}  # duplicates added: the item is owned as a whole
        path.pop()
        if node is not None:
            kids[pe] = node


def to_set(v: Any, t: FieldType, path: Path, out: Node, errors: list[str]) -> None:
    """SMD ``ToFieldSet`` of an applied configuration, validating its list keys on the way."""
    kind, t = effective(t, v)
    if kind in LEAVES:
        insert(out, path)
    elif kind in (STRUCT, MAP):
        if not isinstance(v, dict):
            return
        for key, cv in v.items():
            path.append("f:" + key)
            to_set(cv, t.member(key), path, out, errors)
            if kind == MAP or cv is None or (isinstance(cv, dict) and not cv):
                insert(out, path)
            path.pop()
    elif isinstance(v, list):
        elem = t.item
        seen: set[str] = set()
        for i, item in enumerate(v):
            try:
                pe = item_pe(item, t, path, i)
            except TypedError as err:
                errors.append(str(err))
                continue
            if pe in seen:
                errors.append(f"{path_text(path)}: duplicate entries for key {pe_text(pe)}")
                continue
            seen.add(pe)
            path.append(pe)
            to_set(item, elem, path, out, errors)
            insert(out, path)
            path.pop()


def merge(l: Any, r: Any, t: FieldType, path: Path) -> Any:
    """SMD ``TypedValue.Merge``: the applied value ``r`` over the live value ``l``."""
    if l is MISSING:
        return r
    kind, t = effective(t, r)
    if kind in LEAVES:
        return r
    if kind in (STRUCT, MAP):
        if not isinstance(r, dict):  # null over a granular value leaves it alone
            return l if isinstance(l, dict) and l else r
        if not isinstance(l, dict) or (not l and not r):
            return r
        out = dict(l)
        for key, rv in r.items():
            path.append("f:" + key)
            out[key] = merge(l.get(key, MISSING), rv, t.member(key), path)
            path.pop()
        return out
    if not isinstance(r, list):
        return l if isinstance(l, list) and l else r
    if not isinstance(l, list) or (not l and not r):
        return r
    return _merge_items(l, r, t, path)


_DUPLICATE: Any = object()


def _merge_items(l: list[Any], r: list[Any], t: FieldType, path: Path) -> list[Any]:
    """Merge two keyed lists: the applied order wins for shared items, live-only items stay put."""
    elem = t.item
    lpes = [item_pe(item, t, path, i) for i, item in enumerate(l)]
    rpes = [item_pe(item, t, path, i) for i, item in enumerate(r)]
    lmap: dict[str, Any] = {}
    for pe, item in zip(lpes, l):
        lmap[pe] = _DUPLICATE if pe in lmap else item  # duplicates are not merged with the new value
    rmap = dict(zip(rpes, r))
    shared = [pe for pe in rpes if pe in lmap]
    out: list[Any] = []
    merged: set[str] = set()
    si = li = ri = 0

    def merge_one(pe: str) -> None:
        lv = lmap.get(pe, MISSING)
        path.append(pe)
        out.append(merge(MISSING if lv is _DUPLICATE else lv, rmap[pe], elem, path))
        path.pop()

    while li < len(lpes) or ri < len(rpes):
        if li < len(lpes) and ri < len(rpes):
            pe = lpes[li]
            if pe == rpes[ri]:
                merged.add(pe)
                merge_one(pe)
                li, ri, si = li + 1, ri + 1, si + 1
                continue
            if pe in rmap and si < len(shared) and shared[si] != pe:
                li += 1  # a shared item, but not the next one in the applied order
                continue
        if li < len(lpes):
            pe = lpes[li]
            if pe not in rmap:
                out.append(l[li])
                li += 1
                continue
            if pe in merged:
                li += 1
        if ri < len(rpes):
            pe = rpes[ri]
            merged.add(pe)
            merge_one(pe)
            ri += 1
            if si < len(shared) and shared[si] == pe:
                si += 1
    return out


_GONE: Any = object()


def prune(v: Any, t: FieldType, last: Node, owners: list[Node], doomed: bool) -> Any:
    """SMD's prune: drop what this applier applied last time, does not apply now, and nobody owns.

    Equivalent to SMD's three passes (RemoveItems, addBackOwnedItems, addBackDanglingItems):
    a path of the previous apply set goes when it, or one of its ancestors, is present in the
    object but owned by nobody (struct fields count as owned when anything below them is).
    Containers emptied by the removal go too.
    """
    kind, t = effective(t, v)
    if kind in (STRUCT, MAP) and isinstance(v, dict):
        named = kind == STRUCT
        out = None
        for pe, lnode in last.items():
            if not pe.startswith("f:") or pe[2:] not in v:
                continue
            key = pe[2:]
            cv = v[key]
            ct = t.member(key)
            new = _prune_child(cv, ct, pe, named, lnode, owners, doomed)
            if new is cv:
                continue
            if out is None:
                out = dict(v)
            if new is _GONE or not new:
                del out[key]
            else:
                out[key] = new
        return v if out is None else out
    if kind in (ASSOC, SET) and isinstance(v, list):
        elem = t.item
        items = []
        changed = False
        for i, item in enumerate(v):
            try:
                pe = item_pe(item, t, (), i)
            except TypedError:
                items.append(item)
                continue
            lnode = last.get(pe)
            new = item if lnode is None else _prune_child(item, elem, pe, False, lnode, owners, doomed)
            if new is item:
                items.append(item)
                continue
            changed = True
            if new is not _GONE and new:
                items.append(new)
        return items if changed else v
    return v


def _prune_child(cv: Any, ct: FieldType, pe: str, named: bool, lnode: Node, owners: list[Node], doomed: bool) -> Any:
    """One field or item of the previous apply set: gone, pruned inside, or kept."""
    owned = False
    below: list[Node] = []
    for owner in owners:
        onode = owner.get(pe)
        if onode is not None:
            owned = owned or named or is_member(onode)  # SMD's EnsureNamedFieldsAreMembers
            if has_kids(onode):
                below.append(onode)
    doomed = doomed or not owned
    if doomed and (named or is_member(lnode)):
        return _GONE
    return prune(cv, ct, lnode, below, doomed) if has_kids(lnode) else cv


def drop_paths(obj: dict[str, Any], skip: Skip) -> dict[str, Any]:
    """``obj`` without the given struct paths (copying only the dicts on the way)."""
    out = None
    for key, sub in skip.items():
        if key not in obj:
            continue
        if sub is None:
            new = _GONE
        elif isinstance(obj[key], dict):
            new = drop_paths(obj[key], sub)
            if new is obj[key]:
                continue
        else:
            continue
        if out is None:
            out = dict(obj)
        if new is _GONE:
            del out[key]
        else:
            out[key] = new
    return obj if out is None else out


def has_null(v: Any) -> bool:
    """Whether an applied value holds an explicit ``null`` anywhere."""
    if v is None:
        return True
    if isinstance(v, dict):
        return any(has_null(x) for x in v.values())
    if isinstance(v, list):
        return any(has_null(x) for x in v)
    return False


def _without_nulls(v: Any) -> Any:
    """``null`` means "not set" once the apply is done, as when Go decodes the merged object."""
    if isinstance(v, dict):
        return {k: _without_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_without_nulls(x) for x in v]
    return v


def strip_nulls(merged: Any, applied: Any) -> Any:
    """Remove the nulls an applied configuration brought in, following only its paths."""
    if isinstance(merged, dict) and isinstance(applied, dict):
        out = None
        for key, av in applied.items():
            if key not in merged or not has_null(av):
                continue
            mv = merged[key]
            new = _GONE if mv is None else strip_nulls(mv, av)
            if new is mv:
                continue
            if out is None:
                out = dict(merged)
            if new is _GONE:
                del out[key]
            else:
                out[key] = new
        return merged if out is None else out
    if isinstance(merged, list) and has_null(merged):
        return _without_nulls(merged)
    return merged
