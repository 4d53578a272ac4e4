"""JSON values as Go sees them: equality, type names, printing and ``encoding/json`` text.

Patches, server-side apply and their error messages must agree with kube-apiserver byte for byte
on how Go compares, names, prints and writes a decoded JSON value; these helpers say it once for
the patch and managed-fields libraries.
"""

from __future__ import annotations

import re
from typing import Any

import orjson


def json_equal(a: Any, b: Any) -> bool:
    """JSON equality: numbers compare by value, but ``true`` is not ``1`` and ``"10"`` is not ``10``."""
    if a is b:
        return True
    if isinstance(a, bool) or isinstance(b, bool):
        return isinstance(a, bool) and isinstance(b, bool) and a == b
    if isinstance(a, (int, float)) and isinstance(b, (int, float)):
        return a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(json_equal(v, b[k]) for k, v in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    return type(a) is type(b) and a == b


def go_json_type(value: Any) -> str:
    """How Go's ``json.UnmarshalTypeError`` names a JSON value's type."""
    if isinstance(value, bool):
        return "bool"
    if isinstance(value, (int, float)):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def go_print(value: Any) -> str:
    """``value`` (decoded JSON) as Go's ``fmt.Sprintf("%+v", ...)`` prints it: ``map[k:v ...]``
    with sorted keys, ``[a b]``, bare strings, ``<nil>``; what kube-apiserver quotes of a patch."""
    if isinstance(value, dict):
        return "map[" + " ".join(f"{k}:{go_print(value[k])}" for k in sorted(value)) + "]"
    if isinstance(value, list):
        return "[" + " ".join(go_print(item) for item in value) + "]"
    if value is None:
        return "<nil>"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e21:
            return str(int(value))
        return repr(value)
    return str(value)


_UNSAFE = re.compile("[<>&\u2028\u2029]")


def _escape(match: re.Match[str]) -> str:
    return f"\\u{ord(match.group()):04x}"


def go_json(value: Any) -> str:
    """JSON the way Go's encoding/json writes it (HTML-safe escapes, sorted map keys)."""
    text = orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    return _UNSAFE.sub(_escape, text) if _UNSAFE.search(text) else text

