"""Label and field selectors, parsed and matched the way kube-apiserver does.

The label grammar, error texts and canonical ``String()`` follow ``k8s.io/apimachinery/pkg/labels``
and the field grammar (with backslash escaping) follows ``pkg/fields``, because clients such as
kubectl print the server's parse errors verbatim and rely on the same edge cases (``a=`` means
"a is empty", ``x in ()`` means "x is empty", ``in`` and ``notin`` are valid keys).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, NoReturn

from kplane.core.meta.errors import APIError, FieldError, bad_request, forbidden, invalid, required
from kplane.core.meta.types import LabelSelector, LabelSelectorRequirement
from kplane.core.meta.validation import is_qualified_name, is_valid_label_value, validate_label_name, validate_labels

# selection.Operator values, spelled as k8s spells them (they appear in error messages).
IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS = "in", "notin", "=", "==", "!="
EXISTS, DOES_NOT_EXIST, GREATER_THAN, LESS_THAN = "exists", "!", "gt", "lt"
_BINARY_OPERATORS = (IN, NOT_IN, EQUALS, DOUBLE_EQUALS, NOT_EQUALS, GREATER_THAN, LESS_THAN)
_INT64 = re.compile(r"[+-]?[0-9]+")


def _selector_error(message: str) -> NoReturn:
    """Every selector failure is a 400 whose message is the parser's own error text."""
    raise bad_request(message)


