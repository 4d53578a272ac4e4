"""JSON patch (RFC 6902, ``application/json-patch+json``) over decoded JSON values.

The function does not mutate its inputs. Instead of deep-copying the document, only the containers
on the path an operation writes through are copied (once per application), so a patch touching
``/metadata/labels`` costs a few small dict copies however large ``spec`` is. The result
therefore shares untouched sub-objects with ``doc`` (and inserted values with ``patch``): treat
inputs and result as read-only, or deep-copy before mutating.

It follows what kube-apiserver accepts (evanphx/json-patch v4) where it is more lenient
than the RFC and clients may rely on it: ``replace`` of a missing object member adds it, array
indices may be negative (counted from the end) or carry a sign/leading zeros, and ``replace`` or
``test`` at the root pointer ``""`` act on the whole document while ``add``/``remove`` there fail.
Where v4 would silently produce ``null`` (``add`` without ``value``, ``copy``/``test`` of a missing
location) this module follows the RFC and fails instead.

Status mapping, as ``handlers/patch.go`` answers (see :meth:`PatchError.api_error`):

* 400 BadRequest: the patch is not a JSON array of objects (``jsonpatch.DecodePatch`` fails);
  the message is the Go decoder's.
* 413 RequestEntityTooLarge: more than 10000 operations.
* 422 Invalid: any operation fails to apply (unknown op, missing path, failed ``test``,
  copy growth over 3 MiB). kube-apiserver hides the cause behind a fixed message; ``str()`` of
  the error keeps it for logs.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

import orjson

from kplane.core.patching.errors import PatchError
from kplane.core.runtime.gojson import go_json_type, json_equal

MAX_JSON_PATCH_OPERATIONS = 10000
MAX_COPY_BYTES = 3 * 1024 * 1024  # kube-apiserver's default --json-patch-max-copy-bytes
_INDEX = re.compile(r"[+-]?[0-9]+")


def _split_pointer(pointer: str) -> list[str]:
    """RFC 6901 tokens of a non-root pointer, with ``~1`` then ``~0`` decoded."""
    if "~" not in pointer:
        return pointer.split("/")[1:]
    return [t.replace("~1", "/").replace("~0", "~") for t in pointer.split("/")[1:]]


def _missing(op: str, pointer: str) -> PatchError:
    return PatchError(f'{op} operation does not apply: doc is missing path: "{pointer}": missing value')


class _Applier:
    """Applies operations to a copy-on-write view of one document."""

    def __init__(self, doc: Any) -> None:
        self.root = doc
        # Containers this application created, by id, kept alive so ids are not reused.
        self.owned: dict[int, Any] = {}
        self.copied_bytes = 0

    def _own(self, container: Any) -> Any:
        if id(container) in self.owned:
            return container
        copy = dict(container) if isinstance(container, dict) else list(container)
        self.owned[id(copy)] = copy
        return copy

    @staticmethod
    def _index(array: list[Any], token: str, *, insert: bool = False) -> int:
        """An array index as v4 reads it: signed decimal, negative counts from the end."""
        if not _INDEX.fullmatch(token):
            raise PatchError(f"value was not a proper array index: '{token}'")
        size = len(array) + (1 if insert else 0)
        idx = int(token)
        if idx >= size or idx < -size:
            raise PatchError(f"Unable to access invalid index: {idx}: invalid index referenced")
        return idx + size if idx < 0 else idx

    def _parent(self, op: str, pointer: str, *, write: bool) -> tuple[Any, str]:
        """The container holding the pointer's last token; with ``write``, a private copy of it."""
        if not pointer.startswith("/"):
            raise _missing(op, pointer)
        tokens = _split_pointer(pointer)
        node = self.root
        if not isinstance(node, (dict, list)):
            raise _missing(op, pointer)
        if write:
            node = self.root = self._own(node)
        for token in tokens[:-1]:
            key: str | int = token if isinstance(node, dict) else self._index(node, token)
            child = node.get(key) if isinstance(node, dict) else node[key]
            if not isinstance(child, (dict, list)):
                raise _missing(op, pointer)
            if write:
                child = node[key] = self._own(child)
            node = child
        return node, tokens[-1]

    def _read(self, op: str, pointer: str) -> Any:
        """The value at ``pointer``; the location must exist."""
        if pointer == "":
            return self.root
        container, key = self._parent(op, pointer, write=False)
        if isinstance(container, dict):
            if key not in container:
                raise _missing(op, pointer)
            return container[key]
        return container[self._index(container, key)]

    def add(self, pointer: str, value: Any, op: str = "add") -> None:
        container, key = self._parent(op, pointer, write=True)
        if isinstance(container, dict):
            container[key] = value
        elif key == "-":
            container.append(value)
        else:
            container.insert(self._index(container, key, insert=True), value)

    def remove(self, pointer: str, op: str = "remove") -> Any:
        container, key = self._parent(op, pointer, write=True)
        if isinstance(container, dict):
            if key not in container:
                raise PatchError(
                    f"error in {op} for path: '{pointer}': Unable to remove nonexistent key: {key}: missing value"
                )
            return container.pop(key)
        return container.pop(self._index(container, key))

    def replace(self, pointer: str, value: Any) -> None:
        if pointer == "":
            self.root = value
            return
        container, key = self._parent("replace", pointer, write=True)
        if isinstance(container, dict):
            container[key] = value  # v4: a missing member is simply added
        else:
            container[self._index(container, key)] = value

    def move(self, source: str, pointer: str) -> None:
        # Remove first, as v4 does: moving a value into its own child then finds no parent.
        self.add(pointer, self.remove(source, "move"), "move")

    def copy(self, source: str, pointer: str) -> None:
        encoded = orjson.dumps(self._read("copy", source))
        self.copied_bytes += len(encoded)
        if self.copied_bytes > MAX_COPY_BYTES:
            raise PatchError(
                "Unable to complete the copy, the accumulated size increase of copy is "
                f"{self.copied_bytes}, exceeding the limit {MAX_COPY_BYTES}"
            )
        self.add(pointer, orjson.loads(encoded), "copy")  # a private copy, never aliased with its source

    def test(self, pointer: str, value: Any) -> None:
        if not json_equal(self._read("test", pointer), value):
            raise PatchError(f"testing value {pointer} failed: test failed")


