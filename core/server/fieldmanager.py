"""Field ownership: ``metadata.managedFields`` and server-side apply, as pure functions.

This is kube-apiserver's fieldmanager (``k8s.io/apimachinery/pkg/util/managedfields``) on top of
structured-merge-diff (SMD), working on wire-format JSON dicts and driven by our compiled schemas.

Field sets are kept in the ``fieldsV1`` form itself: a dict from path elements to child sets,
``{"f:spec": {"f:replicas": {}}}``. An empty dict is an owned leaf; a node that is owned and has
children carries a ``"."`` key, as SMD serializes it. Path elements are ``f:<field>``,
``k:<json of the key fields, sorted>`` for an associative-list item, ``v:<json>`` for a set item.
Sets are kept sorted the way SMD orders them, so they serialize as kube-apiserver writes them,
and entries this write did not touch are passed through as the very same dicts.

How a schema field is typed (SMD's "atom"):

* a nested schema is a struct; a bare ``fields.Dict()`` stands for a Go struct the schema does
  not spell out: its keys are fields, its dict values are structs again and its lists atomic;
  ``fields.Raw()`` and keys missing from the schema take their type from the value the same way;
* a Dict with a value type (``StrMap``, quantities, a MAP of schemas) is a map;
* a list with ``list_type: "map"`` (or a merge strategy with a merge key) is an associative list
  keyed by ``list_map_keys`` (default ``[patch_merge_key]``); a key field missing from an item
  takes the item schema's ``metadata["default"]`` (as SMD uses OpenAPI defaults for
  ``protocol: TCP``); a list of scalars with ``list_type: "set"`` (or a merge strategy) is a set;
  any other list is atomic, and so is a Nested/Dict field whose metadata says
  ``map_type: "atomic"`` (``x-kubernetes-map-type``, e.g. ``LabelSelector`` in Kubernetes).

Results share unchanged sub-objects with their inputs (nothing is deep-copied): treat inputs and
results as read-only.

What Go's types say and JSON does not, schema metadata says: a nested schema held in a struct
field is a Go value struct (an Update never owns its ``.``) unless the field's metadata says
``pointer: True`` (``rollingUpdate``); a bare Dict is taken as a pointer struct (it owns its
``.``); a field Go writes when unset says ``omitempty: False`` (``containers``), so that a
create compares with the empty object as Go writes it (``kplane.core.runtime.schema.zero_object``). Where this differs from kube-apiserver:
every manager's set is read against the one schema given (no conversion between API versions).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime
from functools import lru_cache
from typing import Any

import orjson
from marshmallow import fields as mfields

from kplane.core.meta.errors import APIError, StatusReason, bad_request
from kplane.core.runtime.schema import LIST, MAP, ONE, FieldShape, Schema, Shape, shape_of, zero_object
from kplane.core.server.patch import go_json_type, json_equal

__all__ = [
    "ApplyConflict",
    "Conflict",
    "apply",
    "check_apply_body",
    "conflict_error",
    "default_ignored",
    "default_manager",
    "managed_fields_after_update",
]

FIELD_MANAGER_MAX_LENGTH = 128
MAX_UPDATE_MANAGERS = 10  # capManagersManager: older Update entries are merged beyond this
BEFORE_FIRST_APPLY = "before-first-apply"
ANCIENT_CHANGES = "ancient-changes"
LAST_APPLIED = "kubectl.kubernetes.io/last-applied-configuration"
UPGRADING_MANAGER = "kubectl"  # the one apply manager that takes over from client-side apply
ANNOTATIONS_SIZE_LIMIT = 256 * 1024  # TotalAnnotationSizeLimitB

Node = dict[str, Any]  # a field set in fieldsV1 form (values are Nodes)
Path = list[str]
_Id = tuple[str, str, str, str]  # manager identifier: manager, operation, apiVersion (Update only), subresource


class _Missing:
    """An absent field (not the same as an explicit ``null``)."""

    def __repr__(self) -> str:
        return "MISSING"


_MISSING: Any = _Missing()

# -- types ----------------------------------------------------------------------------------------

_SCALAR, _ATOMIC, _STRUCT, _MAP, _ASSOC, _SET, _UNTYPED = range(7)
_LEAVES = (_SCALAR, _ATOMIC)


class _T:
    """How SMD sees one field: kind, plus the struct's schema, the element type or list keys."""

    __slots__ = ("kind", "shape", "elem", "keys", "sorted_keys", "pointer", "_fields", "_zero")

    def __init__(
        self,
        kind: int,
        shape: Shape | None = None,
        elem: _T | None = None,
        keys: tuple[str, ...] = (),
        defaults: tuple[Any, ...] = (),
        pointer: bool = False,
    ) -> None:
        self.kind = kind
        self.pointer = pointer  # a struct a Go pointer field holds: it can be absent, so owned as a whole too
        self.shape = shape
        self.elem = elem
        self.keys = keys  # associative list keys, as declared
        # (quoted name + ":", name, default or _MISSING), by name: how an item's key is written
        entries = ((_go_json(k) + ":", k, d) for k, d in zip(keys, defaults))
        self.sorted_keys = tuple(sorted(entries, key=lambda e: e[1]))
        self._fields: dict[str, _T] | None = None
        self._zero: dict[str, Any] | None = None

    def field(self, key: str) -> _T:
        """The type of one struct field; undeclared fields are typed by their value."""
        if self.shape is None:
            return _UNTYPED_T
        fields = self._fields
        if fields is None:
            fields = self._fields = {k: _type_of_field(fs) for k, fs in self.shape.by_key.items()}
        return fields.get(key, _UNTYPED_T)

    def member(self, key: str) -> _T:
        """The type under ``key``: a map's value type, else the struct field's."""
        if self.kind == _MAP:
            return self.item
        return self.field(key)

    @property
    def item(self) -> _T:
        """The element type of a map or list."""
        assert self.elem is not None
        return self.elem


_SCALAR_T = _T(_SCALAR)
_ATOMIC_T = _T(_ATOMIC)
_UNTYPED_T = _T(_UNTYPED)
_BARE = _T(_STRUCT)  # a struct the schema does not describe
_structs: dict[tuple[int, bool], _T] = {}


