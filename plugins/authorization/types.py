"""Internal types of the authorization.k8s.io group: the access reviews."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import LabelSelectorRequirement, ObjectMeta


@dataclass(slots=True)
class FieldSelectorRequirement:
    key: str = ""
    operator: str = ""
    values: list[str] | None = None


@dataclass(slots=True)
class FieldSelectorAttributes:
    raw_selector: str | None = None
    requirements: list[FieldSelectorRequirement] | None = None


@dataclass(slots=True)
class LabelSelectorAttributes:
    raw_selector: str | None = None
    requirements: list[LabelSelectorRequirement] | None = None


@dataclass(slots=True)
class ResourceAttributes:
    namespace: str | None = None
    verb: str | None = None
    group: str | None = None
    version: str | None = None
    resource: str | None = None
    subresource: str | None = None
    name: str | None = None
    field_selector: FieldSelectorAttributes | None = None
    label_selector: LabelSelectorAttributes | None = None


@dataclass(slots=True)
class NonResourceAttributes:
    path: str | None = None
    verb: str | None = None


@dataclass(slots=True)
class SubjectAccessReviewSpec:
    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None
    user: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None
    uid: str | None = None


@dataclass(slots=True)
class SelfSubjectAccessReviewSpec:
    resource_attributes: ResourceAttributes | None = None
    non_resource_attributes: NonResourceAttributes | None = None


@dataclass(slots=True)
class SubjectAccessReviewStatus:
    allowed: bool = False
    denied: bool | None = None
    reason: str | None = None
    evaluation_error: str | None = None


@dataclass(slots=True)
class SubjectAccessReview:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: SubjectAccessReviewSpec = field(default_factory=SubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus = field(default_factory=SubjectAccessReviewStatus)


@dataclass(slots=True)
class LocalSubjectAccessReview:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: SubjectAccessReviewSpec = field(default_factory=SubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus = field(default_factory=SubjectAccessReviewStatus)


@dataclass(slots=True)
class SelfSubjectAccessReview:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: SelfSubjectAccessReviewSpec = field(default_factory=SelfSubjectAccessReviewSpec)
    status: SubjectAccessReviewStatus = field(default_factory=SubjectAccessReviewStatus)


@dataclass(slots=True)
class ResourceRule:
    verbs: list[str] = field(default_factory=list)
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None


@dataclass(slots=True)
class NonResourceRule:
    verbs: list[str] = field(default_factory=list)
    non_resource_urls: list[str] | None = None


@dataclass(slots=True)
class SelfSubjectRulesReviewSpec:
    namespace: str | None = None


@dataclass(slots=True)
class SubjectRulesReviewStatus:
    resource_rules: list[ResourceRule] = field(default_factory=list)
    non_resource_rules: list[NonResourceRule] = field(default_factory=list)
    incomplete: bool = False
    evaluation_error: str | None = None


@dataclass(slots=True)
class SelfSubjectRulesReview:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: SelfSubjectRulesReviewSpec = field(default_factory=SelfSubjectRulesReviewSpec)
    status: SubjectRulesReviewStatus = field(default_factory=SubjectRulesReviewStatus)
