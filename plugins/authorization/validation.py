"""Validation of the access reviews, with kube's messages (``pkg/apis/authorization/validation``)."""

from __future__ import annotations

import dataclasses
from typing import Any

from kplane.api import (
    FieldError, ObjectMeta, camel_case, forbidden, invalid, is_qualified_name, is_valid_label_value, required,
)
from kplane.plugins.authorization.types import (
    FieldSelectorAttributes, LabelSelectorAttributes, LocalSubjectAccessReview, ResourceAttributes,
    SelfSubjectAccessReview, SelfSubjectAccessReviewSpec, SubjectAccessReview, SubjectAccessReviewSpec,
)


def shown(obj: Any) -> Any:
    """An internal value as its JSON, for an error's "Invalid value" (None: null)."""
    if dataclasses.is_dataclass(obj) and not isinstance(obj, type):
        return {camel_case(f.name): shown(getattr(obj, f.name)) for f in dataclasses.fields(obj)
                if getattr(obj, f.name) is not None}
    if isinstance(obj, list):
        return [shown(item) for item in obj]
    return obj


def _exactly_one(spec: SelfSubjectAccessReviewSpec | SubjectAccessReviewSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.resource_attributes is not None and spec.non_resource_attributes is not None:
        errs.append(invalid(f"{path}.nonResourceAttributes", shown(spec.non_resource_attributes),
                            "cannot be specified in combination with resourceAttributes"))
    if spec.resource_attributes is None and spec.non_resource_attributes is None:
        errs.append(invalid(f"{path}.resourceAttributes", None,
                            "exactly one of nonResourceAttributes or resourceAttributes must be specified"))
    return errs


def validate_self_subject_access_review_spec(spec: SelfSubjectAccessReviewSpec) -> list[FieldError]:
    """Exactly one of resourceAttributes and nonResourceAttributes, and valid selectors."""
    return _exactly_one(spec, "spec") + validate_resource_attributes(spec.resource_attributes)


def validate_subject_access_review_spec(spec: SubjectAccessReviewSpec) -> list[FieldError]:
    """As a SelfSubjectAccessReview's, and whose access it is: a user or groups."""
    errs = _exactly_one(spec, "spec")
    if not spec.user and not spec.groups:
        errs.append(invalid("spec.user", spec.user or "", "at least one of user or group must be specified"))
    return errs + validate_resource_attributes(spec.resource_attributes)


def validate_resource_attributes(attributes: ResourceAttributes | None,
                                 path: str = "spec.resourceAttributes") -> list[FieldError]:
    if attributes is None:
        return []
    return [*_validate_selector(attributes.field_selector, f"{path}.fieldSelector", label=False),
            *_validate_selector(attributes.label_selector, f"{path}.labelSelector", label=True)]


def _validate_selector(selector: FieldSelectorAttributes | LabelSelectorAttributes | None, path: str, *,
                       label: bool) -> list[FieldError]:
    """A raw selector or requirements, not both; operators kube does not know are accepted (a newer
    client's requirement can only narrow what it asks)."""
    if selector is None:
        return []
    errs: list[FieldError] = []
    requirements = selector.requirements or []
    if selector.raw_selector and requirements:
        errs.append(invalid(f"{path}.rawSelector", selector.raw_selector, "may not specified at the same time as requirements"))
    if not selector.raw_selector and not requirements:
        errs.append(required(f"{path}.requirements", f"when {path} is specified, requirements or rawSelector is required"))
    for i, requirement in enumerate(requirements):
        at = f"{path}.requirements[{i}]"
        values = requirement.values or []
        if not label and not requirement.key:
            errs.append(required(f"{at}.key", "must be specified"))
        if requirement.operator in ("In", "NotIn") and not values:
            errs.append(required(f"{at}.values", "must be specified when `operator` is 'In' or 'NotIn'"))
        elif requirement.operator in ("Exists", "DoesNotExist") and values:
            errs.append(forbidden(f"{at}.values", "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
        if label:
            errs += [invalid(f"{at}.key", requirement.key, message) for message in is_qualified_name(requirement.key)]
            errs += [invalid(f"{at}.values[{j}]", value, message)
                     for j, value in enumerate(values) for message in is_valid_label_value(value)]
    return errs


def _meta_empty(meta: ObjectMeta, *, but_namespace: bool = False) -> bool:
    """Nothing set in ``meta`` but the managedFields the create recorded (and the namespace)."""
    rest = dataclasses.replace(meta, managed_fields=None, namespace=None if but_namespace else meta.namespace)
    return rest == ObjectMeta()


def _shown_meta(meta: ObjectMeta) -> Any:
    return shown(dataclasses.replace(meta, managed_fields=None))


def validate_subject_access_review(review: SubjectAccessReview) -> list[FieldError]:
    errs = validate_subject_access_review_spec(review.spec)
    if not _meta_empty(review.metadata):
        errs.append(invalid("metadata", _shown_meta(review.metadata), "must be empty"))
    return errs


def validate_self_subject_access_review(review: SelfSubjectAccessReview) -> list[FieldError]:
    errs = validate_self_subject_access_review_spec(review.spec)
    if not _meta_empty(review.metadata):
        errs.append(invalid("metadata", _shown_meta(review.metadata), "must be empty"))
    return errs


def validate_local_subject_access_review(review: LocalSubjectAccessReview) -> list[FieldError]:
    spec = review.spec
    errs = validate_subject_access_review_spec(spec)
    if not _meta_empty(review.metadata, but_namespace=True):
        errs.append(invalid("metadata", _shown_meta(review.metadata), "must be empty except for namespace"))
    if spec.resource_attributes is not None and (spec.resource_attributes.namespace or "") != (review.metadata.namespace or ""):
        errs.append(invalid("spec.resourceAttributes.namespace", spec.resource_attributes.namespace or "",
                            "must match metadata.namespace"))
    if spec.non_resource_attributes is not None:
        errs.append(invalid("spec.nonResourceAttributes", shown(spec.non_resource_attributes),
                            "disallowed on this kind of request"))
    return errs
