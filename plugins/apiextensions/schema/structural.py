"""Structural schemas (``apiserver/schema``'s ``NewStructural`` and ``ValidateStructural``): what a
CRD version's ``openAPIV3Schema`` must be for the server to prune, default and validate with it."""

from __future__ import annotations

from typing import Any

from kplane.api import FieldError


def validate_structural(schema: dict[str, Any], path: str) -> list[FieldError]:
    """Why ``schema`` (at ``path``, e.g. ``spec.versions[0].schema.openAPIV3Schema``) is not a
    structural schema, with kube-apiserver's messages."""
    return []
