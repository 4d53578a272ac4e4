"""A custom resource checked against its version's structural schema (kube-openapi's
``validate`` as apiextensions-apiserver configures it), with Kubernetes' field paths and messages.

The schema is compiled once into a tree of :class:`_Node` (formats kube-apiserver does not
enforce already dropped, patterns compiled to RE2, numeric bounds converted), so a request only
walks its value. What runs, in order, is what kube-apiserver runs:

1. kube-openapi's validators per node (type, ``allOf``/``anyOf``/``oneOf``/``not``, string
   lengths and ``pattern``, ``format``, numeric bounds, items, ``enum``, properties), turned
   into field errors as ``kubeOpenAPIResultToFieldErrors`` does: a type error is
   ``FieldValueTypeInvalid``, ``enum`` ``FieldValueNotSupported``, ``maxLength``
   ``FieldValueTooLong``, ``maxItems``/``maxProperties`` ``FieldValueTooMany``, ``required``
   ``FieldValueRequired``, the rest ``FieldValueInvalid`` with kube-openapi's message; errors
   without a field (``anyOf`` and friends) have the field ``<nil>``, as in Kubernetes;
2. ``x-kubernetes-embedded-resource`` objects: ``apiVersion`` and ``kind`` required and well
   formed, ``metadata`` valid ObjectMeta (names as path segments);
3. ``x-kubernetes-list-type: set`` and ``map``: duplicates are ``FieldValueDuplicate``.
"""

from __future__ import annotations

import decimal
import math
from typing import Any

import orjson

from kplane.api import (
    FieldError, FieldErrorType, ObjectMeta, ObjectMetaSchema, build, invalid, is_dns1035_label, is_path_segment_name,
    load, not_supported, required, shape_of, too_many, validate_object_meta,
)
from kplane.plugins.apiextensions.schema import formats
from kplane.api import cel

_META = shape_of(ObjectMetaSchema)
_INT64 = (-(1 << 63), (1 << 63) - 1)
_INT32 = (-(1 << 31), (1 << 31) - 1)
_FLOAT32_MAX = 3.4028234663852886e38
_JSON_INT = float((1 << 53) - 1)  # swag.IsFloat64AJSONInteger's bound
_NONE = object()


def go_float(value: float) -> str:
    """A float64 as Go's ``%v`` prints it (``strconv.FormatFloat(v, 'g', -1, 64)``): the shortest
    digits, in ``%e`` form when the exponent is below -4 or 6 and more."""
    if not math.isfinite(value):
        return "NaN" if math.isnan(value) else ("+Inf" if value > 0 else "-Inf")
    if value == 0:
        return "0"
    sign, digit_tuple, exponent = decimal.Decimal(repr(value)).as_tuple()
    digits = "".join(map(str, digit_tuple))
    point = len(digits) + int(exponent)
    digits = digits.rstrip("0")
    exp = point - 1
    minus = "-" if sign else ""
    if exp < -4 or exp >= 6:
        mantissa = digits[0] + (f".{digits[1:]}" if len(digits) > 1 else "")
        return f"{minus}{mantissa}e{'-' if exp < 0 else '+'}{abs(exp):02d}"
    if point <= 0:
        return f"{minus}0.{'0' * -point}{digits}"
    if point >= len(digits):
        return f"{minus}{digits}{'0' * (point - len(digits))}"
    return f"{minus}{digits[:point]}.{digits[point:]}"


def _number(value: Any) -> str:
    """How Go prints a JSON number kube-openapi reports (int64 as is, float64 with ``%v``)."""
    return str(value) if isinstance(value, int) else go_float(value)


def _kind(value: Any) -> tuple[str, str]:
    """The JSON type of a decoded value and the Go format kube-openapi infers from it
    (an integer beyond int64 is a float64 in Go's decoder)."""
    t = type(value)
    if t is str:
        return "string", ""
    if t is bool:
        return "boolean", ""
    if t is int:
        return ("integer", "int64") if _INT64[0] <= value <= _INT64[1] else ("number", "float64")
    if t is float:
        return "number", "float64"
    if t is dict:
        return "object", ""
    if t is list:
        return "array", ""
    return "null", ""