def _struct(shape: Shape, pointer: bool = False) -> _T:
    t = _structs.get((id(shape), pointer))
    if t is None:
        t = _structs[(id(shape), pointer)] = _T(_STRUCT, shape, pointer=pointer)
    return t


def _list_type(md: Mapping[str, Any], elem: _T) -> _T:
    list_type = md.get("list_type")
    merge = "merge" in (md.get("patch_strategy") or "").split(",")
    keys = tuple(md.get("list_map_keys") or ([md["patch_merge_key"]] if md.get("patch_merge_key") else ()))
    if list_type == "map" or (list_type is None and merge and keys):
        if not keys:
            return _ATOMIC_T
        item = _BARE if elem.kind == _UNTYPED else elem
        if item.kind != _STRUCT:
            return _ATOMIC_T
        defaults = tuple(_key_default(item, key) for key in keys)
        return _T(_ASSOC, elem=item, keys=keys, defaults=defaults)
    if (list_type == "set" or (list_type is None and merge)) and elem.kind in (_SCALAR, _UNTYPED):
        return _T(_SET, elem=_SCALAR_T)
    return _ATOMIC_T


def _key_default(item: _T, key: str) -> Any:
    fs = item.shape.by_key.get(key) if item.shape is not None else None
    return fs.field.metadata.get("default", _MISSING) if fs is not None else _MISSING


def _type_of_field(fs: FieldShape) -> _T:
    md = fs.field.metadata
    if md.get("map_type") == "atomic":
        return _ATOMIC_T
    if fs.child is not None:
        if fs.container == ONE:
            return _struct(fs.child, bool(md.get("pointer")))
        if fs.container == MAP:
            return _T(_MAP, elem=_struct(fs.child))
        assert fs.container == LIST
        return _list_type(md, _struct(fs.child))
    return _type_of_marshmallow(fs.field)


def _type_of_marshmallow(f: mfields.Field[Any]) -> _T:
    md = f.metadata
    if md.get("map_type") == "atomic":
        return _ATOMIC_T
    if isinstance(f, mfields.Nested):
        schema = f.schema
        assert isinstance(schema, Schema)
        inner = _struct(shape_of(schema))
        return _list_type(md, inner) if f.many else inner
    if isinstance(f, mfields.List):
        return _list_type(md, _type_of_marshmallow(f.inner))
    if isinstance(f, mfields.Dict):
        return _BARE if f.value_field is None else _T(_MAP, elem=_type_of_marshmallow(f.value_field))
    if isinstance(f, mfields.Raw):
        return _UNTYPED_T
    return _SCALAR_T


def _eff(t: _T, v: Any) -> tuple[int, _T]:
    """The kind a value is handled as: untyped values by their JSON type, mismatches as leaves."""
    kind = t.kind
    if kind == _UNTYPED:
        if isinstance(v, dict):
            return _STRUCT, _BARE
        return (_ATOMIC if isinstance(v, list) else _SCALAR), t
    if v is None or v is _MISSING:
        return kind, t
    if kind in (_STRUCT, _MAP):
        return (kind if isinstance(v, dict) else _ATOMIC), t
    if kind in (_ASSOC, _SET):
        return (kind if isinstance(v, list) else _ATOMIC), t
    return kind, t


def _is_value_struct(parent_kind: int, t: _T) -> bool:
    """A schema struct held as a struct field, not as a pointer: never absent in Go, so it
    never owns a ``.``."""
    return parent_kind == _STRUCT and t.kind == _STRUCT and t.shape is not None and not t.pointer


def _zero(t: _T) -> dict[str, Any]:
    """The empty object as Go serializes it (``Creater.New``), the old side of a create: value
    structs are there and so are the fields Go always writes (``containers: null``), as the
    encoder writes them (``zero_object``). A write then owns ``containers``' items, not the list."""
    if t._zero is None:
        assert t.shape is not None
        t._zero = zero_object(t.shape)
    return t._zero


# -- path elements --------------------------------------------------------------------------------


