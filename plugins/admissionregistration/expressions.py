"""The CEL of admission (kube's ``admission/plugin/cel``): the variables webhooks' match
conditions and policies' expressions see, and their compilation in ``kplane.api.cel``'s one
environment.

Variables, as Kubernetes declares them: ``object`` and ``oldObject`` (the request's objects, null
where the operation has none), ``request`` (the AdmissionReview's request), ``namespaceObject``
(the request's Namespace), and where a use has them ``params`` (a policy's parameter object),
``authorizer`` (checks of the requesting user's permissions) and ``variables`` (a policy's
named ``variables``).
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kplane.api import cel


@dataclasses.dataclass(frozen=True, slots=True)
class Declarations:
    """Which of the optional variables an expression may use (``OptionalVariableDeclarations``)."""

    params: bool = False
    authorizer: bool = False
    variables: bool = False

    def signatures(self) -> dict[str, str]:
        out = {"object": "dyn", "oldObject": "dyn", "request": "map(string, dyn)", "namespaceObject": "dyn"}
        if self.params:
            out["params"] = "dyn"
        if self.authorizer:
            out["authorizer"] = "dyn"
        if self.variables:
            out["variables"] = "map(string, dyn)"
        return out


class CompileError(Exception):
    """An expression that does not compile or has the wrong result type; ``detail`` is kube's wording."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)
        self.detail = detail


#: CEL's names of the result types an expression may be asked for (kube's wording).
_TYPE_NAMES = {"BOOL": "bool", "STRING": "string", "NULL": "null_type"}


def compile_expression(source: str, declarations: Declarations, want: str | tuple[str, ...] = "BOOL") -> Any:
    """A compiled ``cel.Expression`` of ``source``; ``want``: the result type it must have
    (``BOOL``, ``STRING``, or ``DYN`` for anything), or a tuple of those it may have (an audit
    annotation's ``("STRING", "NULL")``). Raises CompileError."""
    try:
        program = cel.environment.new(declarations.signatures()).compile(source)
    except RuntimeError as err:
        raise CompileError(f"compilation failed: {cel.environment.status_text(err)}") from None
    returns = program.return_type().name()
    wants = (want,) if isinstance(want, str) else want
    if "DYN" not in wants and returns not in (*wants, "DYN"):
        if len(wants) == 1:
            raise CompileError(f"must evaluate to {_TYPE_NAMES.get(wants[0], wants[0].lower())}")
        raise CompileError(f"must evaluate to one of [{' '.join(_TYPE_NAMES.get(w, w.lower()) for w in wants)}]")
    return program