def _aggregate(errors: list[FieldError]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message alone, several in brackets, deduplicated."""
    messages = list(dict.fromkeys(str(e) for e in errors))
    return messages[0] if len(messages) == 1 else "[" + ", ".join(messages) + "]"


def _parse_int64(text: str) -> int | None:
    """``strconv.ParseInt(text, 10, 64)``; None where Go would fail."""
    if not _INT64.fullmatch(text):
        return None
    value = int(text)
    return value if -(2**63) <= value < 2**63 else None


@dataclass(frozen=True, slots=True)
class Requirement:
    """One ``key op values`` term, validated on construction by the parser or converter."""

    key: str
    operator: str
    values: tuple[str, ...] = ()

    def matches(self, labels: Mapping[str, str]) -> bool:
        op = self.operator
        if op in (IN, EQUALS, DOUBLE_EQUALS):
            value = labels.get(self.key)
            return value is not None and value in self.values
        if op in (NOT_IN, NOT_EQUALS):
            value = labels.get(self.key)
            return value is None or value not in self.values
        if op == EXISTS:
            return self.key in labels
        if op == DOES_NOT_EXIST:
            return self.key not in labels
        value = labels.get(self.key)
        have = None if value is None else _parse_int64(value)
        want = _parse_int64(self.values[0]) if len(self.values) == 1 else None
        if have is None or want is None:
            return False
        return have > want if op == GREATER_THAN else have < want

    def __str__(self) -> str:
        op = self.operator
        if op == EXISTS:
            return self.key
        if op == DOES_NOT_EXIST:
            return "!" + self.key
        values = ",".join(sorted(self.values)) if len(self.values) > 1 else "".join(self.values)
        if op in (IN, NOT_IN):
            return f"{self.key} {op} ({values})"
        symbol = {GREATER_THAN: ">", LESS_THAN: "<"}.get(op, op)
        return f"{self.key}{symbol}{values}"


def _new_requirement(key: str, operator: str, values: Iterable[str]) -> Requirement:
    """``labels.NewRequirement`` for the operators above: validate key, arity and values, or raise 400."""
    vals = list(values)
    shown = vals or None  # upstream copies values into a nil slice, which prints as null
    errs: list[FieldError] = []
    key_errors = is_qualified_name(key)
    if key_errors:
        errs.append(invalid("key", key, "; ".join(key_errors)))
    if operator in (IN, NOT_IN):
        if not vals:
            errs.append(invalid("values", shown, "for 'in', 'notin' operators, values set can't be empty"))
    elif operator in (EQUALS, DOUBLE_EQUALS, NOT_EQUALS):
        if len(vals) != 1:
            errs.append(invalid("values", shown, "exact-match compatibility requires one single value"))
    elif operator in (EXISTS, DOES_NOT_EXIST):
        if vals:
            errs.append(invalid("values", shown, "values set must be empty for exists and does not exist"))
    elif operator in (GREATER_THAN, LESS_THAN):
        if len(vals) != 1:
            errs.append(invalid("values", shown, "for 'Gt', 'Lt' operators, exactly one value is required"))
        errs.extend(
            invalid(f"values[{i}]", v, "for 'Gt', 'Lt' operators, the value must be an integer")
            for i, v in enumerate(vals)
            if _parse_int64(v) is None
        )
    for i, v in enumerate(vals):
        value_errors = is_valid_label_value(v)
        if value_errors:
            errs.append(invalid(f"values[{i}][{key}]", v, "; ".join(value_errors)))
    if errs:
        _selector_error(_aggregate(errs))
    return Requirement(key, operator, tuple(vals))


class LabelSelectorExpr:
    """A parsed label selector: an AND of requirements, or the selector that matches nothing."""

    __slots__ = ("requirements", "_nothing")

    def __init__(self, requirements: Iterable[Requirement] = (), *, nothing: bool = False) -> None:
        # Sorted by key like internalSelector.Add, so String() is canonical.
        self.requirements: tuple[Requirement, ...] = tuple(sorted(requirements, key=lambda r: r.key))
        self._nothing = nothing

    @classmethod
    def nothing(cls) -> LabelSelectorExpr:
        return cls(nothing=True)

    @property
    def empty(self) -> bool:
        """True when the selector does not restrict anything (``labels.Everything()``)."""
        return not self._nothing and not self.requirements

    def matches(self, labels: Mapping[str, str] | None) -> bool:
        if self._nothing:
            return False
        labels = labels or {}
        return all(r.matches(labels) for r in self.requirements)

    def __str__(self) -> str:
        return ",".join(map(str, self.requirements))

    def __repr__(self) -> str:
        return "LabelSelectorExpr(<nothing>)" if self._nothing else f"LabelSelectorExpr({str(self)!r})"

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LabelSelectorExpr):
            return NotImplemented
        return self._nothing == other._nothing and self.requirements == other.requirements

    def __hash__(self) -> int:
        return hash((self._nothing, self.requirements))


# ---- label selector lexer and parser: labels.Parser's grammar, error texts and quirks ----

_END, _CLOSE, _COMMA, _NOT, _DOUBLE_EQ, _EQ, _GT, _ID, _IN, _LT, _NEQ, _NOTIN, _OPEN = range(13)
_SYMBOLS = {
    "!=": _NEQ, "==": _DOUBLE_EQ, "=": _EQ, "!": _NOT, "(": _OPEN, ")": _CLOSE, ",": _COMMA, ">": _GT, "<": _LT,
}
_KEYWORDS = {"in": _IN, "notin": _NOTIN}
_SPECIAL = frozenset("=!(),><")
_WHITESPACE = frozenset(" \t\r\n")
_OPERATOR_TOKENS = {
    _IN: IN, _EQ: EQUALS, _DOUBLE_EQ: DOUBLE_EQUALS, _GT: GREATER_THAN, _LT: LESS_THAN, _NOTIN: NOT_IN, _NEQ: NOT_EQUALS,
}


def _lex(text: str) -> list[tuple[int, str]]:
    tokens: list[tuple[int, str]] = []
    i, n = 0, len(text)
    while True:
        while i < n and text[i] in _WHITESPACE:
            i += 1
        if i >= n:
            tokens.append((_END, ""))
            return tokens
        if text[i] in _SPECIAL:
            two = text[i : i + 2]
            symbol = two if two in ("!=", "==") else text[i]
            tokens.append((_SYMBOLS[symbol], symbol))
            i += len(symbol)
            continue
        start = i
        while i < n and text[i] not in _SPECIAL and text[i] not in _WHITESPACE:
            i += 1
        word = text[start:i]
        tokens.append((_KEYWORDS.get(word, _ID), word))


class _Parser:
    """Recursive descent over the token list; in value position ``in``/``notin`` are identifiers."""

    def __init__(self, text: str) -> None:
        self.tokens = _lex(text)
        self.pos = 0

    def peek(self, values: bool = True) -> tuple[int, str]:
        tok, lit = self.tokens[self.pos]
        return (_ID if values and tok in (_IN, _NOTIN) else tok), lit

    def take(self, values: bool = True) -> tuple[int, str]:
        item = self.peek(values)
        self.pos += 1
        return item

    def parse(self) -> list[Requirement]:
        requirements: list[Requirement] = []
        while True:
            tok, lit = self.peek()
            if tok == _END:
                return requirements
            if tok not in (_ID, _NOT):
                _selector_error(f"found '{lit}', expected: !, identifier, or 'end of string'")
            try:
                requirements.append(self.requirement())
            except APIError as err:
                _selector_error(f"unable to parse requirement: {err.message}")
            tok, lit = self.take()
            if tok == _END:
                return requirements
            if tok != _COMMA:
                _selector_error(f"found '{lit}', expected: ',' or 'end of string'")
            tok, lit = self.peek()
            if tok not in (_ID, _NOT):
                _selector_error(f"found '{lit}', expected: identifier after ','")

    def requirement(self) -> Requirement:
        operator = ""
        tok, key = self.take()
        if tok == _NOT:
            operator = DOES_NOT_EXIST
            tok, key = self.take()
        if tok != _ID:
            _selector_error(f"found '{key}', expected: identifier")
        key_errors = is_qualified_name(key)
        if key_errors:
            _selector_error(str(invalid("<nil>", key, "; ".join(key_errors))))
        if self.peek()[0] in (_END, _COMMA) and operator != DOES_NOT_EXIST:
            operator = EXISTS
        if operator:
            return _new_requirement(key, operator, ())
        tok, lit = self.take(values=False)
        operator = _OPERATOR_TOKENS.get(tok, "")
        if not operator:
            _selector_error(f"found '{lit}', expected: {', '.join(_BINARY_OPERATORS)}")
        values = self.value_set() if operator in (IN, NOT_IN) else self.exact_value()
        return _new_requirement(key, operator, sorted(values))

    def value_set(self) -> set[str]:
        tok, lit = self.take()
        if tok != _OPEN:
            _selector_error(f"found '{lit}' expected: '('")
        tok, lit = self.peek()
        if tok == _CLOSE:  # "()" is the set holding the empty string
            self.take()
            return {""}
        if tok not in (_ID, _COMMA):
            _selector_error(f"found '{lit}', expected: ',', ')' or identifier")
        values = self.identifiers()
        self.take()  # identifiers() stops in front of the ')'
        return values

    def identifiers(self) -> set[str]:
        values: set[str] = set()
        while True:
            tok, lit = self.take()
            if tok == _ID:
                values.add(lit)
                tok2, lit2 = self.peek()
                if tok2 == _CLOSE:
                    return values
                if tok2 != _COMMA:
                    _selector_error(f"found '{lit2}', expected: ',' or ')'")
            elif tok == _COMMA:  # empty members: "(,a)", "(a,,b)", "(a,)"
                if not values:
                    values.add("")
                tok2 = self.peek()[0]
                if tok2 == _CLOSE:
                    values.add("")
                    return values
                if tok2 == _COMMA:
                    values.add("")
            else:
                _selector_error(f"found '{lit}', expected: ',', or identifier")

    def exact_value(self) -> set[str]:
        if self.peek()[0] in (_END, _COMMA):
            return {""}
        tok, lit = self.take()
        if tok != _ID:
            _selector_error(f"found '{lit}', expected: identifier")
        return {lit}


def parse_label_selector(text: str) -> LabelSelectorExpr:
    """``labels.Parse``: the ``labelSelector`` query parameter; raises 400 BadRequest when invalid."""
    return LabelSelectorExpr(_Parser(text).parse())


_SELECTOR_OPERATORS = {"In": IN, "NotIn": NOT_IN, "Exists": EXISTS, "DoesNotExist": DOES_NOT_EXIST}


def label_selector_from_internal(sel: LabelSelector | None) -> LabelSelectorExpr:
    """``metav1.LabelSelectorAsSelector``: None selects nothing, an empty selector everything."""
    if sel is None:
        return LabelSelectorExpr.nothing()
    requirements = [_new_requirement(k, EQUALS, [v]) for k, v in (sel.match_labels or {}).items()]
    for expr in sel.match_expressions or ():
        operator = _SELECTOR_OPERATORS.get(expr.operator)
        if operator is None:
            _selector_error(f'"{expr.operator}" is not a valid label selector operator')
        requirements.append(_new_requirement(expr.key, operator, expr.values or ()))
    return LabelSelectorExpr(requirements)


def format_label_selector(selector: Mapping[str, Any] | None) -> str:
    """A wire-form ``metav1.LabelSelector`` as selector text (``metav1.FormatLabelSelector``
    without the ``<none>``): ``app=web,tier in (a,b)``; "" selects everything."""
    selector = selector or {}
    expressions = [
        LabelSelectorRequirement(e.get("key", ""), e.get("operator", ""), e.get("values"))
        for e in selector.get("matchExpressions") or ()
    ]
    return str(label_selector_from_internal(LabelSelector(selector.get("matchLabels"), expressions)))


def validate_label_selector(sel: LabelSelector | None, path: str) -> list[FieldError]:
    """``ValidateLabelSelector`` for spec fields (e.g. ``spec.selector`` of a Deployment)."""
    if sel is None:
        return []
    errs = validate_labels(sel.match_labels, f"{path}.matchLabels")
    for i, expr in enumerate(sel.match_expressions or ()):
        at = f"{path}.matchExpressions[{i}]"
        if expr.operator in ("In", "NotIn"):
            if not expr.values:
                errs.append(required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif expr.operator in ("Exists", "DoesNotExist"):
            if expr.values:
                errs.append(
                    forbidden(f"{at}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'")
                )
        else:
            errs.append(invalid(f"{at}.operator", expr.operator, "not a valid selector operator"))
        errs.extend(validate_label_name(expr.key, f"{at}.key"))
        for j, value in enumerate(expr.values or ()):
            errs.extend(invalid(f"{at}.values[{j}]", value, msg) for msg in is_valid_label_value(value))
    return errs


# ---- field selectors ----

_FIELD_TERM_OPERATORS = ("!=", "==", "=")


def _escape_field_value(value: str) -> str:
    return value.replace("\\", "\\\\").replace(",", "\\,").replace("=", "\\=")


def _unescape_field_value(value: str) -> str:
    """``fields.UnescapeValue``: only ``\\\\``, ``\\,`` and ``\\=`` are escapes; bare ',' and '=' are errors."""
    if "\\" not in value and "," not in value and "=" not in value:
        return value
    out: list[str] = []
    in_slash = False
    for ch in value:
        if in_slash:
            if ch not in "\\,=":
                _selector_error(f"invalid field selector: invalid escape sequence: \\{ch}")
            out.append(ch)
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch in ",=":
            # Go formats the rune with %v, i.e. as its code point number.
            _selector_error(f"invalid field selector: unescaped character in value: {ord(ch)}")
        else:
            out.append(ch)
    if in_slash:
        _selector_error("invalid field selector: invalid escape sequence: \\")
    return "".join(out)


def _split_field_terms(text: str) -> list[str]:
    """Split on commas that are not escaped by a backslash."""
    terms: list[str] = []
    start = 0
    in_slash = False
    for i, ch in enumerate(text):
        if in_slash:
            in_slash = False
        elif ch == "\\":
            in_slash = True
        elif ch == ",":
            terms.append(text[start:i])
            start = i + 1
    terms.append(text[start:])
    return terms


def _split_field_term(term: str) -> tuple[str, str, str] | None:
    """The first operator wins, trying ``!=`` then ``==`` then ``=`` at each position."""
    for i in range(len(term)):
        for op in _FIELD_TERM_OPERATORS:
            if term.startswith(op, i):
                return term[:i], op, term[i + len(op) :]
    return None


class FieldSelectorExpr:
    """A parsed field selector: an AND of ``field=value`` / ``field!=value`` terms."""

    __slots__ = ("requirements",)

    def __init__(self, requirements: Iterable[tuple[str, str, str]] = ()) -> None:
        # (field, "=" | "!=", value); "==" is stored as "=" like fields.hasTerm does.
        self.requirements: list[tuple[str, str, str]] = list(requirements)

    @property
    def empty(self) -> bool:
        return not self.requirements

    def fields(self) -> set[str]:
        return {f for f, _, _ in self.requirements}

    def matches(self, fields: Mapping[str, str]) -> bool:
        # fields.Set.Get: a field the object does not have reads as "".
        for field, op, value in self.requirements:
            if (fields.get(field, "") == value) != (op == "="):
                return False
        return True

    def validate(self, allowed: Iterable[str], own_labels: bool = True) -> None:
        """Refuse fields the resource cannot filter on, as ``ConvertFieldLabel`` does (400).

        A kind with field labels of its own (``own_labels``) answers as its conversion function,
        ``field label not supported: <label>``; any other as ``DefaultMetaV1FieldSelectorConversion``.
        """
        allowed = set(allowed)
        for field, _, _ in self.requirements:
            if field not in allowed:
                if own_labels:
                    _selector_error(f"field label not supported: {field}")
                _selector_error(f'{_go_quote(field)} is not a known field selector: only "metadata.name", "metadata.namespace"')

    def __str__(self) -> str:
        return ",".join(f"{f}{op}{_escape_field_value(v)}" for f, op, v in self.requirements)

    def __repr__(self) -> str:
        return f"FieldSelectorExpr({str(self)!r})"


def parse_field_selector(text: str) -> FieldSelectorExpr:
    """``fields.ParseSelector``: the ``fieldSelector`` query parameter; raises 400 when invalid.

    Terms are sorted (as upstream), whitespace is significant, and a bare ``=`` term is dropped.
    """
    requirements: list[tuple[str, str, str]] = []
    for part in sorted(_split_field_terms(text)) if text else ():
        if not part:
            continue
        split = _split_field_term(part)
        if split is None:
            _selector_error(f"invalid selector: '{text}'; can't understand '{part}'")
        field, op, raw = split
        value = _unescape_field_value(raw)
        if field or value:
            requirements.append((field, "!=" if op == "!=" else "=", value))
    return FieldSelectorExpr(requirements)


def exact_name(expr: FieldSelectorExpr | None) -> str | None:
    """The name a ``metadata.name=X`` term pins the selector to, so a list can become a get."""
    if expr is None:
        return None
    for field, op, value in expr.requirements:
        if field == "metadata.name" and op == "=":
            return value
    return None


def _field_string(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return str(int(value)) if value.is_integer() else repr(value)
    return ""


_GO_ESCAPES = {"\a": "\\a", "\b": "\\b", "\f": "\\f", "\n": "\\n", "\r": "\\r", "\t": "\\t", "\v": "\\v",
               '"': '\\"', "\\": "\\\\"}


def _go_quote(text: str) -> str:
    """Go's ``%q`` (``strconv.Quote``) of a string, as kube-apiserver's messages quote a label."""
    out = []
    for ch in text:
        if ch in _GO_ESCAPES:
            out.append(_GO_ESCAPES[ch])
        elif ch.isprintable():
            out.append(ch)
        elif ord(ch) < 0x80:
            out.append(f"\\x{ord(ch):02x}")
        elif ord(ch) < 0x10000:
            out.append(f"\\u{ord(ch):04x}")
        else:
            out.append(f"\\U{ord(ch):08x}")
    return '"' + "".join(out) + '"'


#: Where a field label reads its value in a wire-format object: a dotted JSON path, or a function
#: of the object where Go computes the value (a bool the wire omits reads "false").
FieldPath = str | Callable[[Mapping[str, Any]], Any]


#: The field labels of a kind without labels of its own (``DefaultMetaV1FieldSelectorConversion``).
META_FIELDS: Mapping[str, FieldPath] = {"metadata.name": "metadata.name", "metadata.namespace": "metadata.namespace"}


def bool_field(path: str) -> FieldPath:
    """A Go ``bool`` field's label: the wire omits false, Go's field set reads it "false"."""
    parts = path.split(".")

    def read(obj: Mapping[str, Any]) -> bool:
        node: Any = obj
        for part in parts:
            node = node.get(part) if isinstance(node, Mapping) else None
        return node is True

    return read


def field_values(obj: Mapping[str, Any], paths: Mapping[str, FieldPath]) -> dict[str, str]:
    """The selectable field values of a wire-format object, keyed by field label.

    ``paths`` maps a label (``source``) to a dotted JSON path (``source.component``) or a
    function; missing fields and non-scalars read as "" so that ``f=`` selects objects without
    the field.
    """
    out: dict[str, str] = {}
    for label, path in paths.items():
        if callable(path):
            out[label] = _field_string(path(obj))
            continue
        node: Any = obj
        for part in path.split("."):
            node = node.get(part) if isinstance(node, Mapping) else None
            if node is None:
                break
        out[label] = _field_string(node)
    return out