def _json_integer(value: float) -> bool:
    return math.isfinite(value) and -_JSON_INT <= value <= _JSON_INT and value == int(value)


def _in_range(value: int | float, type_name: str, fmt: str) -> bool:
    """kube-openapi's ``IsValueValidAgainstRange``: whether a number fits its declared type."""
    if type_name == "integer":
        if isinstance(value, float):
            if not math.isfinite(value) or value != int(value):
                return False
            value = int(value)
        low, high = _INT32 if fmt == "int32" else _INT64
        return low <= value <= high
    if type_name == "number" and fmt == "float":
        return abs(float(value)) <= _FLOAT32_MAX
    return True


def _range_message(prefix: str, type_name: str, fmt: str, path: str) -> str:
    if fmt:
        return f"{prefix} value must be of type {type_name} with format {fmt} in {path}"
    return f"{prefix} value must be of type {type_name} (default format) in {path}"


def _field(name: str) -> str:
    """The field of an error kube-openapi reports under ``name`` (``<nil>`` for none)."""
    if not name or name == ".":
        return "<nil>"
    return name[1:] if name.startswith(".") else name


def _type_invalid(name: str, type_name: str, data: str) -> FieldError:
    detail = f"{name} in body must be of type {type_name}: {orjson.dumps(data).decode()}"
    return FieldError(FieldErrorType.TYPE_INVALID, _field(name), detail, data)


def _other(name: str, value: Any, message: str) -> FieldError:
    return invalid(_field(name), "" if value is None else value, message)


def _composite(message: str) -> FieldError:
    return invalid("<nil>", "", message)


def _too_many(name: str, actual: int, most: int) -> FieldError:
    return too_many(_field(name), actual, most)


def deep_equal(a: Any, b: Any) -> bool:
    """Go's ``reflect.DeepEqual`` on decoded JSON (int64 and float64 differ, so do bools and numbers)."""
    ta, tb = type(a), type(b)
    if ta is not tb:
        return False
    if ta is dict:
        return a.keys() == b.keys() and all(deep_equal(v, b[k]) for k, v in a.items())
    if ta is list:
        return len(a) == len(b) and all(deep_equal(x, y) for x, y in zip(a, b))
    return bool(a == b)


def _enum_match(data: Any, allowed: Any) -> bool:
    """kube-openapi's enum comparison: equal, or equal once converted to the allowed value's Go type."""
    if deep_equal(data, allowed):
        return True
    td, ta = type(data), type(allowed)
    if td in (int, float) and ta in (int, float):
        return (int(data) == allowed) if ta is int else (float(data) == allowed)
    if td is int and ta is str:  # Go converts an integer to the string of that rune
        return (chr(data) if 0 <= data <= 0x10FFFF and not 0xD800 <= data <= 0xDFFF else "\ufffd") == allowed
    return False


def _schema_type(schema: dict[str, Any]) -> tuple[str, ...]:
    if schema.get("x-kubernetes-int-or-string"):
        return ("integer", "string")
    t = schema.get("type")
    return (t,) if isinstance(t, str) and t else ()


class _Bound:
    """A numeric bound (``minimum``, ``maximum`` or ``multipleOf``) made ready for one node."""

    __slots__ = ("value", "exclusive", "native", "range_error")

    def __init__(self, value: float, exclusive: bool, type_name: str, fmt: str, prefix: str) -> None:
        self.value = float(value)
        self.exclusive = exclusive
        # A bound the declared type cannot hold is compared as a float, after an error saying so.
        self.native = _in_range(self.value, type_name, fmt)
        self.range_error = "" if self.native else prefix


