"""Strategic merge patch (``application/strategic-merge-patch+json``) over wire-format objects.

The patch metadata comes from the compiled schema (:class:`~kplane.core.runtime.schema.Shape`): a field's
``patch_strategy`` and ``patch_merge_key`` (see :mod:`kplane.core.runtime.fields`). Behaviour follows
``k8s.io/apimachinery/pkg/util/strategicpatch`` as kube-apiserver runs it (``mergeMap``/``mergeSlice``
with ``MergeParallelList`` and ``IgnoreUnmatchedNulls``):

* Maps merge recursively and ``null`` deletes a key. Lists replace, unless the field's strategy is
  ``merge``: lists of objects then merge item by item on the merge key; lists of scalars become
  a set union; ``patch_strategy: replace`` on an object replaces it whole.
* Keys the schema does not know and the insides of raw ``fields.Dict()`` values have no metadata,
  so they get plain JSON merge semantics. A list of raw dicts whose field has a merge key (pod
  ``volumes``) merges by that key, its items merging as plain maps.
* Order of a merged list, as k8s: items named by the patch list (or by ``$setElementOrder/<list>``
  when present) come in that order, the other items keep their order in the document, and the two
  runs are interleaved by document position. A patch item the document did not have goes ahead of
  the document items not yet placed, so a lone new container lands first (as kubectl's own patch
  docs show); kubectl sends ``$setElementOrder`` to say exactly where it goes.
* ``$patch``: ``delete`` removes the map holding it (or, as a merge-list item, every item with
  that merge key); ``replace`` makes its map replace the document's (or, as a list item, makes the
  other items replace the whole list). ``$retainKeys: [...]`` clears the document keys it does not
  list, wherever it appears, as k8s does (it does not check the field's strategy).
  ``$deleteFromPrimitiveList/<list>`` removes values from any list of scalars, whatever its strategy.
* Directives never reach the result: patch values inserted where the document has nothing to
  merge them with are cleaned of directives and of ``null`` members.

Where k8s is ambiguous or plainly buggy, this module picks the intended reading instead:

* ``$patch: merge`` (the default strategy) is accepted as a no-op, in maps and as a list item;
  kube-apiserver answers 500 ``unknown patch type`` / ``merging lists cannot yet be specified``.
* ``$patch: delete`` on a map removes the key (the design doc's reading); k8s leaves ``{}``.
  On the whole patch, the result is ``{}`` as in k8s.
* ``$patch: replace``/``merge`` on a key the document lacks inserts the map (k8s drops it).
* ``$deleteFromPrimitiveList/<list>`` whose value is not a list of scalars (``null`` included), or
  whose target is not a list of scalars, is refused with k8s' "invalid patch format of primitive
  list" (400); k8s would ignore it, delete the whole list (``null``) or merge it as additions.
* Document items lacking the merge key are kept and never matched (k8s fails the whole patch).

Status codes, as ``handlers/patch.go`` answers (``interpretStrategicMergePatchError`` maps a few
``mergepatch`` sentinel errors; everything else is a plain error that ``ErrorToAPIStatus`` turns
into a 500 with an empty reason, printed by kubectl as ``Error from server: <message>``):

* 400 BadRequest: the patch is not a JSON object (the Go decoder's message; ``null`` is an empty
  patch); ``$retainKeys`` not a list or a patch key missing from it ("invalid patch format of
  retainKeys"); a ``$setElementOrder`` key not of the form ``$setElementOrder/<list>`` ("invalid
  patch format of setElementOrder list"); a malformed ``$deleteFromPrimitiveList`` key or value
  ("invalid patch format of primitive list").
* 422 Invalid: a list of lists in a merge list ("lists of lists are not supported").
* 500: a bad ``$patch`` value ("unknown patch type"); a merge-list item (or ``$setElementOrder``
  item) without its merge key ("does not contain declared merge key"); a non-object item in a
  list of objects; objects in a merge list without a merge key; ``$setElementOrder`` whose value
  or target is not a list, whose target field is unknown, or whose order contradicts the patch
  list ("doesn't match $setElementOrder list").

Nothing is deep-copied: only the maps and lists on the paths the patch touches are rebuilt, so the
result shares untouched subtrees with ``doc``. Treat inputs and result as read-only.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Iterable
from dataclasses import dataclass
from operator import itemgetter
from typing import Any, NamedTuple

import orjson
from marshmallow import fields

from kplane.core.patching.errors import PatchError
from kplane.core.runtime.gojson import go_json_type, go_print
from kplane.core.runtime.schema import LIST, MAP, Shape

_PATCH = "$patch"
_RETAIN_KEYS = "$retainKeys"
_SET_ORDER = "$setElementOrder"
_DELETE_FROM = "$deleteFromPrimitiveList"
_DIRECTIVE_VALUES = ("delete", "replace", "merge")
_DROP = object()  # what cleaning a ``$patch: delete`` map yields: nothing to insert

_RETAIN_KEYS_FORMAT = "invalid patch format of retainKeys"
_SET_ORDER_FORMAT = "invalid patch format of setElementOrder list"
_PRIMITIVE_LIST_FORMAT = "invalid patch format of primitive list"


@dataclass(frozen=True, slots=True)
class _ValuesOf:
    """The scope of a map whose values all have one schema (a ``MAP`` container)."""

    shape: Shape


Scope = Shape | _ValuesOf | None  # None: no metadata below this point (plain JSON merge)


class _Meta(NamedTuple):
    """How to patch one key's value: what its field's metadata says."""

    strategy: str  # "merge", "replace" or "" (maps merge, lists replace)
    merge_key: str | None
    scope: Scope  # of the value itself, or of each item of a list


_PLAIN = _Meta("", None, None)


def apply_strategic_merge_patch(doc: dict[str, Any], patch: Any, shape: Shape) -> dict[str, Any]:
    """Apply a decoded strategic merge patch to ``doc`` (a wire object of ``shape``'s kind).

    Neither input is mutated. Raises :class:`PatchError` carrying the status kube-apiserver
    would answer (see the module docstring).
    """
    if patch is None:  # Go decodes a JSON null into an empty patch
        return doc
    if not isinstance(patch, dict):
        raise PatchError(f"json: cannot unmarshal {go_json_type(patch)} into Go value of type map[string]interface {{}}", 400)
    result = _merge_map(doc, patch, shape)
    return {} if result is None else result


# -- metadata ------------------------------------------------------------------------------------
def _meta(scope: Scope, key: str) -> _Meta:
    """What the schema says about ``key`` (nothing for unknown keys and raw dicts)."""
    if scope is None:
        return _PLAIN
    if isinstance(scope, _ValuesOf):
        return _Meta("", None, scope.shape)
    fs = scope.by_key.get(key)
    if fs is None:
        return _PLAIN
    strategies = fs.field.metadata.get("patch_strategy", "").split(",")
    strategy = "merge" if "merge" in strategies else "replace" if "replace" in strategies else ""
    child: Scope = _ValuesOf(fs.child) if fs.child is not None and fs.container == MAP else fs.child
    return _Meta(strategy, fs.field.metadata.get("patch_merge_key"), child)


def _check_list_field(scope: Scope, key: str) -> None:
    """A ``$setElementOrder`` must name a list field of the schema, when there is a schema."""
    if not isinstance(scope, Shape):
        return
    fs = scope.by_key.get(key)
    if fs is None:
        struct = type(scope.schema).__name__.removesuffix("Schema")
        raise PatchError(f'unable to find api field in struct {struct} for the json field "{key}"', 500)
    if fs.container != LIST and not isinstance(fs.field, fields.List):
        raise PatchError(f'expected slice or array type for the json field "{key}"', 500)


# -- Go-flavoured messages, as kube-apiserver words them -------------------------------------------
def _go_type(value: Any) -> str:
    """The Go type a JSON value decodes to, as ``reflect.TypeOf`` prints it."""
    if isinstance(value, dict):
        return "map[string]interface {}"
    if isinstance(value, list):
        return "[]interface {}"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "bool"
    return "int64" if isinstance(value, int) else "float64" if isinstance(value, float) else "string"


def _not_a_list(value: Any) -> PatchError:
    return PatchError(f"expected a []interface {{}}, but received a {_go_type(value)}", 500)


def _no_merge_key(item: dict[str, Any], key: str) -> PatchError:
    return PatchError(f"map: {go_print(item)} does not contain declared merge key: {key}", 500)


def _bad_directive(value: Any, where: dict[str, Any]) -> PatchError:
    return PatchError(f"unknown patch type: {go_print(value)} in map: {go_print(where)}", 500)


# -- identity of list items ----------------------------------------------------------------------
def _identity(value: Any) -> Hashable:
    """A hashable stand-in for a JSON value that, like Go's ``==``, keeps ``true``, ``1`` and ``1.0`` apart."""
    if isinstance(value, (dict, list)):
        return (dict, orjson.dumps(value, option=orjson.OPT_SORT_KEYS))
    return (type(value), value)


def _by_merge_key(key: str) -> Callable[[Any], Hashable]:
    """Items of a merge list are the same item when their merge-key values are equal."""

    def identity(item: Any) -> Hashable:
        if isinstance(item, dict) and key in item:
            return _identity(item[key])
        return (None, id(item))  # no merge key: matches nothing else

    return identity


def _reorder(items: list[Any], order: Iterable[Any], server: list[Any], identity: Callable[[Any], Hashable]) -> list[Any]:
    """k8s ``normalizeElementOrder``: ``order``'s items in its order, the rest in ``server`` order, interleaved.

    An item of ``order`` that ``server`` also holds yields to the server-only items that came
    before it there; one ``server`` lacks is placed as soon as it is reached.
    """
    rank: dict[Hashable, int] = {}
    for i, item in enumerate(order):
        rank.setdefault(identity(item), i)
    position: dict[Hashable, int] = {}
    for i, item in enumerate(server):
        position.setdefault(identity(item), i)
    named: list[tuple[int, int | None, Any]] = []  # (sort key, server position, item)
    others: list[tuple[int, int | None, Any]] = []
    for item in items:
        key = identity(item)
        at = position.get(key)
        if key in rank:
            named.append((rank[key], at, item))
        else:
            others.append((len(server) if at is None else at, at, item))
    named.sort(key=itemgetter(0))
    others.sort(key=itemgetter(0))
    out: list[Any] = []
    i = j = 0
    while i < len(others) and j < len(named):
        mine, theirs = others[i][1], named[j][1]
        if mine is not None and theirs is not None and mine < theirs:
            out.append(others[i][2])
            i += 1
        else:
            out.append(named[j][2])
            j += 1
    return out + [x[2] for x in others[i:]] + [x[2] for x in named[j:]]


# -- directives ------------------------------------------------------------------------------------
def _is_directive(key: str) -> bool:
    """Keys that steer the merge and never reach the result."""
    return key == _PATCH or key == _RETAIN_KEYS or key.startswith(_SET_ORDER) or key.startswith(_DELETE_FROM)


def _target(key: str, prefix: str, message: str) -> str:
    """The list a ``$setElementOrder/<list>`` or ``$deleteFromPrimitiveList/<list>`` key names."""
    head, slash, name = key.partition("/")
    if head != prefix or not slash:
        raise PatchError(message, 400)
    return name


def _retained(patch: dict[str, Any]) -> set[str]:
    """The keys ``$retainKeys`` keeps, after checking that every key the patch sets is among them."""
    keep = patch[_RETAIN_KEYS]
    if not isinstance(keep, list):
        raise PatchError(_RETAIN_KEYS_FORMAT, 400)
    allowed = {k for k in keep if isinstance(k, str)}
    for key, value in patch.items():
        if value is not None and not _is_directive(key) and key not in allowed:
            raise PatchError(_RETAIN_KEYS_FORMAT, 400)
    return allowed


def _scalars_to_delete(value: Any) -> set[Hashable]:
    if not isinstance(value, list) or any(isinstance(v, (dict, list)) for v in value):
        raise PatchError(_PRIMITIVE_LIST_FORMAT, 400)
    return {_identity(v) for v in value}


# -- inserting patch values as they are ------------------------------------------------------------
def _clean(value: Any) -> Any:
    """A patch value inserted where the document has nothing to merge it with: directives and nulls dropped.

    Returns ``_DROP`` for a map carrying ``$patch: delete``.
    """
    if isinstance(value, dict):
        return _clean_map(value)
    if isinstance(value, list):
        return _clean_list(value)
    return value


def _clean_map(patch: dict[str, Any]) -> Any:
    directive = patch.get(_PATCH, "merge")
    if directive not in _DIRECTIVE_VALUES:
        raise _bad_directive(directive, patch)
    if directive == "delete":
        return _DROP
    if _RETAIN_KEYS in patch:
        _retained(patch)
    out: dict[str, Any] = {}
    for key, value in patch.items():
        if key.startswith(_SET_ORDER):
            _target(key, _SET_ORDER, _SET_ORDER_FORMAT)
        elif key.startswith(_DELETE_FROM):
            _target(key, _DELETE_FROM, _PRIMITIVE_LIST_FORMAT)
            _scalars_to_delete(value)
        elif value is not None and key != _PATCH and key != _RETAIN_KEYS:
            cleaned = _clean(value)
            if cleaned is not _DROP:
                out[key] = cleaned
    return out


def _clean_list(items: list[Any]) -> list[Any]:
    """List items cleaned, with ``$patch`` marker items (delete, replace) left out."""
    out = []
    for item in items:
        if isinstance(item, dict) and item.get(_PATCH) == "replace":
            continue  # the "replace this list" marker: the list is replaced already
        cleaned = _clean(item)
        if cleaned is not _DROP:
            out.append(cleaned)
    return out


# -- merging -----------------------------------------------------------------------------------------
def _merge_map(original: dict[str, Any], patch: dict[str, Any], scope: Scope) -> dict[str, Any] | None:
    """Merge ``patch`` into a copy of ``original``; ``None`` when a ``$patch: delete`` removes the map."""
    if _PATCH in patch:
        directive = patch[_PATCH]
        if directive == "delete":
            return None
        if directive == "replace":
            return _clean_map(patch)
        if directive != "merge":
            raise _bad_directive(directive, patch)
    result = dict(original)
    if _RETAIN_KEYS in patch:
        keep = _retained(patch)
        for key in original:
            if key not in keep:
                del result[key]
    orders: dict[str, Any] = {}
    deletions: list[tuple[str, set[Hashable]]] = []
    for key, value in patch.items():
        if key.startswith("$") and _is_directive(key):
            if key.startswith(_SET_ORDER):
                orders[_target(key, _SET_ORDER, _SET_ORDER_FORMAT)] = value
            elif key.startswith(_DELETE_FROM):
                deletions.append((_target(key, _DELETE_FROM, _PRIMITIVE_LIST_FORMAT), _scalars_to_delete(value)))
            continue
        if value is None:
            result.pop(key, None)
            continue
        meta = _meta(scope, key)
        current = result.get(key)
        if isinstance(value, dict) and isinstance(current, dict) and meta.strategy != "replace":
            merged = _merge_map(current, value, meta.scope)
        elif isinstance(value, list) and isinstance(current, list) and meta.strategy == "merge":
            merged = _merge_list(key, current, value, meta)
        else:
            merged = _clean(value)
        if merged is None or merged is _DROP:
            result.pop(key, None)
        else:
            result[key] = merged
    for key, order in orders.items():
        _set_element_order(result, original, patch, key, order, scope)
    for key, values in deletions:
        current = result.get(key)
        if current is None:
            continue
        if not isinstance(current, list) or any(isinstance(v, (dict, list)) for v in current):
            raise PatchError(_PRIMITIVE_LIST_FORMAT, 400)
        result[key] = [v for v in current if _identity(v) not in values]
    return result


def _merge_list(name: str, current: list[Any], patch: list[Any], meta: _Meta) -> list[Any]:
    """Merge a patch list into a document list whose field has the ``merge`` strategy."""
    if not current and not patch:
        return current
    key = meta.merge_key
    if key is None:
        return _merge_scalars(name, current, patch)
    items: list[dict[str, Any]] = []
    deleted: set[Hashable] = set()
    replace = False
    for item in patch:
        if not isinstance(item, dict):
            raise PatchError(f"list element types are not identical: {go_print([current, patch])}", 500)
        if _PATCH not in item or item[_PATCH] == "merge":
            items.append(item)
        elif item[_PATCH] == "delete":
            if key not in item:
                raise _no_merge_key(item, key)
            deleted.add(_identity(item[key]))
        elif item[_PATCH] == "replace":
            replace = True
        else:
            raise _bad_directive(item[_PATCH], item)
    if replace:
        return _clean_list(items)
    identity = _by_merge_key(key)
    server = [x for x in current if identity(x) not in deleted] if deleted else current
    merged = list(server)
    index: dict[Hashable, int] = {}
    for i, x in enumerate(merged):
        index.setdefault(identity(x), i)
    for item in items:
        if key not in item:
            raise _no_merge_key(item, key)
        at = index.get(identity(item))
        if at is None:
            index[identity(item)] = len(merged)
            merged.append(_clean_map(item))
        else:
            merged[at] = _merge_map(merged[at], item, meta.scope)
    return _reorder(merged, items, server, identity)


def _merge_scalars(name: str, current: list[Any], patch: list[Any]) -> list[Any]:
    """A set union of two lists of scalars, ordered the k8s way."""
    for value in patch:
        if isinstance(value, list):
            raise PatchError("lists of lists are not supported", 422)
        if isinstance(value, dict):
            raise PatchError(f"cannot merge lists without merge key for {name}", 500)
    seen: set[Hashable] = set()
    merged = []
    for value in (*current, *patch):
        identity = _identity(value)
        if identity not in seen:
            seen.add(identity)
            merged.append(value)
    return _reorder(merged, patch, current, _identity)


def _set_element_order(
    result: dict[str, Any], original: dict[str, Any], patch: dict[str, Any], key: str, order: Any, scope: Scope
) -> None:
    """Apply ``$setElementOrder/<key>`` to the merged list, after checking it against the patch list."""
    if not isinstance(order, list):
        raise _not_a_list(order)
    _check_list_field(scope, key)
    before, listed = original.get(key), patch.get(key)
    for value in (before, listed):
        if value is not None and not isinstance(value, list):
            raise _not_a_list(value)
    merge_key = _meta(scope, key).merge_key
    identity: Callable[[Any], Hashable] = _identity
    if merge_key is not None:
        for item in order:
            if not isinstance(item, dict):
                raise PatchError(f"expected a map[string]interface {{}}, but received a {_go_type(item)}", 500)
            if merge_key not in item:
                raise _no_merge_key(item, merge_key)
        identity = _by_merge_key(merge_key)
    if order and listed:
        named = [x for x in listed if not (isinstance(x, dict) and _PATCH in x)]
        remaining = iter(identity(x) for x in order)
        if not all(identity(x) in remaining for x in named):  # a subsequence test: ``in`` consumes
            raise PatchError(f"The order in patch list:\n{go_print(listed)}\n doesn't match {_SET_ORDER} list:\n{go_print(order)}\n", 500)
    merged = result.get(key)
    if isinstance(merged, list):
        result[key] = _reorder(merged, order, before if isinstance(before, list) else [], identity)
