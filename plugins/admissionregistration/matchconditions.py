"""``matchConditions`` (kube's ``admission/plugin/webhook/matchconditions``): CEL conditions a
request must meet, all of them, before a webhook is called or a policy evaluated.

Compiled once per configuration; evaluated per request. A false condition means no match (and
names the condition); errors, when no condition is false, are returned for the caller's
``failurePolicy`` to decide (``Fail``: the request fails; ``Ignore``: no match).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kplane.plugins.admissionregistration.attributes import Attributes
from kplane.plugins.admissionregistration.expressions import (
    CompileError, Declarations, EvaluationError, activation, compile_expression, evaluate)


@dataclasses.dataclass(frozen=True, slots=True)
class MatchResult:
    """One request's verdict; ``error`` is kube's wording of the conditions' errors ("" when none)."""

    matches: bool
    failed_condition: str = ""
    error: str = ""


@dataclasses.dataclass(frozen=True, slots=True)
class _Condition:
    name: str
    expression: str
    program: Any  # None when it did not compile
    compile_error: str = ""


class Matcher:
    """A list of ``matchConditions`` (``{"name", "expression"}`` wire dicts), compiled."""

    def __init__(self, conditions: Iterable[Mapping[str, Any]] | None, declarations: Declarations = Declarations()) -> None:
        self.conditions = tuple(self._compile(c, declarations) for c in conditions or ())

    @staticmethod
    def _compile(condition: Mapping[str, Any], declarations: Declarations) -> _Condition:
        name, expression = str(condition.get("name") or ""), str(condition.get("expression") or "")
        try:
            return _Condition(name, expression, compile_expression(expression, declarations))
        except CompileError as err:
            return _Condition(name, expression, None, err.detail)

    def __bool__(self) -> bool:
        return bool(self.conditions)

    def match(self, attrs: Attributes, version: str, uid: str = "", **variables: Any) -> MatchResult:
        """The verdict on ``attrs`` seen in ``version`` (``variables``: ``namespace``,
        ``params``, ``authorizer`` as :func:`.expressions.activation` takes them)."""
        if not self.conditions:
            return MatchResult(True)
        return self.match_activation(activation(attrs, version, uid, **variables))

    def match_activation(self, data: dict[str, Any], run: Callable[[Any, dict[str, Any]], Any] = evaluate) -> MatchResult:
        """The verdict on an activation already built (a policy builds one per request, and
        evaluates through ``run`` so that its conditions may read its variables)."""
        errors: list[str] = []
        for condition in self.conditions:
            if condition.program is None:
                errors.append(f"compilation error: {condition.compile_error}")
                continue
            try:
                value = run(condition.program, data)
            except EvaluationError as err:
                errors.append(f"expression '{condition.expression}' resulted in error: {err.detail}")
                continue
            if value is False:  # kube's: only false fails a condition (a dyn one may give anything)
                return MatchResult(False, condition.name)
        if errors:
            return MatchResult(False, error=errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]")
        return MatchResult(True)
