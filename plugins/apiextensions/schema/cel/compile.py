"""Compiling one schema node's rules (apiextensions-apiserver's ``cel/compilation.go``): the
environment, ``self``/``oldSelf`` typed from the schema, and kube's compile-error details."""

from __future__ import annotations

import dataclasses
import re
from typing import Any

from kplane.api import cel

_OLD = "__oldSelfHolder"  # the variable optionalOldSelf rules read oldSelf from


def signature(schema: dict[str, Any] | None) -> str:
    """The CEL type of values of ``schema`` as kube's DeclTypes see them (objects as maps)."""
    if not schema or schema.get("x-kubernetes-int-or-string"):
        return "dyn"
    kind = schema.get("type")
    if kind == "object":
        extra = schema.get("additionalProperties")
        if isinstance(extra, dict) and not schema.get("properties"):
            return f"map(string, {signature(extra)})"
        return "map(string, dyn)"
    if kind == "array":
        return f"list({signature(schema.get('items'))})"
    return {"string": "string", "integer": "int", "number": "double", "boolean": "bool"}.get(kind or "", "dyn")


def rule_environment(sig: str, old: str = "typed") -> Any:
    """The environment of rules on values of type ``sig``; ``old``: oldSelf is typed as self,
    ``dyn`` (checking an optionalOldSelf rule) or held in a map."""
    old_vars = ({_OLD: f"map(string, {sig})"} if old == "holder"
                else {"oldSelf": "dyn" if old == "dyn" else sig})
    return cel.environment.new({"self": sig, **old_vars})


class CompileError(Exception):
    """A rule or messageExpression that is not a usable expression; ``detail`` is kube's wording."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclasses.dataclass(frozen=True, slots=True)
class Compiled:
    program: Any  # cel.Expression
    tree: cel.checked.Node
    uses_old_self: bool


def _uses(node: cel.checked.Node, name: str) -> bool:
    if node.kind == "ident" and node.name == name:
        return True
    return any(_uses(p, name) for p in node.children())


def compile_rule(source: str, sig: str, optional_old: bool, want: str, what: str) -> Compiled:
    """Compile ``source`` for values of type ``sig``; ``want`` is the result type it must have
    (``BOOL`` for rules, ``STRING`` for messageExpressions); ``what`` names it in errors."""
    prefix = "compilation failed" if what == "rule" else "messageExpression compilation failed"
    unmade = "program instantiation failed" if what == "rule" else "messageExpression instantiation failed"
    try:
        program = cel.environment.compile(rule_environment(sig, "dyn" if optional_old else "typed"), source)
    except cel.validators.InstantiationError as err:
        raise CompileError(f"{unmade}: {err}") from None
    except RuntimeError as err:
        raise CompileError(f"{prefix}: {cel.environment.status_text(err)}") from None
    if program.return_type().name() not in (want, "DYN"):
        raise CompileError("cel expression must evaluate to a bool" if what == "rule"
                           else "messageExpression must evaluate to a string")
    node = cel.checked.tree(program.serialize())
    uses_old = _uses(node, "oldSelf")
    if optional_old and uses_old:
        # oldSelf as optional_type(T): the binding cannot declare optional variables, so the rule
        # binds it from a map holding the old value (or nothing) under "v".
        # The rule keeps a line of its own, so errors point into it (one line down).
        wrapped = f"cel.bind(oldSelf, has({_OLD}.v) ? optional.of({_OLD}.v) : optional.none(), (\n{source}\n))"
        try:
            program = cel.environment.compile(rule_environment(sig, "holder"), wrapped)
        except RuntimeError as err:
            text = re.sub(r"<input>:(\d+):", lambda m: f"<input>:{int(m.group(1)) - 1}:", cel.environment.status_text(err))
            raise CompileError(f"{prefix}: {text}") from None
    return Compiled(program, node, uses_old)
