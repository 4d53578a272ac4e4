"""JSON and YAML request bodies to JSON values, within bounds that a hostile body cannot stretch.

kube-apiserver decodes YAML with go-yaml (through ``sigs.k8s.io/yaml``) and JSON with Go's
``encoding/json``; this module gives the same values and refuses what they refuse:

* **Aliases.** A YAML alias repeats its anchor's whole value, so a few hundred bytes of nested
  aliases can stand for gigabytes. go-yaml counts the nodes it decodes and those it decodes
  through an alias, and refuses "document contains excessive aliasing" once more than 100 of
  them come from aliases in a document of more than 1000 and the aliased share passes 99% (for
  documents up to 400,000 nodes), falling linearly to 10% at 4,000,000 nodes. Here the same
  counts are kept from the event stream, without expanding anything until the rule allows it.
* **Expanded size.** The decoded value may not be larger than :data:`MAX_EXPANDED` (an estimate
  of its JSON size): twice the request body limit, which no YAML body within that limit reaches
  without aliases, while a few aliases of one large string still cannot blow up.
* **Depth.** Nesting deeper than :data:`MAX_DEPTH` is refused for YAML and JSON alike. Go's
  decoders allow 10000 levels, but kplane stores and answers objects with orjson, which writes
  at most 254; 128 leaves room for managedFields (a little deeper than the object), watch events
  and List/Table wrappers, and is far beyond any real object (a Deployment's deepest field is
  about ten levels down).
* **Values JSON cannot hold.** As ``sigs.k8s.io/yaml`` converts YAML to JSON: map keys that are
  numbers or booleans become strings, other keys (null, lists, maps) are refused; timestamps stay
  the strings they are written as (go-yaml v2); integers outside 64 bits become floats (go-yaml
  v2, and orjson does the same for JSON); ``.nan`` and ``.inf`` are refused.
* **Duplicate keys** are kept (the last one wins, as in Go) and reported in
  :attr:`Decoded.duplicates` as ``fieldValidation`` strict-decoding errors, worded as Kubernetes
  words them: ``duplicate field "spec.replicas"`` for JSON, ``line 7: key "replicas" already set
  in map`` for YAML.

The YAML decoder never recurses (PyYAML's composer does, and fails at ~900 levels): it builds
values from libyaml's event stream (``CSafeLoader``'s parser when PyYAML has it, the pure-Python
parser otherwise). Errors are :class:`~kplane.core.meta.errors.APIError` 400s.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass, field
from typing import Any

import orjson
import yaml

from kplane.core.meta import errors

MAX_BODY = 3 * 1024 * 1024  # kube-apiserver's request body limit
MAX_DEPTH = 128
MAX_EXPANDED = 2 * MAX_BODY

_Loader: type = getattr(yaml, "CSafeLoader", yaml.SafeLoader)
_TAG = "tag:yaml.org,2002:"
_INT64_MIN, _UINT64_END = -(2**63), 2**64
_JSON_STRING = re.compile(rb'"(?:[^"\\]|\\.)*"')
_MERGE = object()  # the value of a ``<<`` key: mappings merged into the enclosing one


@dataclass(slots=True)
class Decoded:
    """A decoded body, and its duplicate keys as strict-decoding errors (first seen first)."""

    value: Any
    duplicates: list[str] = field(default_factory=list)


def decode_json(body: bytes) -> Decoded:
    try:
        value = orjson.loads(body)
    except orjson.JSONDecodeError as err:
        if str(err).startswith("depth limit exceeded"):
            raise _too_deep("JSON") from None
        raise errors.bad_request(f"the request body is not valid JSON: {err}") from None
    members = _check_json(value)
    duplicates = _json_duplicates(body) if members != _JSON_STRING.sub(b"", body).count(b":") else []
    return Decoded(value, duplicates)


def _check_json(value: Any) -> int:
    """The number of object members in ``value``, after checking its depth (no recursion)."""
    members = 0
    stack = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > MAX_DEPTH:
            raise _too_deep("JSON")
        if isinstance(node, dict):
            members += len(node)
            stack.extend((v, depth + 1) for v in node.values() if isinstance(v, (dict, list)))
        elif isinstance(node, list):
            stack.extend((v, depth + 1) for v in node if isinstance(v, (dict, list)))
    return members


class _Members(dict):  # type: ignore[type-arg]
    """A decoded JSON object that remembers which of its keys appeared more than once."""

    __slots__ = ("repeated",)

    def __init__(self, pairs: list[tuple[str, Any]]) -> None:
        super().__init__(pairs)
        self.repeated: list[str] = []
        if len(self) < len(pairs):
            seen: set[str] = set()
            for key, _ in pairs:
                if key in seen:
                    self.repeated.append(key)
                seen.add(key)


def _json_duplicates(body: bytes) -> list[str]:
    """``duplicate field "<path>"`` for each repeated key (only called when there are some:
    orjson keeps no record of them, so the body is decoded once more, by the stdlib)."""
    found: list[str] = []
    stack: list[tuple[Any, str]] = [(json.loads(body, object_pairs_hook=_Members), "")]
    while stack:
        node, path = stack.pop()
        if isinstance(node, _Members):
            found += [f'duplicate field "{_join(path, k)}"' for k in dict.fromkeys(node.repeated)]
            stack.extend((v, _join(path, k)) for k, v in reversed(node.items()))
        elif isinstance(node, list):
            stack.extend((v, f"{path}[{i}]") for i, v in reversed(list(enumerate(node))))
    return found


def _join(path: str, key: str) -> str:
    return f"{path}.{key}" if path else key


def _too_deep(what: str) -> errors.APIError:
    prefix = "error decoding JSON" if what == "JSON" else "error converting YAML to JSON: yaml"
    return errors.bad_request(f"{prefix}: exceeded max depth of {MAX_DEPTH}")


def _yaml_error(message: str) -> errors.APIError:
    return errors.bad_request(f"error converting YAML to JSON: {message}")


def _excessive_aliasing(decoded: int, aliased: int) -> bool:
    """go-yaml's rule (see the module docstring)."""
    if aliased <= 100 or decoded <= 1000:
        return False
    if decoded <= 400_000:
        allowed = 0.99
    elif decoded >= 4_000_000:
        allowed = 0.10
    else:
        allowed = 0.99 - 0.89 * (decoded - 400_000) / 3_600_000
    return aliased / decoded > allowed