_UNSAFE = re.compile("[<>&\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def _go_json(value: Any) -> str:
    """JSON the way Go's encoding/json writes it (HTML-safe escapes, sorted map keys)."""
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text


def _key_pe(pairs: Iterable[tuple[str, Any]]) -> str:
    """``k:{"containerPort":80,"protocol":"TCP"}``: key fields sorted by name, compact JSON."""
    ordered = sorted(pairs, key=lambda p: p[0])
    return "k:{" + ",".join(_go_json(name) + ":" + _go_json(value) for name, value in ordered) + "}"


class _TypedError(Exception):
    """An object that does not fit its schema's list semantics (SMD's ValidationError)."""

    def __init__(self, path: Sequence[str], message: str) -> None:
        super().__init__(f"{_path_text(path)}: {message}")


# Path elements of list items, memoized for the length of one public call: every pass (merge,
# prune, compare) keys the same items again. Entries hold the item, so its id cannot be reused.
_item_pes: dict[tuple[int, int], tuple[Any, str]] = {}


def _item_pe(item: Any, t: _T, path: Sequence[str], index: int) -> str:
    memo = (id(item), id(t))
    hit = _item_pes.get(memo)
    if hit is not None and hit[0] is item:
        return hit[1]
    pe = _set_item_pe(item, path, index) if t.kind == _SET else _keyed_item_pe(item, t, path, index)
    _item_pes[memo] = (item, pe)
    return pe


def _set_item_pe(item: Any, path: Sequence[str], index: int) -> str:
    if isinstance(item, dict):
        raise _TypedError(path, f"element {index}: associative list without keys has an element that's a map type")
    if isinstance(item, list):
        raise _TypedError(path, f"element {index}: not supported: associative list with lists as elements")
    if item is None:
        raise _TypedError(
            path, f"element {index}: associative list without keys has an element that's an explicit null"
        )
    return "v:" + _go_json(item)


def _keyed_item_pe(item: Any, t: _T, path: Sequence[str], index: int) -> str:
    if item is None:
        raise _TypedError(path, f"element {index}: associative list with keys may not have a null element")
    if not isinstance(item, dict):
        raise _TypedError(path, f"element {index}: associative list with keys may not have non-map elements")
    parts = []
    for quoted, key, default in t.sorted_keys:  # already in name order, names already quoted
        value = item.get(key, _MISSING)
        if value is _MISSING:
            value = default
            if value is _MISSING:
                continue
        parts.append(quoted + _go_json(value))
    if not parts:
        listed = "[" + " ".join(_go_json(k) for k in t.keys) + "]"
        raise _TypedError(
            path,
            f"element {index}: associative list with keys has an element that omits all key fields {listed} "
            "(and doesn't have default values for any key fields)",
        )
    return "k:{" + ",".join(parts) + "}"


def _index(items: list[Any], t: _T, path: Sequence[str]) -> dict[str, list[Any]]:
    """List items by path element, duplicates kept together in order."""
    out: dict[str, list[Any]] = {}
    for i, item in enumerate(items):
        out.setdefault(_item_pe(item, t, path, i), []).append(item)
    return out


def _value_key(v: Any) -> tuple[Any, ...]:
    """SMD's total order of values: numbers, strings, bools, lists, maps, null."""
    if isinstance(v, bool):
        return (2, v)
    if isinstance(v, (int, float)):
        return (0, v)
    if isinstance(v, str):
        return (1, v)
    if isinstance(v, list):
        return (3, tuple(_value_key(x) for x in v))
    if isinstance(v, dict):
        return (4, tuple((k, _value_key(v[k])) for k in sorted(v)))
    return (5,)


@lru_cache(maxsize=16384)
def _pe_key(pe: str) -> tuple[Any, ...]:
    """Sort key of a path element: ``.`` first, then fields, keys, values, indices (SMD order)."""
    if pe == ".":
        return (-1,)
    kind, body = pe[:2], pe[2:]
    if kind == "f:":
        return (0, body)
    if kind == "k:":
        return (1, tuple((k, _value_key(v)) for k, v in orjson.loads(body).items()))
    if kind == "v:":
        return (2, _value_key(orjson.loads(body)))
    return (3, int(body))


def _go_value_text(v: Any) -> str:
    """``value.ToString``: how SMD prints a key value in a path."""
    if v is None:
        return "null"
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        text = repr(v)
        return text[:-2] if text.endswith(".0") else text
    if isinstance(v, str):
        return orjson.dumps(v).decode()
    if isinstance(v, list):
        return "[" + ",".join(_go_value_text(x) for x in v) + "]"
    return "".join(f"{k}={_go_value_text(x)}" for k, x in v.items())


def _pe_text(pe: str) -> str:
    kind, body = pe[:2], pe[2:]
    if kind == "f:":
        return "." + body
    if kind == "k:":
        return "[" + ",".join(f"{k}={_go_value_text(v)}" for k, v in orjson.loads(body).items()) + "]"
    if kind == "v:":
        return "[=" + _go_value_text(orjson.loads(body)) + "]"
    return "[" + body + "]"


def _path_text(path: Sequence[str]) -> str:
    """``.spec.template.spec.containers[name="nginx"].image``, as ``fieldpath.Path.String``."""
    return "".join(_pe_text(pe) for pe in path)


class _BadManagedFields(Exception):
    """managedFields that cannot be decoded (kube-apiserver then falls back or fails)."""


@lru_cache(maxsize=4096)
def _canonical_pe(pe: str) -> str | None:
    """A client-written path element in canonical form; None for element types SMD skips."""
    if len(pe) < 2:
        raise _BadManagedFields("key must be 2 characters long:")
    if pe[1] != ":":
        raise _BadManagedFields(f"missing colon: {pe}")
    kind, body = pe[0], pe[2:]
    try:
        if kind == "f":
            return pe
        if kind == "k":
            obj = orjson.loads(body)
            if not isinstance(obj, dict):
                raise _BadManagedFields(f"parsing key as path element: {pe}")
            return _key_pe(obj.items())
        if kind == "v":
            return "v:" + _go_json(orjson.loads(body))
        if kind == "i":
            return f"i:{int(body)}"
    except (orjson.JSONDecodeError, ValueError) as err:
        raise _BadManagedFields(f"parsing key as path element: {err}") from err
    return None


def _canonical(node: Any) -> Node:
    """A client-written fieldsV1 value, validated, canonicalized and sorted."""
    if not isinstance(node, dict):
        raise _BadManagedFields("fieldsV1 must be a JSON object")
    out: Node = {}
    member = False
    for key, child in node.items():
        if key == ".":
            member = True
            continue
        pe = _canonical_pe(key)
        if pe is None:
            continue
        sub = _canonical(child)
        out[pe] = _union_node(out[pe], sub) if pe in out else sub
    if member and out:
        out["."] = {}
    return _sorted(out)


# -- field sets (fieldsV1 form) ---------------------------------------------------------------------


def _is_member(node: Node) -> bool:
    return not node or "." in node


def _has_kids(node: Node) -> bool:
    return len(node) > 1 or (bool(node) and "." not in node)


def _kids(node: Node) -> Node:
    return {k: v for k, v in node.items() if k != "."} if "." in node else dict(node)


def _make(member: bool, kids: Node) -> Node | None:
    if not kids:
        return {} if member else None
    return {".": {}, **kids} if member else kids


def _sort_kids(kids: Node) -> Node:
    return dict(sorted(kids.items(), key=lambda kv: _pe_key(kv[0])))


def _sorted(node: Node) -> Node:
    """A set built by insertion, sorted in SMD order at every level."""
    return {k: (v if k == "." else _sorted(v)) for k, v in sorted(node.items(), key=lambda kv: _pe_key(kv[0]))}


def _insert(root: Node, path: Path) -> None:
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
    was_member = _is_member(a)
    member = was_member and not _is_member(b)
    kids = _diff_kids(a, b)
    if kids is None:
        if member == was_member:
            return a
        kids = _kids(a)
    return _make(member, kids)


def _diff(a: Node, b: Node) -> Node:
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
            new = _union_node(an, bn)
            if new is an:
                continue
        if out is None:
            out = _kids(a)
        out[pe] = new
    return _sort_kids(out) if added and out is not None else out


def _union_node(a: Node, b: Node) -> Node:
    if a is b:
        return a
    was_member = _is_member(a)
    member = was_member or _is_member(b)
    kids = _union_kids(a, b)
    if kids is None:
        if member == was_member:
            return a
        kids = _kids(a)
    made = _make(member, kids)
    assert made is not None
    return made


def _union(a: Node, b: Node) -> Node:
    kids = _union_kids(a, b)
    return a if kids is None else kids


def _inter_node(a: Node, b: Node) -> Node | None:
    kids = _inter(a, b)
    return _make(_is_member(a) and _is_member(b), kids)


def _inter(a: Node, b: Node) -> Node:
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


def _iter_paths(node: Node, prefix: Path) -> Iterator[Path]:
    """Paths of a set in SMD's ``Set.Iterate`` order: a level's members, then its children."""
    for pe, child in node.items():
        if pe != "." and _is_member(child):
            yield prefix + [pe]
    for pe, child in node.items():
        if pe != "." and _has_kids(child):
            yield from _iter_paths(child, prefix + [pe])


def _set_of(paths: Iterable[str]) -> Node:
    """A set from dotted struct paths such as ``metadata.labels``."""
    root: Node = {}
    for dotted in paths:
        _insert(root, ["f:" + part for part in dotted.split(".")])
    return _sorted(root)


# Never tracked (stripMetaManager); also never pruned, so an apply cannot delete system metadata.
_STRIPPED = (
    "apiVersion",
    "kind",
    "metadata.name",
    "metadata.namespace",
    "metadata.creationTimestamp",
    "metadata.selfLink",
    "metadata.uid",
    "metadata.clusterName",
    "metadata.generation",
    "metadata.managedFields",
    "metadata.resourceVersion",
)
_PROTECTED = _set_of(_STRIPPED)
_STRIP = _union(_PROTECTED, {"f:metadata": {}})  # ``metadata`` itself is stripped too, not its children


# -- walks over objects ---------------------------------------------------------------------------

Skip = dict[str, Any]  # field name -> None (skip the field) or a nested Skip


def _skip_tree(paths: Iterable[str]) -> Skip:
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
class _Comparison:
    """SMD's ``Comparison``: fields added, modified and removed by the right-hand object."""

    added: Node
    modified: Node
    removed: Node

    def changed(self) -> bool:
        return bool(self.added or self.modified or self.removed)


def _compare(l: Any, r: Any, t: _T, path: Path, c: _Comparison, mark: bool, skip: Skip | None) -> None:
    """SMD ``TypedValue.Compare``; subtrees shared by both objects are not visited."""
    if l is r:
        return
    kind, t = _eff(t, r if r is not _MISSING else l)
    if l is not _MISSING and r is not _MISSING and _eff(t, l)[0] != kind:
        kind = _ATOMIC
    if kind in _LEAVES:
        _compare_leaf(l, r, path, c)
        return
    if kind in (_STRUCT, _MAP):
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
            lv, rv = ld.get(key, _MISSING), rd.get(key, _MISSING)
            if lv is rv:
                continue
            ct = t.member(key)
            path.append("f:" + key)
            _compare(lv, rv, ct, path, c, not _is_value_struct(kind, ct), sub)
            path.pop()
    else:
        ll = l if isinstance(l, list) else None
        rl = r if isinstance(r, list) else None
        if not ll and not rl:
            _compare_leaf(l, r, path, c)
            return
        _compare_items(_index(ll or [], t, path), _index(rl or [], t, path), t.item, path, c)
    if mark and path:
        if l is _MISSING:
            _insert(c.added, path)
        elif r is _MISSING:
            _insert(c.removed, path)


def _compare_leaf(l: Any, r: Any, path: Path, c: _Comparison) -> None:
    if l is _MISSING:
        _insert(c.added, path)
    elif r is _MISSING:
        _insert(c.removed, path)
    elif not json_equal(l, r):
        _insert(c.modified, path)


def _compare_items(
    left: dict[str, list[Any]], right: dict[str, list[Any]], elem: _T, path: Path, c: _Comparison
) -> None:
    """Items matched by key; duplicated keys are compared as SMD does (as a whole)."""
    for pe in [*left, *(pe for pe in right if pe not in left)]:
        li, ri = left.get(pe, ()), right.get(pe, ())
        path.append(pe)
        if len(li) <= 1 and len(ri) <= 1:
            _compare(li[0] if li else _MISSING, ri[0] if ri else _MISSING, elem, path, c, True, None)
        elif len(li) >= 2 and len(ri) >= 2:
            if not json_equal(list(li), list(ri)):
                _insert(c.modified, path)
        elif len(li) >= 2:
            if ri:
                _compare(_MISSING, ri[0], elem, path, c, True, None)
            _insert(c.removed, path)
        else:
            if li:
                _compare(li[0], _MISSING, elem, path, c, True, None)
            _insert(c.added, path)
        path.pop()


def _compare_objects(old: dict[str, Any], new: dict[str, Any], root: _T, skip: Skip) -> _Comparison:
    c = _Comparison({}, {}, {})
    _compare(old, new, root, [], c, False, skip)
    return _Comparison(_sorted(c.added), _sorted(c.modified), _sorted(c.removed))


def _to_set(v: Any, t: _T, path: Path, out: Node, errors: list[str]) -> None:
    """SMD ``ToFieldSet`` of an applied configuration, validating its list keys on the way."""
    kind, t = _eff(t, v)
    if kind in _LEAVES:
        _insert(out, path)
    elif kind in (_STRUCT, _MAP):
        if not isinstance(v, dict):
            return
        for key, cv in v.items():
            path.append("f:" + key)
            _to_set(cv, t.member(key), path, out, errors)
            if kind == _MAP or cv is None or (isinstance(cv, dict) and not cv):
                _insert(out, path)
            path.pop()
    elif isinstance(v, list):
        elem = t.item
        seen: set[str] = set()
        for i, item in enumerate(v):
            try:
                pe = _item_pe(item, t, path, i)
            except _TypedError as err:
                errors.append(str(err))
                continue
            if pe in seen:
                errors.append(f"{_path_text(path)}: duplicate entries for key {_pe_text(pe)}")
                continue
            seen.add(pe)
            path.append(pe)
            _to_set(item, elem, path, out, errors)
            _insert(out, path)
            path.pop()


def _merge(l: Any, r: Any, t: _T, path: Path) -> Any:
    """SMD ``TypedValue.Merge``: the applied value ``r`` over the live value ``l``."""
    if l is _MISSING:
        return r
    kind, t = _eff(t, r)
    if kind in _LEAVES:
        return r
    if kind in (_STRUCT, _MAP):
        if not isinstance(r, dict):  # null over a granular value leaves it alone
            return l if isinstance(l, dict) and l else r
        if not isinstance(l, dict) or (not l and not r):
            return r
        out = dict(l)
        for key, rv in r.items():
            path.append("f:" + key)
            out[key] = _merge(l.get(key, _MISSING), rv, t.member(key), path)
            path.pop()
        return out
    if not isinstance(r, list):
        return l if isinstance(l, list) and l else r
    if not isinstance(l, list) or (not l and not r):
        return r
    return _merge_items(l, r, t, path)


_DUPLICATE: Any = object()


def _merge_items(l: list[Any], r: list[Any], t: _T, path: Path) -> list[Any]:
    """Merge two keyed lists: the applied order wins for shared items, live-only items stay put."""
    elem = t.item
    lpes = [_item_pe(item, t, path, i) for i, item in enumerate(l)]
    rpes = [_item_pe(item, t, path, i) for i, item in enumerate(r)]
    lmap: dict[str, Any] = {}
    for pe, item in zip(lpes, l):
        lmap[pe] = _DUPLICATE if pe in lmap else item  # duplicates are not merged with the new value
    rmap = dict(zip(rpes, r))
    shared = [pe for pe in rpes if pe in lmap]
    out: list[Any] = []
    merged: set[str] = set()
    si = li = ri = 0

    def merge_one(pe: str) -> None:
        lv = lmap.get(pe, _MISSING)
        path.append(pe)
        out.append(_merge(_MISSING if lv is _DUPLICATE else lv, rmap[pe], elem, path))
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


def _prune(v: Any, t: _T, last: Node, owners: list[Node], doomed: bool) -> Any:
    """SMD's prune: drop what this applier applied last time, does not apply now, and nobody owns.

    Equivalent to SMD's three passes (RemoveItems, addBackOwnedItems, addBackDanglingItems):
    a path of the previous apply set goes when it, or one of its ancestors, is present in the
    object but owned by nobody (struct fields count as owned when anything below them is).
    Containers emptied by the removal go too.
    """
    kind, t = _eff(t, v)
    if kind in (_STRUCT, _MAP) and isinstance(v, dict):
        named = kind == _STRUCT
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
    if kind in (_ASSOC, _SET) and isinstance(v, list):
        elem = t.item
        items = []
        changed = False
        for i, item in enumerate(v):
            try:
                pe = _item_pe(item, t, (), i)
            except _TypedError:
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


def _prune_child(cv: Any, ct: _T, pe: str, named: bool, lnode: Node, owners: list[Node], doomed: bool) -> Any:
    """One field or item of the previous apply set: gone, pruned inside, or kept."""
    owned = False
    below: list[Node] = []
    for owner in owners:
        onode = owner.get(pe)
        if onode is not None:
            owned = owned or named or _is_member(onode)  # SMD's EnsureNamedFieldsAreMembers
            if _has_kids(onode):
                below.append(onode)
    doomed = doomed or not owned
    if doomed and (named or _is_member(lnode)):
        return _GONE
    return _prune(cv, ct, lnode, below, doomed) if _has_kids(lnode) else cv


def _drop_paths(obj: dict[str, Any], skip: Skip) -> dict[str, Any]:
    """``obj`` without the given struct paths (copying only the dicts on the way)."""
    out = None
    for key, sub in skip.items():
        if key not in obj:
            continue
        if sub is None:
            new = _GONE
        elif isinstance(obj[key], dict):
            new = _drop_paths(obj[key], sub)
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


def _has_null(v: Any) -> bool:
    if v is None:
        return True
    if isinstance(v, dict):
        return any(_has_null(x) for x in v.values())
    if isinstance(v, list):
        return any(_has_null(x) for x in v)
    return False


def _without_nulls(v: Any) -> Any:
    """``null`` means "not set" once the apply is done, as when Go decodes the merged object."""
    if isinstance(v, dict):
        return {k: _without_nulls(x) for k, x in v.items() if x is not None}
    if isinstance(v, list):
        return [_without_nulls(x) for x in v]
    return v


def _strip_nulls(merged: Any, applied: Any) -> Any:
    """Remove the nulls an applied configuration brought in, following only its paths."""
    if isinstance(merged, dict) and isinstance(applied, dict):
        out = None
        for key, av in applied.items():
            if key not in merged or not _has_null(av):
                continue
            mv = merged[key]
            new = _GONE if mv is None else _strip_nulls(mv, av)
            if new is mv:
                continue
            if out is None:
                out = dict(merged)
            if new is _GONE:
                del out[key]
            else:
                out[key] = new
        return merged if out is None else out
    if isinstance(merged, list) and _has_null(merged):
        return _without_nulls(merged)
    return merged


# -- managedFields entries ---------------------------------------------------------------------------


class _Entry:
    """One managedFields entry being worked on; untouched entries are written back as they came."""

    __slots__ = ("set", "api_version", "time", "raw", "_raw_set")

    def __init__(self, fset: Node, api_version: str, time: str | None, raw: dict[str, Any] | None = None) -> None:
        self.set = fset
        self.api_version = api_version
        self.time = time
        self.raw = raw
        self._raw_set = fset

    def encode(self, ident: _Id) -> dict[str, Any]:
        if self.raw is not None and self.set is self._raw_set:
            return self.raw
        manager, operation, _, subresource = ident
        out: dict[str, Any] = {"manager": manager, "operation": operation, "apiVersion": self.api_version}
        if self.time:
            out["time"] = self.time
        out["fieldsType"] = "FieldsV1"
        out["fieldsV1"] = self.set
        if subresource:
            out["subresource"] = subresource
        return out


Managed = dict[_Id, _Entry]


def _managed_fields_of(obj: Mapping[str, Any] | None) -> Any:
    meta = obj.get("metadata") if obj is not None else None
    return meta.get("managedFields") if isinstance(meta, dict) else None


def _decode(entries: Any, trusted: bool) -> Managed:
    """Decode managedFields; ``trusted`` entries were written by this module and are used as-is."""
    managed: Managed = {}
    if entries is None:
        return managed
    if not isinstance(entries, list):
        raise _BadManagedFields("managedFields must be a list")
    for i, entry in enumerate(entries):
        if not isinstance(entry, dict):
            raise _BadManagedFields(f"managed fields entry {i} must be an object")
        operation = entry.get("operation")
        if operation not in ("Apply", "Update"):
            raise _BadManagedFields("operation must be `Apply` or `Update`")
        api_version = entry.get("apiVersion") or ""
        if not api_version:
            raise _BadManagedFields("apiVersion must not be empty")
        fields_type = entry.get("fieldsType") or ""
        if not fields_type:
            raise _BadManagedFields(f"missing fieldsType in managed fields entry {i}")
        if fields_type != "FieldsV1":
            raise _BadManagedFields(f'invalid fieldsType "{fields_type}" in managed fields entry {i}')
        fset = entry.get("fieldsV1")
        if fset is None:
            fset = {}
        elif not trusted:
            fset = _canonical(fset)
        version = api_version if operation == "Update" else ""  # an applier keeps its entry across versions
        ident = (entry.get("manager") or "", operation, version, entry.get("subresource") or "")
        managed[ident] = _Entry(fset, api_version, entry.get("time"), entry if trusted else None)
    return managed


def _seconds(time: str | None) -> int:
    if not time:
        return 0
    try:
        return int(datetime.fromisoformat(time.replace("Z", "+00:00")).timestamp())
    except ValueError:
        return 0


def _encode(managed: Managed) -> list[dict[str, Any]]:
    """Entries in kube-apiserver's order: Apply before Update, then by time, manager, version."""
    order = sorted(managed, key=lambda i: (i[1], _seconds(managed[i].time), i[0], managed[i].api_version, i[3]))
    return [managed[ident].encode(ident) for ident in order]


def _drop_empty(managed: Managed) -> None:
    for ident in [i for i, e in managed.items() if not e.set]:
        del managed[ident]


def _cap_update_managers(managed: Managed) -> None:
    """capManagersManager: fold the oldest Update entries into ``ancient-changes`` per version."""
    updaters = [i for i in managed if i[1] == "Update"]
    if len(updaters) <= MAX_UPDATE_MANAGERS:
        return
    updaters.sort(key=lambda i: (_seconds(managed[i].time), _identifier_json(i)))
    first: dict[str, _Id] = {}
    length = len(updaters)
    for ident in updaters:
        if length <= MAX_UPDATE_MANAGERS:
            break
        entry = managed[ident]
        version = entry.api_version
        if version not in first:
            first[version] = ident
            continue
        bucket = (ANCIENT_CHANGES, "Update", version, "")
        if bucket not in managed:
            managed[bucket] = managed.pop(first[version])
        managed[bucket] = _Entry(_union(managed[bucket].set, entry.set), version, entry.time)
        del managed[ident]
        length -= 1


def _identifier_json(ident: _Id) -> str:
    """The manager identifier kube-apiserver keys entries by (sorting conflicts uses it)."""
    pairs = zip(("manager", "operation", "apiVersion", "subresource"), ident)
    return "{" + ",".join(f'"{name}":{_go_json(value)}' for name, value in pairs if value) + "}"


def _updated(
    managed: Managed, old: dict[str, Any], new: dict[str, Any], root: _T, skip: Skip, ident: _Id, now: str
) -> None:
    """One Update operation (SMD ``Updater.Update`` behind kube-apiserver's managedFieldsUpdater)."""
    api_version = ident[2]
    c = _compare_objects(old, new, root, skip)
    changes = _union(c.modified, c.added)
    for entry in managed.values():  # the manager's own entry too: it is merged back below
        entry.set = _diff(_diff(entry.set, changes), c.removed)
    current = _diff(changes, _STRIP)
    if current:
        previous = managed.get(ident)
        managed[ident] = _Entry(_union(previous.set, current) if previous else current, api_version, now)
    _drop_empty(managed)
    _cap_update_managers(managed)


# -- public API ---------------------------------------------------------------------------------------


def default_ignored(subresource: str) -> tuple[str, ...]:
    """Reset fields a strategy overwrites, excluded from ownership (``GetResetFields``).

    The main resource never takes ``status`` from a write, the status subresource never takes
    ``spec`` (some kinds reset more, e.g. ``metadata.labels`` on Deployment status: pass those).
    """
    if not subresource:
        return ("status",)
    return ("spec",) if subresource == "status" else ()


def default_manager(user_agent: str) -> str:
    """The manager name of a write without ``fieldManager``: the User-Agent up to its first ``/``.

    As ``prefixFromUserAgent``: unprintable characters dropped, cut at 128 bytes; an empty
    result becomes ``unknown`` (``buildManagerInfo``).
    """
    out: list[str] = []
    size = 0
    for ch in user_agent.split("/", 1)[0]:
        if not ch.isprintable():
            continue
        size += len(ch.encode())
        if size > FIELD_MANAGER_MAX_LENGTH:
            break
        out.append(ch)
    return "".join(out) or "unknown"


def managed_fields_after_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    shape: Shape,
    *,
    manager: str,
    api_version: str,
    now: str,
    subresource: str = "",
    ignored: Iterable[str] | None = None,
) -> list[dict[str, Any]]:
    """The ``metadata.managedFields`` to store for a create (``old`` None), PUT or PATCH.

    ``new`` is the object as the write produced it, with the managedFields the client sent (a
    client may rewrite them; ``[]`` or ``[{}]`` clears them). The fields this write added or
    changed become owned by ``manager``'s Update entry for ``api_version``/``subresource``
    (merged with its earlier set, time ``now``) and are taken from every other entry; removed
    fields leave every entry; entries left empty are dropped. An existing object without
    managedFields stays untracked. An empty list means: store no managedFields.
    """
    try:
        return _after_update(old, new, shape, manager or "unknown", api_version, now, subresource, ignored)
    finally:
        _item_pes.clear()


