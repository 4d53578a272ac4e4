"""Internal types of the rbac.authorization.k8s.io group: Role, ClusterRole, RoleBinding,
ClusterRoleBinding (``pkg/apis/rbac``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import LabelSelector, ObjectMeta

GROUP = "rbac.authorization.k8s.io"


@dataclass(slots=True)
class PolicyRule:
    """What a rule allows: verbs on resources of API groups (optionally by name), or on URL paths."""

    verbs: list[str] | None = None
    api_groups: list[str] | None = None
    resources: list[str] | None = None
    resource_names: list[str] | None = None
    non_resource_urls: list[str] | None = None


@dataclass(slots=True)
class AggregationRule:
    cluster_role_selectors: list[LabelSelector] | None = None


@dataclass(slots=True)
class Role:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    rules: list[PolicyRule] | None = None


@dataclass(slots=True)
class ClusterRole:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    rules: list[PolicyRule] | None = None
    aggregation_rule: AggregationRule | None = None


@dataclass(slots=True)
class Subject:
    kind: str = ""
    api_group: str | None = None
    name: str = ""
    namespace: str | None = None


@dataclass(slots=True)
class RoleRef:
    api_group: str = ""
    kind: str = ""
    name: str = ""


@dataclass(slots=True)
class RoleBinding:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    subjects: list[Subject] | None = None
    role_ref: RoleRef = field(default_factory=RoleRef)


@dataclass(slots=True)
class ClusterRoleBinding:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    subjects: list[Subject] | None = None
    role_ref: RoleRef = field(default_factory=RoleRef)
