"""``x-kubernetes-validations``: CEL rules of a structural schema (apiextensions-apiserver's
``apiserver/schema/cel``), compiled and evaluated with Google's CEL implementation.

* :mod:`.compile` - the environment and ``self``/``oldSelf`` types; one rule's compilation.
* :mod:`.libraries` - Kubernetes' CEL libraries (quantity, url, ip, cidr, regex, lists, sets).
* :mod:`.checked` - the compiled expression's tree, for :mod:`.cost` (static cost estimation).
* :mod:`.rules` - a schema's rules as a tree, and the CRD's errors; :mod:`.evaluation` - a CR's.
"""

from __future__ import annotations

from typing import Any

from kplane.api import FieldError
from kplane.plugins.apiextensions.schema.cel.evaluation import Evaluation
from kplane.plugins.apiextensions.schema.cel.rules import Build, build, total_cost_errors


def compile_errors(schema: dict[str, Any] | None, path: str) -> list[FieldError]:
    """Problems with the rules of ``schema`` (a CRD version's ``openAPIV3Schema`` at ``path``):
    rules that do not compile, exceed the cost budget, or are misplaced."""
    out = Build()
    build(schema, path, out)
    return out.errors + total_cost_errors(out, path)


class RuleValidator:
    """One CRD version's rules, compiled once when the CRD is served."""

    def __init__(self, schema: dict[str, Any] | None) -> None:
        self.root = build(schema, "openAPIV3Schema", Build())

    def validate(self, content: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        """Field errors of the rules, evaluated on a custom resource's ``content`` (``old``: the
        stored object's, for transition rules; None on create)."""
        if self.root is None:
            return []
        return Evaluation().run(self.root, content, old)