class _Node:
    """One schema node, compiled."""

    __slots__ = (
        "types", "type_name", "nullable", "format", "check_format", "format_type", "range_format", "enum", "enum_text",
        "max_length", "min_length", "pattern", "minimum", "maximum", "multiple_of", "min_items", "max_items", "unique",
        "min_properties", "max_properties", "required", "properties", "additional", "items", "all_of", "any_of",
        "one_of", "not_", "typed", "composite", "numeric", "stringy", "sliced", "embedded", "list_type", "map_keys",
        "has_embedded", "has_lists",
    )

    def __init__(self, schema: dict[str, Any]) -> None:
        self.types = _schema_type(schema)
        single = self.types[0] if len(self.types) == 1 else ""
        self.nullable = bool(schema.get("nullable"))
        fmt = schema.get("format") or ""
        self.format = fmt if isinstance(fmt, str) and formats.supported(single, fmt) else ""
        self.check_format = formats.CHECKERS.get(formats.normalized(self.format))
        self.type_name = single if single in ("integer", "number") else ""
        self.range_format = self.format if self.type_name else ""
        enum = schema.get("enum")
        self.enum = list(enum) if isinstance(enum, list) and enum else None
        self.enum_text = [v if isinstance(v, str) else orjson.dumps(v).decode() for v in self.enum or ()]
        self.max_length = _int(schema.get("maxLength"))
        self.min_length = _int(schema.get("minLength"))
        pattern = schema.get("pattern")
        self.pattern = cel.regex.Pattern(pattern) if isinstance(pattern, str) and pattern else None
        self.minimum = self._bound(schema, "minimum", "exclusiveMinimum", "Minimum boundary")
        self.maximum = self._bound(schema, "maximum", "exclusiveMaximum", "Maximum boundary")
        self.multiple_of = self._bound(schema, "multipleOf", "", "MultipleOf")
        self.min_items = _int(schema.get("minItems"))
        self.max_items = _int(schema.get("maxItems"))
        self.unique = schema.get("uniqueItems") is True
        self.min_properties = _int(schema.get("minProperties"))
        self.max_properties = _int(schema.get("maxProperties"))
        req = schema.get("required")
        self.required = tuple(r for r in req if isinstance(r, str)) if isinstance(req, list) else ()
        props = schema.get("properties")
        self.properties = {k: _Node(v) for k, v in props.items() if isinstance(v, dict)} if isinstance(props, dict) else {}
        additional = schema.get("additionalProperties")
        self.additional: _Node | bool | None = (_Node(additional) if isinstance(additional, dict)
                                                else additional if isinstance(additional, bool) else None)
        items = schema.get("items")
        self.items = _Node(items) if isinstance(items, dict) else None
        self.all_of = _nodes(schema.get("allOf"))
        self.any_of = _nodes(schema.get("anyOf"))
        self.one_of = _nodes(schema.get("oneOf"))
        self.not_ = _Node(schema["not"]) if isinstance(schema.get("not"), dict) else None
        self.typed = bool(self.types or self.format)
        self.composite = bool(self.all_of or self.any_of or self.one_of or self.not_)
        self.numeric = bool(self.type_name or self.minimum or self.maximum or self.multiple_of)
        self.stringy = self.max_length is not None or self.min_length is not None or self.pattern is not None
        self.sliced = bool(self.items or self.min_items is not None or self.max_items is not None or self.unique)
        self.embedded = bool(schema.get("x-kubernetes-embedded-resource"))
        self.list_type = schema.get("x-kubernetes-list-type") or ""
        keys = schema.get("x-kubernetes-list-map-keys")
        self.map_keys = tuple(keys) if isinstance(keys, list) else ()
        children = [*self.properties.values(), self.items, self.additional]
        nodes = [c for c in children if isinstance(c, _Node)]
        self.has_embedded = self.embedded or any(c.has_embedded for c in nodes)
        self.has_lists = self.list_type in ("set", "map") or any(c.has_lists for c in nodes)

    def _bound(self, schema: dict[str, Any], key: str, exclusive: str, prefix: str) -> _Bound | None:
        value = schema.get(key)
        if type(value) not in (int, float):
            return None
        return _Bound(value, bool(exclusive and schema.get(exclusive)), self.type_name, self.range_format, prefix)

    # kube-openapi's SchemaValidator.Validate; returns its match count (how well ``value`` fit,
    # which picks the errors an anyOf/oneOf reports from its alternatives). ``old`` is the stored
    # object's value correlated with ``value`` (_NONE for none): when they are equal, the
    # errors of ``value`` ratchet away (apiextensions' ratchetingValueValidator).
    def check(self, value: Any, path: str, errs: list[FieldError], old: Any = _NONE) -> int:
        if old is not _NONE and deep_equal(old, value):
            return self.check(value, path, [])
        if value is None:
            count = 0
            if self.typed:
                if self.types and not self.nullable:
                    errs.append(_type_invalid(path, ",".join(self.types), "null"))
                else:
                    count = 1
            if self.enum is not None:
                errs.append(not_supported(_field(path), None, self.enum_text))
            return count
        kind, go_format = _kind(value)
        count = 1
        if self.typed:
            count += 1 + self._check_type(value, kind, go_format, path, errs)
        count += 1 + self._check_composite(value, path, errs, old)  # the schema props validator always applies
        if kind == "string":
            count += 1
            if self.stringy:
                self._check_string(value, path, errs)
            if self.check_format is not None:
                count += 1
                if not self.check_format(value):
                    errs.append(_type_invalid(path, self.format, value))
        elif kind in ("integer", "number"):
            count += 2
            if self.numeric:
                self._check_number(value, path, errs)
        elif kind == "array":
            count += 2
            if self.sliced:
                count += self._check_array(value, path, errs, old)
        count += 1
        if self.enum is not None and not any(_enum_match(value, allowed) for allowed in self.enum):
            errs.append(not_supported(_field(path), value, self.enum_text))
        if kind == "object":
            count += 1 + self._check_object(value, path, errs, old)
        return count

    def _check_type(self, value: Any, kind: str, go_format: str, path: str, errs: list[FieldError]) -> int:
        types, fmt = self.types, self.format
        float_int = kind == "number" and "integer" in types and _json_integer(float(value))
        int_float = kind == "integer" and "number" in types
        if fmt and kind not in ("string", "array") and not (kind in types or go_format == fmt or float_int or int_float):
            errs.append(_type_invalid(path, fmt, go_format))
            return 0
        if fmt and kind in ("string", "array") and "number" not in types and "integer" not in types:
            return 1
        if not (kind in types or float_int or int_float):
            errs.append(_type_invalid(path, ",".join(types), kind))
            return 0
        return 1

    def _check_string(self, value: str, path: str, errs: list[FieldError]) -> None:
        length = len(value)  # runes, as utf8.RuneCount
        if self.max_length is not None and length > self.max_length:
            most = self.max_length
            errs.append(FieldError(FieldErrorType.TOO_LONG, _field(path), f"may not be more than {most} byte{'' if most == 1 else 's'}"))
        elif self.min_length is not None and length < self.min_length:
            errs.append(_other(path, value, f"{path} in body should be at least {self.min_length} chars long"))
        elif self.pattern is not None and not self.pattern.matches(value):
            shown = self.pattern.source
            if self.pattern.error:
                shown = f"{shown}, but pattern is invalid: {self.pattern.error}"
            errs.append(_other(path, value, f"{path} in body should match '{shown}'"))

    def _check_number(self, value: int | float, path: str, errs: list[FieldError]) -> None:
        native = type(value) is int and _INT64[0] <= value <= _INT64[1]
        data = value if native else float(value)
        if self.type_name and not _in_range(data, self.type_name, self.range_format):
            errs.append(_composite(_range_message("Checked", self.type_name, self.range_format, path)))
        for bound, check in ((self.multiple_of, self._multiple), (self.minimum, self._minimum), (self.maximum, self._maximum)):
            if bound is None:
                continue
            if bound.range_error:
                errs.append(_composite(_range_message(bound.range_error, self.type_name, self.range_format, path)))
            problem = check(data, bound, native and bound.native)
            if problem is not None:
                errs.append(_other(path, problem[1], problem[0].replace("{path}", path)))

    # Each bound check: None, or the message (``{path}`` for the field's path) and the value shown.
    @staticmethod
    def _multiple(data: int | float, bound: _Bound, native: bool) -> tuple[str, Any] | None:
        factor: int | float = int(bound.value) if native else bound.value  # Go's int64(factor) truncates
        if factor <= 0:
            return f"factor MultipleOf declared for {{path}} must be positive: {_number(factor)}", factor
        if native:
            fits = data % factor == 0
        else:
            fits = _json_integer((1 / factor * data) if factor < 1 else (data / factor))
        return None if fits else (f"{{path}} in body should be a multiple of {_number(factor)}", data)

    @staticmethod
    def _minimum(data: int | float, bound: _Bound, native: bool) -> tuple[str, Any] | None:
        low: int | float = int(bound.value) if native else bound.value
        if (data <= low) if bound.exclusive else (data < low):
            word = "greater than" if bound.exclusive else "greater than or equal to"
            return f"{{path}} in body should be {word} {_number(low)}", data
        return None

    @staticmethod
    def _maximum(data: int | float, bound: _Bound, native: bool) -> tuple[str, Any] | None:
        high: int | float = int(bound.value) if native else bound.value
        if (data >= high) if bound.exclusive else (data > high):
            word = "less than" if bound.exclusive else "less than or equal to"
            return f"{{path}} in body should be {word} {_number(high)}", data
        return None

    def _check_array(self, value: list[Any], path: str, errs: list[FieldError], old: Any) -> int:
        count = 1
        if self.items is not None:
            olds = self._old_items(old)
            for i, item in enumerate(value):
                count += self.items.check(item, f"{path}[{i}]", errs, _NONE if olds is None else olds.get(_item_key(self, item), _NONE))
        size = len(value)
        if self.min_items is not None and size < self.min_items:
            errs.append(_other(path, size, f"{path} in body should have at least {self.min_items} items"))
        if self.max_items is not None and size > self.max_items:
            errs.append(_too_many(path, size, self.max_items))
        if self.unique and _has_duplicates(value):
            errs.append(_other(path, None, f"{path} in body shouldn't contain duplicates"))
        return count

    def _old_items(self, old: Any) -> dict[Any, Any] | None:
        """The old list's items by their keys: only ``listType=map`` items correlate (set and
        atomic lists are not correlated item by item)."""
        if self.list_type != "map" or not isinstance(old, list):
            return None
        return {_item_key(self, item): item for item in old}

    def _check_object(self, value: dict[str, Any], path: str, errs: list[FieldError], old: Any) -> int:
        olds = old if isinstance(old, dict) else {}
        count = 0
        size = len(value)
        if self.min_properties is not None and size < self.min_properties:
            errs.append(_other(path, size, f"{path} in body should have at least {self.min_properties} properties"))
        if self.max_properties is not None and size > self.max_properties:
            errs.append(_too_many(path, size, self.max_properties))
        properties, additional = self.properties, self.additional
        if additional is False:
            for key in value:
                if key not in properties:
                    errs.append(_other(path, key, f"{path}.{key} in body is a forbidden property"))
        elif isinstance(additional, _Node):
            for key, item in value.items():
                if key not in properties:
                    count += additional.check(item, f"{path}.{key}", errs, olds.get(key, _NONE))
        for key, node in properties.items():
            if key in value:
                count += node.check(value[key], f"{path}.{key}" if path else key, errs, olds.get(key, _NONE))
        for key in self.required:
            if key not in value:
                errs.append(required(_field(f"{path}.{key}")))
        return count

    def _check_composite(self, value: Any, path: str, errs: list[FieldError], old: Any) -> int:
        if not self.composite:
            return 0
        count = 0
        if self.any_of:
            best: tuple[int, list[FieldError]] | None = None
            for alternative in self.any_of:
                found: list[FieldError] = []
                matched = alternative.check(value, path, found, old)
                if not found:
                    count += matched
                    best = None
                    break
                if best is None or matched > best[0]:
                    best = (matched, found)
            else:
                errs.append(_composite(f"{_quote(path)} must validate at least one schema (anyOf)"))
            if best is not None:
                count += best[0]
                errs.extend(best[1])
        if self.one_of:
            valid, first, best = 0, 0, None
            for alternative in self.one_of:
                found = []
                matched = alternative.check(value, path, found, old)
                if not found:
                    valid += 1
                    first = first or matched
                    best = None
                elif valid == 0 and (best is None or matched > best[0]):
                    best = (matched, found)
            if valid != 1:
                more = "Found none valid" if valid == 0 else f"Found {valid} valid alternatives"
                errs.append(_composite(f"{_quote(path)} must validate one and only one schema (oneOf). {more}"))
                if best is not None:
                    count += best[0]
                    errs.extend(best[1])
            else:
                count += first
        if self.all_of:
            valid = 0
            for alternative in self.all_of:
                found = []
                count += alternative.check(value, path, found, old)
                valid += not found
                errs.extend(found)
            if valid != len(self.all_of):
                errs.append(_composite(f"{_quote(path)} must validate all the schemas (allOf){'. None validated' if valid == 0 else ''}"))
        if self.not_ is not None:
            found = []
            self.not_.check(value, path, found, old)
            if not found:
                errs.append(_composite(f"{_quote(path)} must not validate the schema (not)"))
        return count + 1