def _after_update(
    old: dict[str, Any] | None,
    new: dict[str, Any],
    shape: Shape,
    manager: str,
    api_version: str,
    now: str,
    subresource: str,
    ignored: Iterable[str] | None,
) -> list[dict[str, Any]]:
    old_fields = _managed_fields_of(old)
    new_fields = _managed_fields_of(new)
    try:
        if subresource:
            managed = _decode(old_fields, True)
        elif isinstance(new_fields, list) and (not new_fields or new_fields == [{}]):
            managed = {}
        else:
            managed = {}
            if new_fields:
                try:
                    managed = _decode(new_fields, new_fields is old_fields or new_fields == old_fields)
                except _BadManagedFields:
                    managed = {}
            if not managed:
                managed = _decode(old_fields, True)
    except _BadManagedFields:
        managed = {}
    if not managed and old is not None:
        return []
    root = _struct(shape)
    skip = _skip_tree((*_STRIPPED, *(default_ignored(subresource) if ignored is None else ignored)))
    ident = (manager, "Update", api_version, subresource)
    try:
        _updated(managed, old if old is not None else _zero(root), new, root, skip, ident, now)
    except _TypedError:
        return list(old_fields or [])  # UpdateNoErrors: keep what was there
    return _encode(managed)


@dataclass(frozen=True, slots=True)
class Conflict:
    """A field of the applied configuration that another manager owns with a different value."""

    manager: str
    operation: str
    api_version: str  # set for Update managers only
    subresource: str
    field: str  # ``.spec.replicas``

    @property
    def owner(self) -> str:
        """``"kubectl-edit" using apps/v1``: how kube-apiserver names the manager (printManager)."""
        text = orjson.dumps(self.manager).decode()
        if self.subresource:
            text += f" with subresource {orjson.dumps(self.subresource).decode()}"
        if self.operation == "Update":
            text += f" using {self.api_version}"
        return text


