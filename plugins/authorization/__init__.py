"""The authorization.k8s.io API group: SubjectAccessReview, LocalSubjectAccessReview,
SelfSubjectAccessReview (``kubectl auth can-i``) and SelfSubjectRulesReview (``kubectl auth
can-i --list``) at v1, resources that are created and decided but never stored.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import Authorizers, Registry, Scheme, hookimpl
from kplane.plugins.authorization import rest, types
from kplane.plugins.authorization.v1 import protobuf as v1_protobuf
from kplane.plugins.authorization.v1 import schemas as v1_schemas

GROUP = rest.GROUP

# kind, plural, internal type, v1 schema, protobuf table, namespaced
KINDS = (
    ("SubjectAccessReview", "subjectaccessreviews", types.SubjectAccessReview, v1_schemas.SubjectAccessReviewSchema,
     v1_protobuf.SUBJECT_ACCESS_REVIEW, False),
    ("LocalSubjectAccessReview", "localsubjectaccessreviews", types.LocalSubjectAccessReview,
     v1_schemas.LocalSubjectAccessReviewSchema, v1_protobuf.LOCAL_SUBJECT_ACCESS_REVIEW, True),
    ("SelfSubjectAccessReview", "selfsubjectaccessreviews", types.SelfSubjectAccessReview,
     v1_schemas.SelfSubjectAccessReviewSchema, v1_protobuf.SELF_SUBJECT_ACCESS_REVIEW, False),
    ("SelfSubjectRulesReview", "selfsubjectrulesreviews", types.SelfSubjectRulesReview,
     v1_schemas.SelfSubjectRulesReviewSchema, v1_protobuf.SELF_SUBJECT_RULES_REVIEW, False),
)


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    for kind, plural, internal, schema, _, namespaced in KINDS:
        scheme.add_kind(group=GROUP, kind=kind, plural=plural, internal=internal, versions={"v1": schema},
                        storage_version="v1", namespaced=namespaced, plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    for kind, _, _, _, table, _ in KINDS:
        scheme.add_protobuf(GROUP, "v1", kind, table)


@hookimpl
def kplane_register_strategies(registry: Registry, authorizers: Authorizers) -> None:
    for plural, serving in rest.SERVED.items():
        registry.add_rest(GROUP, plural, serving(authorizers))