def _item_key(node: _Node, item: Any) -> Any:
    """The keys of a ``listType=map`` item, as a hashable value."""
    if not isinstance(item, dict):
        return _NONE
    return tuple(_mark(item.get(k)) for k in node.map_keys)


def _int(value: Any) -> int | None:
    return value if type(value) is int else (int(value) if type(value) is float and value == int(value) else None)


def _nodes(schemas: Any) -> list[_Node]:
    return [_Node(s) for s in schemas if isinstance(s, dict)] if isinstance(schemas, list) else []


def _quote(text: str) -> str:
    """Go's ``%q`` of a field path."""
    return orjson.dumps(text).decode()


def _mark(value: Any) -> Any:
    """A set key that keeps Go's distinctions (``1``, ``1.0`` and ``true`` differ; objects and
    arrays compared by their JSON, keys sorted)."""
    if isinstance(value, (dict, list)):
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)
    return (type(value), value)


def _has_duplicates(values: list[Any]) -> bool:
    return len({_mark(v) for v in values}) != len(values)


def _second_occurrences(marks: list[Any]) -> list[int]:
    """``validateListSet``: the index of each repeated value's second occurrence."""
    counts: dict[Any, int] = {}
    found = []
    for i, mark in enumerate(marks):
        counts[mark] = counts.get(mark, 0) + 1
        if counts[mark] == 2:
            found.append(i)
    return found