class ApplyConflict(Exception):
    """The apply was refused: ``conflicts`` lists every field in dispute (409 ``Conflict``)."""

    def __init__(self, conflicts: list[Conflict]) -> None:
        super().__init__(conflict_error(conflicts).message)
        self.conflicts = conflicts

    def api_error(self) -> APIError:
        return conflict_error(self.conflicts)


def conflict_error(conflicts: Sequence[Conflict]) -> APIError:
    """The Status kube-apiserver sends for apply conflicts (``errors.NewApplyConflict``).

    Details carry only the causes (no name or kind), one ``FieldManagerConflict`` per field.
    """
    causes = [
        {"reason": "FieldManagerConflict", "message": f"conflict with {c.owner}", "field": c.field} for c in conflicts
    ]
    if len(conflicts) == 1:
        message = f"Apply failed with 1 conflict: conflict with {conflicts[0].owner}: {conflicts[0].field}"
    else:
        by_manager: dict[str, list[Conflict]] = {}
        for c in conflicts:
            ident = (c.manager, c.operation, c.api_version, c.subresource)
            by_manager.setdefault(_identifier_json(ident), []).append(c)
        lines = []
        for key in sorted(by_manager):
            group = by_manager[key]
            lines.append(f"conflicts with {group[0].owner}:")
            lines.extend(f"- {c.field}" for c in group)
        message = f"Apply failed with {len(conflicts)} conflicts: " + "\n".join(lines)
    return APIError(409, StatusReason.CONFLICT, message, {"causes": causes})


