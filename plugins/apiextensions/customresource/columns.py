"""A CRD version's ``additionalPrinterColumns`` as table columns (apiextensions-apiserver's
``tableconvertor``).

Name comes first; the CRD's columns follow, or, when it declares none, an Age column
(``serveDefaultColumnsIfEmpty``). A cell is the first value the column's JSONPath reaches, shaped
by the column's type as kube-apiserver's ``cellForJSONValue``: ``integer`` (a number, truncated),
``number``, ``boolean``, ``date`` (an RFC 3339 string shown as an age, ``<invalid>`` otherwise),
``string`` (any value, printed as client-go's JSONPath prints it: text as is, lists and objects as
JSON). A missing value, or one of another type, is an empty cell (``None``, which kubectl shows
as ``<none>``). Columns are parsed when the CRD is served; one whose path does not parse ends
the list there, as kube-apiserver falls back to the columns before it.
"""

from __future__ import annotations

import json
import logging
import math
import re
from collections.abc import Callable, Sequence
from datetime import datetime
from decimal import Decimal
from typing import Any

from kplane.api import NAME, Column, age
from kplane.plugins.apiextensions.customresource.jsonpath import JSONPath, JSONPathError

log = logging.getLogger(__name__)

_RFC3339 = re.compile(r"\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$")

_CREATION_TIMESTAMP = ("CreationTimestamp is a timestamp representing the server time when this object was created. "
                       "It is not guaranteed to be set in happens-before order across separate operations. Clients "
                       "may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the "
                       "system. Read-only. Null for lists. More info: "
                       "https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata")
#: ``serveDefaultColumnsIfEmpty``'s column.
DEFAULT_COLUMNS = ({"name": "Age", "type": "date", "description": _CREATION_TIMESTAMP, "jsonPath": ".metadata.creationTimestamp"},)


def columns(printed: Sequence[dict[str, Any]]) -> tuple[Column, ...]:
    """Name, then ``printed`` (a version's additionalPrinterColumns) or the default Age column."""
    made = [NAME]
    for definition in printed or DEFAULT_COLUMNS:
        path = definition.get("jsonPath") or ""
        try:
            parsed = JSONPath.parse(path)
        except JSONPathError as err:
            log.info("unrecognized column definition %r, falling back to the columns before it: %s", path, err)
            break
        kind = definition.get("type") or "string"
        made.append(Column(
            definition.get("name") or "", kind, _cell(parsed, kind),
            description=definition.get("description") or f"Custom resource definition column (in JSONPath format): {path}",
            priority=definition.get("priority") or 0, format=definition.get("format") or "",
        ))
    return tuple(made)


def _cell(path: JSONPath, kind: str) -> Callable[[dict[str, Any]], Any]:
    def cell(obj: dict[str, Any]) -> Any:
        found, value = path.first(obj)
        if not found:
            return None
        if kind == "string":
            return printed(value)
        return typed_cell(kind, value)
    return cell


def typed_cell(kind: str, value: Any) -> Any:
    """``cellForJSONValue``: the cell of a non-string column, None when ``value`` does not fit ``kind``."""
    if value is None or isinstance(value, bool) and kind in ("integer", "number"):
        return None
    if kind == "integer" and isinstance(value, int | float):
        return int(value) if math.isfinite(value) else None
    if kind == "number" and isinstance(value, int | float):
        return _json_number(float(value))
    if kind == "boolean" and isinstance(value, bool):
        return value
    if kind == "date" and isinstance(value, str):
        when = _rfc3339(value)
        return "<invalid>" if when is None else age(value) if when else "<unknown>"
    return None


def printed(value: Any) -> str:
    """client-go JSONPath's ``PrintResults`` of one value: lists and objects as JSON, text as
    is, numbers as Go's ``%v``, null as Go's template ``<no value>``."""
    if value is None:
        return "<no value>"
    if isinstance(value, dict | list):
        return go_json(value)
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return go_float(value)
    return str(value)


def go_float(value: float) -> str:
    """Go's ``%v`` of a float64: the shortest digits, in exponent form below 1e-4 and from 1e6 (``%g``)."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else "+Inf" if value > 0 else "-Inf"
    if value == 0:
        return "-0" if math.copysign(1, value) < 0 else "0"
    sign, digits, exponent = Decimal(repr(value)).normalize().as_tuple()
    text = "".join(map(str, digits))
    point = len(text) + int(exponent)  # digits before the decimal point
    magnitude = point - 1
    out = "-" if sign else ""
    if magnitude < -4 or magnitude >= 6:
        mantissa = text[0] + ("." + text[1:] if len(text) > 1 else "")
        return f"{out}{mantissa}e{'-' if magnitude < 0 else '+'}{abs(magnitude):02d}"
    if point <= 0:
        return f"{out}0.{'0' * -point}{text}"
    if point >= len(text):
        return out + text + "0" * (point - len(text))
    return f"{out}{text[:point]}.{text[point:]}"


def _json_number(value: float) -> int | float:
    """A float as Go's encoding/json writes it: an integral one without a fraction."""
    return int(value) if value.is_integer() and abs(value) < 1e21 else value


def go_json(value: Any) -> str:
    """Go's ``json.Marshal`` of a JSON value: keys sorted, no spaces, ``<>&`` escaped."""
    def normal(item: Any) -> Any:
        if isinstance(item, dict):
            return {k: normal(v) for k, v in item.items()}
        if isinstance(item, list):
            return [normal(v) for v in item]
        if isinstance(item, float) and not isinstance(item, bool):
            return _json_number(item)
        return item

    text = json.dumps(normal(value), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text.replace("<", "\\u003c").replace(">", "\\u003e").replace("&", "\\u0026")


def _rfc3339(text: str) -> datetime | None | bool:
    """metav1.Time's query-parameter parse: False for "" and "null" (the zero time), the time for
    RFC 3339, None when it is neither."""
    if text in ("", "null"):
        return False
    if not _RFC3339.match(text):
        return None
    try:
        return datetime.fromisoformat(text)
    except ValueError:
        return None
