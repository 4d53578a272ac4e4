"""A policy's ``variables`` (kube's ``cel.CompositedCompiler``): named expressions other
expressions read as ``variables.name``, each evaluated at most once per evaluation, and only
when an expression that runs reads it - a variable that fails is an error only for the
expressions that use it.

Which variables an expression reads is found in its checked tree (``variables.x`` selections);
one that reaches ``variables`` otherwise (``variables["x"]``) is given all of them.
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable, Mapping
from typing import Any

from kplane.plugins.admissionregistration.expressions import (
    CompileError, Declarations, EvaluationError, compile_expression, evaluate, reads)


@functools.lru_cache(maxsize=8192)
def variables_read(program: Any) -> frozenset[str] | None:
    """The names of the variables ``program`` reads (None: it may read any), from what it reads
    of ``variables`` (:func:`~kplane.plugins.admissionregistration.expressions.reads`)."""
    paths = reads(program).get("variables", ())
    return None if paths is None else frozenset(path[0] for path in paths)


@dataclasses.dataclass(frozen=True, slots=True)
class Variable:
    name: str
    expression: str
    program: Any  # None when it did not compile
    error: str  # the compile error, "" when none
    reads: frozenset[str] | None


def compile_variables(wires: Iterable[Mapping[str, Any]] | None, declarations: Declarations) -> tuple[Variable, ...]:
    """``spec.variables`` compiled in order (each may read the ones before it)."""
    out = []
    for wire in wires or ():
        name, expression = str(wire.get("name") or ""), str(wire.get("expression") or "")
        try:
            program = compile_expression(expression, declarations, want="DYN")
            out.append(Variable(name, expression, program, "", variables_read(program)))
        except CompileError as err:
            out.append(Variable(name, expression, None, err.detail, frozenset()))
    return tuple(out)


class Composition:
    """One evaluation's variables: resolved into ``data["variables"]`` as expressions need them."""

    def __init__(self, variables: tuple[Variable, ...], data: dict[str, Any]) -> None:
        self._variables = {v.name: v for v in variables}
        self._errors: dict[str, str] = {}
        self._values: dict[str, Any] = {}
        self.data = data
        data["variables"] = self._values

    def _resolve(self, name: str) -> None:
        if name in self._values or name in self._errors or name not in self._variables:
            return
        variable = self._variables[name]
        if variable.program is None:
            self._errors[name] = f'composited variable "{name}" fails to compile: {variable.error}'
            return
        self._errors[name] = f'composited variable "{name}" is being evaluated'  # a cycle reads as an error
        failed = self.need(variable.reads)
        if failed:
            self._errors[name] = failed
            return
        try:
            self._values[name] = evaluate(variable.program, self.data)
            del self._errors[name]
        except EvaluationError as err:
            self._errors[name] = err.detail

    def need(self, names: frozenset[str] | None) -> str:
        """Evaluate the variables ``names`` (None: all); the first one's error, "" when none."""
        if not names and names is not None:
            return ""
        for name in self._variables if names is None else sorted(names):
            self._resolve(name)
            if name in self._errors:
                return self._errors[name]
        return ""

    def evaluate(self, program: Any, data: dict[str, Any] | None = None) -> Any:
        """``program`` on this evaluation's data (``data``: the same, as a matcher passes it),
        the variables it reads first. Raises EvaluationError."""
        failed = self.need(variables_read(program))
        if failed:
            raise EvaluationError(failed)
        return evaluate(program, self.data)
