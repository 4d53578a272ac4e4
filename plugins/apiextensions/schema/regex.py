"""A schema's ``pattern`` matched as Go's ``regexp`` does: RE2 syntax and linear time.

Kubernetes compiles patterns with Go's RE2 engine, so a pattern cannot backtrack
catastrophically and a hostile value costs time linear in its length. Python's ``re`` offers
neither (other syntax, exponential backtracking), so a pattern runs on the RE2 engine of the CEL
implementation: an expression ``s.matches("<pattern>")`` compiled once per pattern.
"""

from __future__ import annotations

import orjson
from cel_expr_python import cel

_ENV = cel.NewEnv(variables={"s": cel.Type.STRING})


class Pattern:
    """One compiled pattern; ``error`` is why RE2 refused it (it then matches nothing)."""

    __slots__ = ("source", "error", "_expression")

    def __init__(self, source: str) -> None:
        self.source = source
        self.error = ""
        self._expression: cel.Expression | None = _ENV.compile(f"s.matches({orjson.dumps(source).decode()})")
        trial = self._expression.eval(data={"s": ""})  # RE2 compiles the pattern on first use
        if trial.type() == cel.Type.ERROR:
            self._expression = None
            self.error = str(trial.value()).removeprefix("INVALID_ARGUMENT: ")

    def matches(self, value: str) -> bool:
        """Whether ``value`` contains a match (Go's ``MatchString``: not anchored)."""
        if self._expression is None:
            return False
        return self._expression.eval(data={"s": value}).value() is True
