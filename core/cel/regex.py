"""Regular expressions as Go's ``regexp`` runs them: RE2 syntax and time linear in the input.

Kubernetes compiles a schema's ``pattern`` and the patterns of CEL's ``matches``/``find``/
``findAll`` with Go's RE2 engine, so no pattern backtracks catastrophically. Python's ``re``
offers neither (other syntax, exponential backtracking), so every pattern here runs on RE2:
google-re2 compiles a schema's pattern and a rule's constant ``matches`` pattern once (the CEL
implementation's own RE2 compiles a pattern again at every evaluation: 80 ms a match for
``^\\p{L}{0,60}$``); CEL's regex extension's ``regex.replace`` finds the matches for ``find``
and ``findAll``. The CRD's check of a ``pattern`` and a failing ``find`` word RE2's refusal as
Go does.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Callable

import re2
from cel_expr_python import cel

_ENV = cel.NewEnv(config=cel.NewEnvConfigFromYaml("extensions:\n  - name: optional\n  - name: regex\n"),
                  variables={"s": cel.Type.STRING, "p": cel.Type.STRING, "r": cel.Type.STRING})
# Every match of p in s, each between two markers (a character s does not hold): RE2's global
# replace visits the matches as Go's FindAllString does (empty ones too, but not right after a
# match), whatever capture groups the pattern has.
_WRAP_MATCHES = _ENV.compile("regex.replace(s, p, r)")
_MARKERS = range(0xE000, 0xF900)  # private-use characters
_OPTIONS = re2.Options()
_OPTIONS.log_errors = False  # a refused pattern is the caller's answer, not a line on stderr

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

    __slots__ = ("source", "error", "_search")

    def __init__(self, source: str) -> None:
        self.source = source
        self.error = _go_only_error(source)
        self._search: Callable[[str], object] | None = None
        if self.error:
            return
        try:
            self._search = re2.compile(source, _OPTIONS).search
        except re2.error as err:
            self.error = go_error(err.args[0].decode(errors="replace") if err.args else "")

    def matches(self, value: str) -> bool:
        """Whether ``value`` contains a match (Go's ``MatchString``: not anchored)."""
        return self._search is not None and self._search(value) is not None


@functools.lru_cache(maxsize=4096)
def _pattern(source: str) -> Pattern:
    return Pattern(source)


def matches(text: str, source: str) -> bool:
    """CEL's ``matches`` with a constant pattern (the rules' constants: each compiled once).
    ValueError, in Go's words, when ``source`` is refused."""
    pattern = _pattern(source)
    if pattern.error:
        raise ValueError(pattern.error)
    return pattern.matches(text)


def compile_error(source: str) -> str | None:
    """Why Go's ``regexp.Compile`` refuses ``source`` (its wording), or None."""
    return Pattern(source).error or None


def find_all(text: str, source: str, limit: int = -1) -> list[str]:
    """Go's ``FindAllString(text, limit)``: the successive non-overlapping leftmost-first
    matches (all when ``limit`` < 0). ValueError, in Go's words, when ``source`` is refused."""
    problem = _go_only_error(source)
    if problem:
        raise ValueError(problem)
    if limit == 0:
        return []
    present = set(text)
    marker = next((chr(c) for c in _MARKERS if chr(c) not in present), None)
    if marker is None:  # the text holds every marker: only a text of 6,400+ distinct characters
        raise ValueError("text too diverse to search")
    result = _WRAP_MATCHES.eval(data={"s": text, "p": source, "r": f"{marker}\\0{marker}"})
    if result.type() == cel.Type.ERROR:
        raise ValueError(go_error(str(result.value())))
    found = result.plain_value().split(marker)[1::2]
    return found if limit < 0 else found[:limit]


def find(text: str, source: str) -> str:
    """Go's ``FindString``: the leftmost-first match, "" when there is none."""
    found = find_all(text, source, 1)
    return found[0] if found else ""
