"""CEL object construction in mutations (``Object{spec: Object.spec{replicas: 1}}``,
``JSONPatch{op: "add", path: "/x", value: 1}``), rewritten to map literals before compiling.

Kubernetes declares ``Object`` and its nested types from the kind's schema (cel-go's dynamic
types) and ``JSONPatch`` as a type of four fields. cel-cpp only constructs protobuf messages
from a descriptor pool; a pool for every kind's schema, kept in step with CRDs, and the
messages converted back to JSON afterwards, costs far more than it buys. A constructed object
is only ever read as JSON, so the literal becomes the map it denotes: the type name is blanked
out (keeping columns for error carets) and field names quoted (``?field:`` stays optional).

What the type names still say is checked here, statically: a nested literal's name must be its
field's path (``Object.spec{selector: Object.spec.selector{}}``), as kube checks at run time;
JSONPatch has only ``op``, ``path``, ``from`` and ``value``. A mismatch is kept and reported
when the mutation runs (kube's "type mismatch"); an unknown JSONPatch field does not compile.
"""

from __future__ import annotations

import dataclasses
import re

# One token: comments, strings (with r/b prefixes, triple quotes), names, numbers, punctuation.
_TOKEN = re.compile(r"""
    (?P<space>\s+|//[^\n]*)
  | (?P<string>(?:[rR][bB]?|[bB][rR]?)?(?:\"\"\"(?:\\.|[^\\])*?\"\"\"|'''(?:\\.|[^\\])*?'''
                                         |"(?:\\.|[^"\\\n])*"|'(?:\\.|[^'\\\n])*'))
  | (?P<name>[A-Za-z_][A-Za-z0-9_]*)
  | (?P<number>[0-9][0-9A-Za-z_.]*)
  | (?P<punct>\S)
""", re.VERBOSE | re.DOTALL)
_KEYWORDS = {"in", "true", "false", "null"}
_JSONPATCH_FIELDS = {"op", "path", "from", "value"}


class ConstructionError(Exception):
    """A construction that cannot compile (an unknown JSONPatch field)."""


@dataclasses.dataclass(frozen=True, slots=True)
class Rewritten:
    source: str  # the expression with map literals for constructions
    mismatch: str = ""  # kube's "type mismatch" text, reported when the mutation runs
    #: where each construction's map literal opens in ``source``: typed objects in kube, whose
    #: fields' types differ as they may (cel-go's homogeneous-literal check passes them by)
    constructions: frozenset[int] = frozenset()


@dataclasses.dataclass(slots=True)
class _Frame:
    closer: str
    message: str = ""  # the constructed type's name ("" for (), [], a map literal)
    field: str = ""  # the field whose value is being written (a message frame)
    expect_field: bool = False  # next token may be a field name


def _tokens(source: str) -> list[tuple[str, str, int]]:
    out = []
    for m in _TOKEN.finditer(source):
        kind = m.lastgroup or "punct"
        if kind != "space":
            out.append((kind, m.group(), m.start()))
    return out


def rewrite(source: str) -> Rewritten:
    """``source`` with ``Object...{}`` and ``JSONPatch{}`` constructions as map literals."""
    toks = _tokens(source)
    if not any(kind == "name" and text in ("Object", "JSONPatch") for kind, text, _ in toks):
        return Rewritten(source)
    edits: list[tuple[int, int, str]] = []  # (start, end, replacement)
    stack: list[_Frame] = []
    braces: list[int] = []  # the constructions' "{" in ``source``
    mismatch = ""
    for i, (kind, text, pos) in enumerate(toks):
        top = stack[-1] if stack else None
        if top is not None and top.message and top.expect_field:
            name_at = i + 1 if text == "?" else i
            if (name_at < len(toks) and toks[name_at][0] == "name" and name_at + 1 < len(toks)
                    and toks[name_at + 1][1] == ":"):
                if i == name_at:
                    field = text
                    if top.message == "JSONPatch" and field not in _JSONPATCH_FIELDS:
                        raise ConstructionError(f"undefined field '{field}'")
                    top.field = field
                    edits.append((pos, pos + len(text), f'"{text}"'))
                    top.expect_field = False
                continue
            top.expect_field = False
        if text == "{":
            name, start = _qualified_name(toks, i)
            frame = _Frame("}")
            if name and (name == "JSONPatch" or name == "Object" or name.startswith("Object.")):
                expected = _expected_name(stack)
                if expected and name != expected and not mismatch:
                    mismatch = (f"type mismatch: unexpected type name \"{name}\", expected \"{expected}\", "
                                f"which matches field name path from root Object type")
                frame = _Frame("}", message=name, expect_field=True)
                edits.append((start, pos, " " * (pos - start)))
                braces.append(pos)
            stack.append(frame)
        elif text in ("(", "["):
            stack.append(_Frame(")" if text == "(" else "]"))
        elif text in (")", "]", "}"):
            if stack:
                stack.pop()
        elif text == "," and top is not None and top.message:
            top.expect_field = True
    out = source
    for start, end, replacement in sorted(edits, reverse=True):
        out = out[:start] + replacement + out[end:]
    grown = lambda at: sum(len(r) - (end - start) for start, end, r in edits if start < at)  # noqa: E731
    return Rewritten(out, mismatch, frozenset(at + grown(at) for at in braces))


def _qualified_name(toks: list[tuple[str, str, int]], brace: int) -> tuple[str, int]:
    """The ``a.b.c`` (or ``.a.b``) just before the brace at ``brace``, with its start offset."""
    j = brace - 1
    parts: list[str] = []
    while j >= 0 and toks[j][0] == "name" and toks[j][1] not in _KEYWORDS:
        parts.append(toks[j][1])
        if j >= 1 and toks[j - 1][1] == ".":
            j -= 2
        else:
            break
    if not parts:
        return "", -1
    start = toks[j][2] if j >= 0 and toks[j][1] != "." else toks[j + 1][2]
    if j >= 0 and toks[j][1] == ".":  # a leading dot: the root scope
        start = toks[j][2]
    return ".".join(reversed(parts)).lstrip("."), start


def _expected_name(stack: list[_Frame]) -> str:
    """The type a literal must name where it stands: its field's path below the enclosing
    construction (inside lists too), or nothing when it stands elsewhere."""
    for frame in reversed(stack):
        if frame.message:
            if not frame.message.startswith("Object") or not frame.field:
                return ""
            return f"{frame.message}.{frame.field}"
        if frame.closer != "]":
            return ""
    return ""
