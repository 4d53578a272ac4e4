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


def compile_expression(source: str, declarations: Declarations, want: str = "BOOL") -> Any:
    """A compiled ``cel.Expression`` of ``source``; ``want``: the result type it must have
    (``BOOL``, ``STRING``, or ``DYN`` for anything). Raises CompileError."""
    try:
        program = cel.environment.new(declarations.signatures()).compile(source)
    except RuntimeError as err:
        raise CompileError(f"compilation failed: {cel.environment.status_text(err)}") from None
    returns = program.return_type().name()
    if want != "DYN" and returns not in (want, "DYN"):
        raise CompileError(f"must evaluate to {'bool' if want == 'BOOL' else want.lower()}")
    return program
