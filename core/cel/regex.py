"""Regular expressions as Go's ``regexp`` runs them: RE2 syntax and time linear in the input.

Kubernetes compiles a schema's ``pattern`` and the patterns of CEL's ``matches``/``find``/
``findAll`` with Go's RE2 engine, so no pattern backtracks catastrophically. Python's ``re``
offers neither (other syntax, exponential backtracking), so every pattern here runs on RE2
(google-re2). A schema's pattern and a rule's constant pattern are compiled once, as Go's
``regexp`` and cel-go do (the CEL implementation's own ``matches`` compiles its pattern at every
evaluation: 80 ms a call for ``^\\p{L}{0,60}$``). The CRD's check of a ``pattern`` and a
failing ``find`` word RE2's refusal as Go does.
"""

from __future__ import annotations

import functools
import re
from typing import Any

import re2

_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is the caller's answer, not a line on stderr
# Only whole matches are asked for; RE2 tracking every group made a match of 5,000 nested empty
# groups over 100 kB take 0.7 s (0.1 ms without).
_OPTIONS.never_capture = True

# RE2's error codes (re2.cc CodeText) as Go's regexp/syntax names them.
_GO_CODES = {
    "invalid escape sequence": "invalid escape sequence",
    "invalid character class": "invalid character class",
    "invalid character class range": "invalid character class range",
    "missing ]": "missing closing ]",
    "missing )": "missing closing )",
    "unexpected )": "unexpected )",
    "no argument for repetition operator": "missing argument to repetition operator",
    "invalid repetition size": "invalid repeat count",
    "bad repetition operator": "invalid nested repetition operator",
    "invalid perl operator": "invalid or unsupported Perl syntax",
    "invalid UTF-8": "invalid UTF-8",
    "invalid named capture group": "invalid named capture",
    "pattern too large - compile failed": "expression too large",
}
# ``\C`` (any byte) is RE2's, not Go's; found outside ``\Q...\E`` after an even run of backslashes.
_ANY_BYTE = re.compile(r"(?<!\\)(?:\\\\)*\\C")
_QUOTED = re.compile(r"\\Q.*?(?:\\E|$)", re.S)


def go_error(re2_error: str) -> str:
    """RE2's error text (``invalid regular expression: missing ): a(``) as Go's
    ``regexp.Compile`` words it (``error parsing regexp: missing closing ): `a(```)."""
    text = re2_error.removeprefix("INVALID_ARGUMENT: ").removeprefix("invalid regular expression: ")
    if text == "trailing \\":
        return "error parsing regexp: trailing backslash at end of expression: ``"
    code, sep, arg = text.partition(": ")
    if sep and code in _GO_CODES:
        return f"error parsing regexp: {_GO_CODES[code]}: `{arg}`"
    return f"error parsing regexp: {text}"


def _go_only_error(source: str) -> str:
    """What Go refuses that RE2 takes."""
    found = _ANY_BYTE.search(_QUOTED.sub("", source))
    return "error parsing regexp: invalid escape sequence: `\\C`" if found else ""


class Pattern:
    """One compiled pattern; ``error`` is Go's reason to refuse it (it then matches nothing)."""

    __slots__ = ("source", "error", "_regexp")

    def __init__(self, source: str) -> None:
        self.source = source
        self.error = _go_only_error(source)
        self._regexp: Any = None  # re2._Regexp
        if self.error:
            return
        try:
            self._regexp = re2.compile(source, _OPTIONS)
        except re2.error as err:
            self.error = go_error(err.args[0].decode(errors="replace") if err.args else "")

    def matches(self, value: str) -> bool:
        """Whether ``value`` contains a match (Go's ``MatchString``: not anchored)."""
        return self._regexp is not None and self._regexp.search(value) is not None

    def find_all(self, text: str, limit: int = -1) -> list[str]:
        """Go's ``FindAllString(text, limit)``: the successive non-overlapping leftmost-first
        matches (all when ``limit`` < 0)."""
        found: list[str] = []
        if self._regexp is None:
            return found
        previous_end = -1
        for match in self._regexp.finditer(text):
            if len(found) == limit:
                break
            start, end = match.span()
            if not (start == end == previous_end):  # Go skips an empty match right after a match
                found.append(match.group(0))
            previous_end = end
        return found


@functools.lru_cache(maxsize=4096)
def _constant(source: str) -> Pattern:
    return Pattern(source)


def compiled(source: str, *, constant: bool = False) -> Pattern:
    """``source`` compiled; ValueError, in Go's words, when it is refused. A ``constant`` (a
    pattern written in a rule or schema) is compiled once and kept; one computed from the object
    is compiled at each call, unless among the 128 google-re2 itself keeps."""
    pattern = _constant(source) if constant else Pattern(source)
    if pattern.error:
        raise ValueError(pattern.error)
    return pattern


def compile_error(source: str) -> str | None:
    """Why Go's ``regexp.Compile`` refuses ``source`` (its wording), or None."""
    return Pattern(source).error or None