def _string_member(operation: Mapping[str, Any], member: str, op: str) -> str:
    value = operation.get(member)
    if not isinstance(value, str):
        problem = "missing" if value is None else "not a string"
        raise PatchError(f'{op} operation failed to decode {member}: the "{member}" member is {problem}')
    return value


def _value_member(operation: Mapping[str, Any], op: str) -> Any:
    if "value" not in operation:
        raise PatchError(f'{op} operation is missing the "value" member')
    return operation["value"]


def apply_json_patch(doc: Any, patch: Any) -> Any:
    """Apply an RFC 6902 patch (already JSON-decoded) to ``doc`` and return the new document.

    Raises :class:`PatchError` carrying the status kube-apiserver would answer.
    """
    if patch is None:  # Go decodes a JSON null patch to an empty one
        return doc
    if not isinstance(patch, list):
        raise PatchError(f"json: cannot unmarshal {go_json_type(patch)} into Go value of type jsonpatch.Patch", 400)
    for operation in patch:
        if operation is not None and not isinstance(operation, dict):
            raise PatchError(
                f"json: cannot unmarshal {go_json_type(operation)} into Go value of type jsonpatch.Operation", 400
            )
    if len(patch) > MAX_JSON_PATCH_OPERATIONS:
        raise PatchError(
            f"The allowed maximum operations in a JSON patch is {MAX_JSON_PATCH_OPERATIONS}, got {len(patch)}", 413
        )
    applier = _Applier(doc)
    for operation in patch:
        operation = operation or {}
        op = operation.get("op")
        if op == "add":
            applier.add(_string_member(operation, "path", op), _value_member(operation, op))
        elif op == "remove":
            applier.remove(_string_member(operation, "path", op))
        elif op == "replace":
            applier.replace(_string_member(operation, "path", op), _value_member(operation, op))
        elif op == "move":
            applier.move(_string_member(operation, "from", op), _string_member(operation, "path", op))
        elif op == "copy":
            applier.copy(_string_member(operation, "from", op), _string_member(operation, "path", op))
        elif op == "test":
            applier.test(_string_member(operation, "path", op), _value_member(operation, op))
        else:
            raise PatchError(f"Unexpected kind: {op if isinstance(op, str) else 'unknown'}")
    return applier.root