def _duplicate(path: str, value: Any) -> FieldError:
    return FieldError(FieldErrorType.DUPLICATE, path, "", value)


def _check_lists(node: _Node, value: Any, path: str, errs: list[FieldError]) -> None:
    """``listtype.ValidateListSetsAndMaps``: sets without repeats, maps without repeated keys."""
    if isinstance(value, dict):
        if isinstance(node.additional, _Node) and node.additional.has_lists:
            for key, item in value.items():
                _check_lists(node.additional, item, f"{path}[{key}]", errs)
        for key, item in value.items():
            child = node.properties.get(key)
            if child is not None and child.has_lists:
                _check_lists(child, item, f"{path}.{key}" if path else key, errs)
    elif isinstance(value, list):
        if node.list_type == "set":
            errs.extend(_duplicate(f"{path}[{i}]", value[i]) for i in _second_occurrences([_mark(v) for v in value]))
        elif node.list_type == "map":
            errs.extend(_map_duplicates(node, value, path))
        if node.items is not None and node.items.has_lists:
            for i, item in enumerate(value):
                _check_lists(node.items, item, f"{path}[{i}]", errs)


def _map_duplicates(node: _Node, value: list[Any], path: str) -> list[FieldError]:
    for i, item in enumerate(value):
        if item is not None and not isinstance(item, dict):
            return [invalid(f"{path}[{i}]", item, "must be an object for an array of list-type map")]
    if len(value) <= 1:
        return []
    names = sorted(node.map_keys)  # a Go map marshals with its keys sorted
    keys = [{k: item[k] for k in names if k in item} if item else {} for item in value]
    if len(node.map_keys) == 1:
        only = node.map_keys[0]
        marks = [_mark(k[only]) if only in k else _NONE for k in keys]
    else:
        marks = [_mark(k) for k in keys]
    return [_duplicate(f"{path}[{i}]", keys[i]) for i in _second_occurrences(marks)]