def _group_version(api_version: Any) -> tuple[str, str] | None:
    """``schema.ParseGroupVersion``; None when it fails (more than one ``/``)."""
    if not isinstance(api_version, str) or not api_version:
        return ("", "")
    parts = api_version.split("/")
    if len(parts) == 1:
        return ("", parts[0])
    return (parts[0], parts[1]) if len(parts) == 2 else None


def _gvk(obj: Mapping[str, Any]) -> str:
    """``apps/v1, Kind=Deployment``: an unstructured object's GroupVersionKind as Go prints it."""
    gv = _group_version(obj.get("apiVersion"))
    kind = obj.get("kind")
    if gv is None:
        gv, kind = ("", ""), ""
    return f"{gv[0]}/{gv[1]}, Kind={kind if isinstance(kind, str) else ''}"


def check_apply_body(body: Any, api_version: str, kind: str) -> None:
    """Refuse an apply configuration kube-apiserver refuses, with its 400 BadRequest.

    The body must be an object (``null`` counts as ``{}``) of exactly the endpoint's
    apiVersion and kind, and must not set ``metadata.managedFields``.
    """
    if body is None:
        body = {}
    if not isinstance(body, dict):
        raise bad_request(
            "error decoding YAML: error unmarshaling JSON: while decoding JSON: json: cannot unmarshal "
            f"{go_json_type(body)} into Go value of type map[string]interface {{}}"
        )
    got = _gvk(body)
    if got != _gvk({"apiVersion": api_version, "kind": kind}):
        raise bad_request(f"invalid object type: {got}")
    entries = _managed_fields_of(body)
    if isinstance(entries, list) and all(isinstance(e, dict) for e in entries):
        raise bad_request("metadata.managedFields must be nil")


