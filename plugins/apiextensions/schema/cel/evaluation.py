"""Evaluating a custom resource against its rule tree (apiextensions-apiserver's
``cel/validation.go``): ``self`` at each node, ``oldSelf`` where the old object has a value at
the same place (by property, map key, or the keys of a ``listType=map`` item), kube's errors.

On update, a failed rule that does not read ``oldSelf``, at a value equal to its stored
counterpart, is a warning rather than an error (ratcheting, as CRDValidationRatcheting does it),
so an object stored before a rule was added stays updatable.

Work per request is bounded twice: every rule's static cost was held under the per-expression
limit when the CRD was accepted (sizes bounded by the schema or the request), and one request's
evaluations stop, with kube's "out of cost budget" error, once they have run for
:data:`RUNTIME_BUDGET_SECONDS`.
"""

from __future__ import annotations

import time
from typing import Any

from kplane.api import FieldError, FieldErrorType, invalid
from kplane.api import cel
from kplane.plugins.apiextensions.schema.cel.rules import Rule, RuleNode
from kplane.plugins.apiextensions.schema.validation import deep_equal

RUNTIME_BUDGET_SECONDS = 0.5
MAX_MESSAGE_BYTES = 5 * 1024  # MaxEvaluatedMessageExpressionSizeBytes
_OUT_OF_BUDGET = "validation failed due to running out of cost budget, no further validation rules will be run"
_ROOT = "<nil>"  # how field.Path prints the root of a custom resource


class _OutOfBudget(Exception):
    pass


def _child(path: str, name: str) -> str:
    return name if path == _ROOT else f"{path}.{name}"


def _index(path: str, key: Any) -> str:
    return f"{'' if path == _ROOT else path}[{key}]"


def coerce(value: Any, schema: dict[str, Any] | None) -> Any:
    """``value`` as CEL sees it: a JSON number where the schema says ``number`` is a double."""
    if not isinstance(schema, dict):
        return value
    kind = schema.get("type")
    if kind == "number" and isinstance(value, int) and not isinstance(value, bool):
        return float(value)
    if isinstance(value, dict):
        props = schema.get("properties") or {}
        extra = schema.get("additionalProperties")
        return {k: coerce(v, props.get(k, extra if isinstance(extra, dict) else None)) for k, v in value.items()}
    if isinstance(value, list):
        return [coerce(v, schema.get("items")) for v in value]
    return value


def _field_error(rule: Rule, path: str, schema: dict[str, Any], detail: str) -> FieldError:
    """``fieldErrorForReason``: the rule's reason picks the error type; the value is the schema's type."""
    value = schema.get("type") or ""
    reason = rule.source.get("reason")
    if reason == "FieldValueForbidden":
        return FieldError(FieldErrorType.FORBIDDEN, path, detail)
    if reason == "FieldValueRequired":
        return FieldError(FieldErrorType.REQUIRED, path, detail)
    if reason == "FieldValueDuplicate":
        return FieldError(FieldErrorType.DUPLICATE, path, "", value)
    return invalid(path, value, detail)


class Evaluation:
    """One request's walk over the tree."""

    def __init__(self) -> None:
        self.errors: list[FieldError] = []
        self.warnings: list[str] = []  # ratcheted failures
        self.deadline = time.monotonic() + RUNTIME_BUDGET_SECONDS

    def node(self, node: RuleNode, path: str, value: Any, old: Any) -> None:
        if value is None:
            return  # kube validates only non-null values
        if node.rules:
            self._rules(node, path, value, old)
        for sub in node.all_of:
            self.node(sub, path, value, old)
        if isinstance(value, dict):
            old_map = old if isinstance(old, dict) else {}
            for name, child in node.properties.items():
                if name in value:
                    self.node(child, _child(path, name), value[name], old_map.get(name))
            if node.additional is not None:
                for key, item in value.items():
                    if key not in node.properties:
                        self.node(node.additional, _index(path, key), item, old_map.get(key))
        elif isinstance(value, list) and node.items is not None:
            olds = self._old_items(node, old)
            for i, item in enumerate(value):
                key = tuple(item.get(k) for k in node.list_map_keys) if isinstance(item, dict) else None
                self.node(node.items, _index(path, i), item, olds.get(key) if key is not None else None)

    @staticmethod
    def _old_items(node: RuleNode, old: Any) -> dict[tuple[Any, ...], Any]:
        if not node.list_map_keys or not isinstance(old, list):
            return {}
        return {tuple(o.get(k) for k in node.list_map_keys): o for o in old if isinstance(o, dict)}

    def _rules(self, node: RuleNode, path: str, value: Any, old: Any) -> None:
        schema = node.schema
        current = coerce(value, schema) if node.has_number else value
        previous = coerce(old, schema) if node.has_number and old is not None else old
        # The rules of a node share their variables' CEL activations: ``self`` (the whole object,
        # at the root) is converted once for all of them, not once per rule.
        shared: dict[tuple[str, ...], Any] = {}
        for rule in node.rules:
            if time.monotonic() > self.deadline:
                self.errors.append(invalid(path, schema.get("type") or "", _OUT_OF_BUDGET))
                raise _OutOfBudget
            compiled = rule.compiled
            if compiled is None:
                self.errors.append(invalid(path, schema.get("type") or "", f"rule compile error: {rule.compile_error}"))
                continue
            data: dict[str, Any] = {"self": current}
            if compiled.uses_old_self:
                if rule.optional_old_self:
                    data["__oldSelfHolder"] = {} if previous is None else {"v": previous}
                elif previous is None:
                    continue  # transition rules need an old value
                else:
                    data["oldSelf"] = previous
            activation = shared.get(tuple(data))
            if activation is None:
                activation = shared[tuple(data)] = cel.environment.activation(data)
            try:
                result = compiled.program.eval(activation=activation)
                failed = result.type().name() == "ERROR"
                text = cel.environment.status_text(str(result.value())) if failed else ""
                passed = not failed and result.plain_value() is True
            except (RuntimeError, ValueError, TypeError, OverflowError) as err:  # values the binding cannot take
                failed, text, passed = True, cel.environment.status_text(err), False
            if failed:
                if text.startswith("No matching overloads") or text.startswith("no such overload"):
                    detail = (f"'{text}': call arguments did not match a supported operator, function or macro "
                              f"signature for rule: {rule.error_name()}")
                else:
                    detail = f"{text} evaluating rule: {rule.error_name()}"
                self.errors.append(invalid(path, schema.get("type") or "", detail))
                continue
            if passed:
                continue
            where = _child(path, rule.field_path) if rule.field_path else path
            error = _field_error(rule, where, schema, self._message(rule, current, previous))
            if not compiled.uses_old_self and old is not None and deep_equal(old, value):
                self.warnings.append(str(error))
            else:
                self.errors.append(error)

    @staticmethod
    def _message(rule: Rule, value: Any, old: Any) -> str:
        """The messageExpression's text, or the message when it fails (as kube does)."""
        if rule.message_expression is not None:
            data = {"self": value} if old is None else {"self": value, "oldSelf": old}
            try:
                result = rule.message_expression.program.eval(data=data)
                text = result.plain_value() if result.type().name() == "STRING" else None
            except (RuntimeError, ValueError, TypeError, OverflowError):
                text = None
            if isinstance(text, str):
                text = text.strip()
                if text and len(text) <= MAX_MESSAGE_BYTES and "\n" not in text and "\r" not in text:
                    return text
        return rule.message()

    def run(self, root: RuleNode, content: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        try:
            self.node(root, _ROOT, content, old)
        except _OutOfBudget:
            pass
        return self.errors