def _parse_group_version(text: str) -> str:
    """``schema.ParseGroupVersion``'s error, if any."""
    return f"unexpected GroupVersion string: {text}" if text.count("/") > 1 else ""


def _check_embedded(node: _Node, value: Any, path: str, errs: list[FieldError]) -> None:
    """``objectmeta.Validate``: the embedded resources under ``value``."""
    if isinstance(value, dict):
        if node.embedded:
            _embedded_resource(value, path, errs)
        for key, item in value.items():
            child = node.properties.get(key)
            if child is not None:
                if child.has_embedded:
                    _check_embedded(child, item, f"{path}.{key}" if path else key, errs)
            elif isinstance(node.additional, _Node) and node.additional.has_embedded:
                _check_embedded(node.additional, item, f"{path}[{key}]", errs)
    elif isinstance(value, list) and node.items is not None and node.items.has_embedded:
        for i, item in enumerate(value):
            _check_embedded(node.items, item, f"{path}[{i}]", errs)


def _embedded_resource(obj: dict[str, Any], path: str, errs: list[FieldError]) -> None:
    for key in ("apiVersion", "kind"):
        if key not in obj:
            errs.append(required(f"{path}.{key}"))
    api_version, kind = obj.get("apiVersion", _NONE), obj.get("kind", _NONE)
    if api_version is not _NONE:
        where = f"{path}.apiVersion"
        if not isinstance(api_version, str):
            errs.append(invalid(where, api_version, "must be a string"))
        elif not api_version:
            errs.append(invalid(where, api_version, "must not be empty"))
        elif problem := _parse_group_version(api_version):
            errs.append(invalid(where, api_version, problem))
    if kind is not _NONE:
        where = f"{path}.kind"
        if not isinstance(kind, str):
            errs.append(invalid(where, kind, "must be a string"))
        elif not kind:
            errs.append(invalid(where, kind, "must not be empty"))
        elif problems := is_dns1035_label(kind.lower()):
            errs.append(invalid(where, kind, "may have mixed case, but should otherwise match: " + ",".join(problems)))
    meta = obj.get("metadata", _NONE)
    if meta is not _NONE:
        where = f"{path}.metadata"
        loaded = load(_META, meta) if isinstance(meta, dict) else None
        if loaded is None or loaded.errors:
            why = "; ".join(map(str, loaded.errors)) if loaded else "must be an object"
            errs.append(invalid(where, meta, why))
            return
        typed = build(ObjectMeta, loaded.data)
        if not typed.name:
            typed.name = "fakename"  # as kube-apiserver does: an embedded object needs no name
        errs.extend(validate_object_meta(typed, namespaced=bool(typed.namespace), name_validator=is_path_segment_name,
                                         path=where))