def _object_text(obj: Mapping[str, Any]) -> str:
    """``default/web; apps/v1, Kind=Deployment``, as kube-apiserver names an object in errors."""
    meta = obj.get("metadata")
    if not isinstance(meta, dict):
        meta = {}
    return f"{meta.get('namespace') or ''}/{meta.get('name') or ''}; {_gvk(obj)}"


def _typed_error(what: str, obj: Mapping[str, Any], errors: list[str]) -> APIError:
    # kube-apiserver answers this with a 500; it is the client's input that is wrong, so 400.
    detail = errors[0] if len(errors) == 1 else "errors:\n  " + "\n  ".join(errors)
    message = f"failed to create typed {what} object ({_object_text(obj)}): {detail}"
    return APIError(400, StatusReason.BAD_REQUEST, message)


def apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    shape: Shape,
    *,
    manager: str,
    force: bool,
    api_version: str,
    now: str,
    subresource: str = "",
    ignored: Iterable[str] | None = None,
) -> dict[str, Any]:
    """Server-side apply of ``applied`` (checked by :func:`check_apply_body`) onto ``live``.

    ``live`` None creates. The result is live merged with the configuration (applied values win,
    associative lists merge by key, sets union, atomic lists and scalars are replaced); fields
    ``manager`` applied last time and no longer applies are removed unless someone else owns
    them. Changing a field another manager owns raises :class:`ApplyConflict` unless ``force``
    moves it. ``ignored`` paths (default :func:`default_ignored`) are neither merged nor owned.
    The result carries the new ``metadata.managedFields``.
    """
    try:
        return _apply(live, applied, shape, manager, force, api_version, now, subresource, ignored)
    finally:
        _item_pes.clear()


