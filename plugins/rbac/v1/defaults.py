"""rbac.authorization.k8s.io/v1 defaulting (``pkg/apis/rbac/v1/defaults.go``): a binding's roleRef
and its User and Group subjects are of the rbac group unless they say otherwise."""

from __future__ import annotations

from typing import Any

from kplane.plugins.rbac.types import GROUP

_SUBJECT_GROUPS = {"User": GROUP, "Group": GROUP}


def default_binding(binding: dict[str, Any]) -> None:
    role_ref = binding.get("role_ref")
    if role_ref is None:
        role_ref = binding["role_ref"] = {}
    if not role_ref.get("api_group"):
        role_ref["api_group"] = GROUP
    for subject in binding.get("subjects") or ():
        if not subject.get("api_group") and subject.get("kind") in _SUBJECT_GROUPS:
            subject["api_group"] = _SUBJECT_GROUPS[subject["kind"]]