class SchemaValidator:
    """One CRD version's schema, compiled once when the CRD is served."""

    __slots__ = ("_root",)

    def __init__(self, schema: dict[str, Any] | None) -> None:
        self._root = _Node(schema) if isinstance(schema, dict) and schema else None

    def validate(self, content: dict[str, Any], old: dict[str, Any] | None = None) -> list[FieldError]:
        """Field errors of a custom resource's fields but ``apiVersion``, ``kind`` and ``metadata``.

        On update (``old``: the stored object's), errors of values equal to their stored
        counterparts are not reported (ratcheting, as CRDValidationRatcheting does it): values
        correlate by property, map key and ``listType=map`` keys; list-type errors are reported
        only when the stored object had none; embedded resources are checked as on create."""
        root = self._root
        if root is None:
            return []
        errs: list[FieldError] = []
        root.check(content, "", errs, _NONE if old is None else old)
        if root.has_embedded:
            _check_embedded(root, content, "", errs)
        if root.has_lists:
            list_errs: list[FieldError] = []
            _check_lists(root, content, "", list_errs)
            if list_errs and old is not None:
                stored: list[FieldError] = []
                _check_lists(root, old, "", stored)
                if stored:
                    list_errs = []
            errs += list_errs
        if len(errs) > 1:  # kube-openapi reports an error once however many alternatives found it
            seen: set[str] = set()
            errs = [e for e in errs if not (str(e) in seen or seen.add(str(e)))]  # type: ignore[func-returns-value]
        return errs
