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

    def validate(self, obj: dict[str, Any], old: dict[str, Any] | None,
                 warnings: list[str] | None = None) -> list[FieldError]:
        """Field errors of the rules, evaluated on a custom resource ``obj`` as CEL sees it (see
        :func:`root_value`); ``old``: the stored object's, for transition rules and ratcheting
        (None on create). Ratcheted failures are added to ``warnings``."""
        if self.root is None:
            return []
        evaluation = Evaluation()
        errs = evaluation.run(self.root, obj, old)
        if warnings is not None:
            warnings += evaluation.warnings
        return errs


def root_value(api_version: str, kind: str, metadata: dict[str, Any], content: dict[str, Any]) -> dict[str, Any]:
    """A custom resource as root rules see ``self``: ``apiVersion``, ``kind``, and of
    ``metadata`` only ``name`` and ``generateName`` (what kube's schema of the root declares)."""
    meta = {k: metadata[k] for k in ("name", "generateName") if metadata.get(k)}
    return {**content, "apiVersion": api_version, "kind": kind, "metadata": meta}