def _apply(
    live: dict[str, Any] | None,
    applied: dict[str, Any],
    shape: Shape,
    manager: str,
    force: bool,
    api_version: str,
    now: str,
    subresource: str,
    ignored: Iterable[str] | None,
) -> dict[str, Any]:
    root = _struct(shape)
    ignore_paths = tuple(default_ignored(subresource) if ignored is None else ignored)
    ignore = _skip_tree(ignore_paths)
    config = _drop_paths(applied, ignore) if ignore else applied
    errors: list[str] = []
    new_set: Node = {}
    _to_set(config, root, [], new_set, errors)
    if errors:
        raise _typed_error("patch", applied, errors)
    new_set = _sorted(new_set)
    base = live if live is not None else {}
    try:
        managed = _decode(_managed_fields_of(live), True)
    except _BadManagedFields as err:
        raise APIError(500, StatusReason.INTERNAL_ERROR, f"failed to decode managed fields: {err}") from err
    skip = _skip_tree((*_STRIPPED, *ignore_paths))
    ident = (manager, "Apply", "", subresource)
    try:
        if not managed and live is not None:  # start tracking what was there before
            _updated(managed, _zero(root), live, root, skip, (BEFORE_FIRST_APPLY, "Update", api_version, subresource), now)
        last = managed.get(ident)
        merged = _merge(base, config, root, [])
        if last is not None and last.set:
            owners = [e.set for i, e in managed.items() if i != ident] + [new_set, _PROTECTED]
            merged = _prune(merged, root, last.set, owners, False)
        c = _compare_objects(base, merged, root, skip)
    except _TypedError as err:
        raise _typed_error("live", base, [str(err)]) from err
    changes = _union(c.modified, c.added)
    disputed = [(i, _inter(changes, e.set)) for i, e in managed.items() if i != ident]
    disputed = sorted(((i, s) for i, s in disputed if s), key=lambda p: _identifier_json(p[0]))
    if disputed and not force:
        refused = disputed
        if manager == UPGRADING_MANAGER:  # lastAppliedManager: kubectl takes over its client-side apply
            allowed = _last_applied_fields(base, root, api_version)
            refused = [(i, rest) for i, s in disputed if (rest := _diff(s, allowed))]
        if refused:
            raise ApplyConflict(
                [Conflict(i[0], i[1], i[2], i[3], _path_text(path)) for i, s in refused for path in _iter_paths(s, [])]
            )
    for i, s in disputed:
        managed[i].set = _diff(managed[i].set, s)
    if c.removed:
        for i, e in managed.items():
            if i != ident:
                e.set = _diff(e.set, c.removed)
    time = now if c.changed() else (last.time if last is not None else None)
    managed[ident] = _Entry(_diff(new_set, _STRIP), api_version, time)
    _drop_empty(managed)
    if _has_null(config):
        merged = _strip_nulls(merged, config)
    entries = _encode(managed)
    meta = dict(merged.get("metadata") or {})
    if entries:
        meta["managedFields"] = entries
    else:
        meta.pop("managedFields", None)
    if manager == UPGRADING_MANAGER:
        _sync_last_applied(meta, applied)
    return {**merged, "metadata": meta}


# -- from client-side apply ------------------------------------------------------------------------
# ``kubectl apply`` without --server-side keeps its configuration in an annotation and writes as
# the Update manager ``kubectl-client-side-apply``. kube-apiserver lets ``kubectl apply
# --server-side`` (manager ``kubectl``, and no other) take over the fields that annotation lists
# (lastAppliedManager), and keeps the annotation up to date while it is there (lastAppliedUpdater),
# so that either kind of apply may follow the other.


def _annotations(obj: Mapping[str, Any] | None) -> Mapping[str, Any]:
    meta = obj.get("metadata") if obj is not None else None
    found = meta.get("annotations") if isinstance(meta, dict) else None
    return found if isinstance(found, dict) else {}


def _last_applied_fields(live: Mapping[str, Any], root: _T, api_version: str) -> Node:
    """The fields of live's last-applied configuration that still hold the values it applied.

    Nothing when the annotation is missing, is not a JSON object with a ``kind`` in
    ``api_version`` or does not fit the schema: conflicts then stand as they are.
    """
    text = _annotations(live).get(LAST_APPLIED)
    if not isinstance(text, str) or not text:
        return {}
    try:
        last = orjson.loads(text)
    except orjson.JSONDecodeError:
        return {}
    if not isinstance(last, dict) or not last.get("kind") or not isinstance(last["kind"], str):
        return {}
    if last.get("apiVersion") != api_version:
        return {}
    errors: list[str] = []
    fset: Node = {}
    try:
        _to_set(last, root, [], fset, errors)
        c = _compare_objects(last, dict(live), root, {})
    except _TypedError:
        return {}
    if errors:
        return {}
    return _diff(_diff(_diff(_sorted(fset), c.modified), c.added), c.removed)


def _sync_last_applied(meta: dict[str, Any], applied: Mapping[str, Any]) -> None:
    """Rewrite a last-applied annotation the apply left in ``meta`` to the configuration just
    applied (without that annotation), as kubectl writes it: Go's JSON and a newline. Dropped
    when the annotations would outgrow their size limit."""
    annotations = _annotations({"metadata": meta})
    current = annotations.get(LAST_APPLIED)
    if not isinstance(current, str) or not current:
        return
    config = applied
    config_meta = applied.get("metadata")
    if isinstance(config_meta, dict) and "annotations" in config_meta:
        kept = {k: v for k, v in config_meta.items() if k != "annotations"}
        if isinstance(config_meta["annotations"], dict):  # Go drops anything else with the annotation
            kept["annotations"] = {k: v for k, v in config_meta["annotations"].items() if k != LAST_APPLIED}
        config = {**applied, "metadata": kept}
    updated = {**annotations, LAST_APPLIED: _go_json(config) + "\n"}
    if _annotations_size(updated) > ANNOTATIONS_SIZE_LIMIT:
        del updated[LAST_APPLIED]
    meta["annotations"] = updated


def _annotations_size(annotations: Mapping[str, Any]) -> int:
    """``ValidateAnnotationsSize``: bytes of every key and value."""
    return sum(len(k.encode()) + len(v.encode() if isinstance(v, str) else b"") for k, v in annotations.items())
