"""Compiling one schema node's rules (apiextensions-apiserver's ``cel/compilation.go``): the
environment, ``self``/``oldSelf`` typed from the schema, and kube's compile-error details."""

from __future__ import annotations

import dataclasses
import functools
import re
from typing import Any

from cel_expr_python import cel
from cel_expr_python.ext import ext_bindings, ext_encoders, ext_math, ext_optional, ext_strings

from kplane.plugins.apiextensions.schema.cel import checked, libraries

T = cel.Type
_STATUS = re.compile(r"^[A-Z_]+: |\s*\[[A-Z_]+\]$")
_OLD = "__oldSelfHolder"  # the variable optionalOldSelf rules read oldSelf from


def status_text(err: BaseException | str) -> str:
    """A CEL error without the status code the binding puts around it."""
    return _STATUS.sub("", str(err)).strip()


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


def _type(sig: str) -> Any:
    if sig.startswith("map(string, "):
        return T.Map(T.STRING, _type(sig[len("map(string, "):-1]))
    if sig.startswith("list("):
        return T.List(_type(sig[len("list("):-1]))
    return {"string": T.STRING, "int": T.INT, "double": T.DOUBLE, "bool": T.BOOL}.get(sig, T.DYN)


@functools.lru_cache(maxsize=256)
def environment(sig: str, old: str = "typed") -> Any:
    """The environment of rules on values of type ``sig`` (made once per type, shared by CRDs);
    ``old``: oldSelf is typed as self, ``dyn`` (checking an optionalOldSelf rule) or held in a map."""
    old_vars = ({_OLD: T.Map(T.STRING, _type(sig))} if old == "holder"
                else {"oldSelf": T.DYN if old == "dyn" else _type(sig)})
    return cel.NewEnv(variables={"self": _type(sig), **old_vars}, functions=libraries.functions(), extensions=[
        ext_strings.ExtStrings(), ext_optional.ExtOptional(), ext_math.ExtMath(), ext_encoders.ExtEncoders(),
        ext_bindings.ExtBindings()])


class CompileError(Exception):
    """A rule or messageExpression that is not a usable expression; ``detail`` is kube's wording."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


@dataclasses.dataclass(frozen=True, slots=True)
class Compiled:
    program: Any  # cel.Expression
    tree: checked.Node
    uses_old_self: bool


def _uses(node: checked.Node, name: str) -> bool:
    if node.kind == "ident" and node.name == name:
        return True
    parts = [*node.args, *(p for pair in node.entries for p in pair),
             *(p for p in (node.iter_range, node.accu_init, node.condition, node.step, node.result) if p)]
    return any(_uses(p, name) for p in parts)


def compile_rule(source: str, sig: str, optional_old: bool, want: str, what: str) -> Compiled:
    """Compile ``source`` for values of type ``sig``; ``want`` is the result type it must have
    (``BOOL`` for rules, ``STRING`` for messageExpressions); ``what`` names it in errors."""
    prefix = "compilation failed" if what == "rule" else "messageExpression compilation failed"
    try:
        program = environment(sig, "dyn" if optional_old else "typed").compile(source)
    except RuntimeError as err:
        raise CompileError(f"{prefix}: {status_text(err)}") from None
    if program.return_type().name() not in (want, "DYN"):
        raise CompileError("cel expression must evaluate to a bool" if what == "rule"
                           else "messageExpression must evaluate to a string")
    node = checked.tree(program.serialize())
    uses_old = _uses(node, "oldSelf")
    if optional_old and uses_old:
        # oldSelf as optional_type(T): the binding cannot declare optional variables, so the rule
        # binds it from a map holding the old value (or nothing) under "v".
        # The rule keeps a line of its own, so errors point into it (one line down).
        wrapped = f"cel.bind(oldSelf, has({_OLD}.v) ? optional.of({_OLD}.v) : optional.none(), (\n{source}\n))"
        try:
            program = environment(sig, "holder").compile(wrapped)
        except RuntimeError as err:
            text = re.sub(r"<input>:(\d+):", lambda m: f"<input>:{int(m.group(1)) - 1}:", status_text(err))
            raise CompileError(f"{prefix}: {text}") from None
    return Compiled(program, node, uses_old)