class _Collection:
    """A mapping or sequence being built, with what its anchor needs to record when it ends."""

    __slots__ = ("value", "anchor", "first_node", "first_byte", "key", "key_line", "merges")

    def __init__(self, value: dict[str, Any] | list[Any], anchor: str | None, nodes: int, size: int) -> None:
        self.value = value
        self.anchor = anchor
        self.first_node, self.first_byte = nodes, size
        self.key: Any = None  # a mapping's pending key; None: the next scalar is a key
        self.key_line = 0
        self.merges: list[Any] = []


class _YamlBuilder:
    def __init__(self) -> None:
        self.stack: list[_Collection] = []
        self.anchors: dict[str, tuple[Any, int, int]] = {}  # value, nodes, expanded size
        self.open_anchors: set[str] = set()
        self.nodes = self.aliased = self.size = 0
        self.root: Any = None
        self.duplicates: list[str] = []

    def count(self, nodes: int, size: int, aliased: int = 0) -> None:
        self.nodes += nodes
        self.size += size
        self.aliased += aliased
        if aliased and _excessive_aliasing(self.nodes, self.aliased):
            raise _yaml_error("yaml: document contains excessive aliasing")
        if self.size > MAX_EXPANDED:
            raise _yaml_error(f"the document expands to more than {MAX_EXPANDED} bytes of JSON")

    def start(self, value: dict[str, Any] | list[Any], anchor: str | None) -> None:
        self.count(1, 2)
        if len(self.stack) >= MAX_DEPTH:
            raise _too_deep("YAML")
        if anchor is not None:
            self.open_anchors.add(anchor)
        self.stack.append(_Collection(value, anchor, self.nodes, self.size))

    def end(self, line: int) -> None:
        done = self.stack.pop()
        value = done.value
        if isinstance(value, dict):
            for source in done.merges:
                for k, v in _merge_sources(source, line):
                    value.setdefault(k, v)
        if done.anchor is not None:
            self.open_anchors.discard(done.anchor)
            self.anchors[done.anchor] = (value, self.nodes - done.first_node + 1, self.size - done.first_byte + 2)
        self.add(value, line, scalar=False)

    def alias(self, anchor: str, line: int) -> None:
        if anchor not in self.anchors:
            problem = "contains itself" if anchor in self.open_anchors else "is not defined"
            raise _yaml_error(f"yaml: line {line}: anchor '{anchor}' {problem}")
        value, nodes, size = self.anchors[anchor]
        self.count(1 + nodes, size, aliased=nodes)
        if isinstance(value, (dict, list)):
            value = orjson.loads(orjson.dumps(value))  # a copy, as go-yaml decodes it again
        self.add(value, line, scalar=not isinstance(value, (dict, list)))

    def add(self, value: Any, line: int, *, scalar: bool) -> None:
        if not self.stack:
            self.root = value
            return
        parent = self.stack[-1]
        container = parent.value
        if isinstance(container, list):
            container.append(value)
        elif parent.key is None:
            parent.key = _MERGE if value is _MERGE else _json_key(value, scalar, line)
            parent.key_line = line
        else:
            key, parent.key = parent.key, None
            if key is _MERGE:
                parent.merges.append(value)
                return
            if key in container:
                self.duplicates.append(f'line {parent.key_line}: key "{key}" already set in map')
            container[key] = value


