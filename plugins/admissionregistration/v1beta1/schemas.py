"""Wire schemas of admissionregistration.k8s.io/v1beta1: the shapes of v1 and v1alpha1."""

from __future__ import annotations

from kplane.plugins.admissionregistration.v1alpha1.schemas import (
    MutatingAdmissionPolicyBindingSchema, MutatingAdmissionPolicySchema, ValidatingAdmissionPolicyBindingSchema,
    ValidatingAdmissionPolicySchema,
)

__all__ = ["MutatingAdmissionPolicyBindingSchema", "MutatingAdmissionPolicySchema", "ValidatingAdmissionPolicyBindingSchema",
           "ValidatingAdmissionPolicySchema"]