def decode_yaml(body: bytes) -> Decoded:
    loader = _Loader(body)
    builder = _YamlBuilder()
    documents = 0
    try:
        while True:
            event = loader.get_event()
            if event is None or isinstance(event, yaml.StreamEndEvent):
                break
            line = event.start_mark.line + 1 if event.start_mark else 0
            if isinstance(event, yaml.ScalarEvent):
                value = _scalar(loader, event, line)
                size = len(value) + 2 if isinstance(value, str) else 8
                builder.count(1, size)
                if event.anchor is not None:
                    builder.anchors[event.anchor] = (value, 1, size)
                builder.add(value, line, scalar=True)
            elif isinstance(event, yaml.MappingStartEvent):
                builder.start({}, event.anchor)
            elif isinstance(event, yaml.SequenceStartEvent):
                builder.start([], event.anchor)
            elif isinstance(event, (yaml.MappingEndEvent, yaml.SequenceEndEvent)):
                builder.end(line)
            elif isinstance(event, yaml.AliasEvent):
                builder.alias(event.anchor, line)
            elif isinstance(event, yaml.DocumentStartEvent):
                documents += 1
                if documents > 1:
                    raise _yaml_error(f"yaml: line {line}: expected a single document in the stream, found another")
    except yaml.YAMLError as err:
        raise _yaml_error(" ".join(str(err).split())) from None
    finally:
        loader.dispose()
    return Decoded(builder.root, builder.duplicates)


def _scalar(loader: Any, event: yaml.ScalarEvent, line: int) -> Any:
    """A scalar as go-yaml v2 decodes it into ``interface{}``, made JSON-safe."""
    text = event.value
    tag = event.tag
    if tag is None or tag == "!":
        tag = loader.resolve(yaml.ScalarNode, text, event.implicit)
    if not tag.startswith(_TAG):
        return text  # a local tag (``!foo``): the value as written
    kind = tag[len(_TAG):]
    node = yaml.ScalarNode(tag, text)
    try:
        if kind == "null":
            return None
        if kind == "bool":
            return loader.construct_yaml_bool(node)
        if kind == "int":
            number = loader.construct_yaml_int(node)
            return number if _INT64_MIN <= number < _UINT64_END else _float_or_text(number, text)
        if kind == "float":
            number = loader.construct_yaml_float(node)
            if math.isnan(number) or math.isinf(number):
                raise _yaml_error(f"json: unsupported value: {'NaN' if math.isnan(number) else '+Inf' if number > 0 else '-Inf'}")
            return number
        if kind == "binary":
            return loader.construct_yaml_binary(node).decode("utf-8", errors="replace")
        if kind == "merge":
            return _MERGE
    except (ValueError, TypeError, yaml.YAMLError):
        raise _yaml_error(f"yaml: line {line}: cannot decode !!str `{text[:64]}` as a !!{kind}") from None
    return text  # str, timestamp (go-yaml v2 keeps its text), and other core tags


def _float_or_text(number: int, text: str) -> float | str:
    try:
        return float(number)
    except OverflowError:
        return text  # go-yaml: too large even for a float64, so a string


def _json_key(key: Any, scalar: bool, line: int) -> str:
    """A map key as ``sigs.k8s.io/yaml`` turns it into a JSON member name."""
    if isinstance(key, str):
        return key
    if isinstance(key, bool):
        return "true" if key else "false"
    if isinstance(key, int):
        return str(key)
    if isinstance(key, float):
        return _go_float32(key)
    what = "null" if scalar else "a map" if isinstance(key, dict) else "a list"
    raise _yaml_error(f"yaml: line {line}: a map key must be a string, number or boolean, not {what}")


def _go_float32(number: float) -> str:
    """``strconv.FormatFloat(f, 'g', -1, 32)``: the shortest text that reads back as the same float32."""
    single = struct.unpack("f", struct.pack("f", number))[0]
    for digits in range(1, 10):
        text = f"{number:.{digits}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == single:
            return text
    return repr(number)


def _merge_sources(source: Any, line: int) -> list[tuple[str, Any]]:
    """The members a ``<<`` value merges in, earlier mappings first (the first one wins)."""
    maps = source if isinstance(source, list) else [source]
    if not all(isinstance(m, dict) for m in maps):
        raise _yaml_error(f"yaml: line {line}: map merge requires map or sequence of maps as the value")
    return [item for m in maps for item in m.items()]
