"""Protobuf tables of the authorization.k8s.io/v1 reviews, which ``kubectl auth can-i`` posts as
protobuf.

Field numbers are those of ``k8s.io/api`` v0.32 ``authorization/v1/generated.proto``; see
:mod:`kplane.core.runtime.protobuf` for the format.
"""

from __future__ import annotations

from kplane.api import EXTRA_VALUE, LABEL_SELECTOR_REQUIREMENT, OBJECT_META, Field, Message

FIELD_SELECTOR_REQUIREMENT = Message(
    "FieldSelectorRequirement",
    {1: Field("key", "string"), 2: Field("operator", "string"), 3: Field("values", "string", repeated=True)},
)

RESOURCE_ATTRIBUTES = Message(
    "ResourceAttributes",
    {
        1: Field("namespace", "string"),
        2: Field("verb", "string"),
        3: Field("group", "string"),
        4: Field("version", "string"),
        5: Field("resource", "string"),
        6: Field("subresource", "string"),
        7: Field("name", "string"),
        8: Field("fieldSelector", Message("FieldSelectorAttributes", {
            1: Field("rawSelector", "string"),
            2: Field("requirements", FIELD_SELECTOR_REQUIREMENT, repeated=True),
        })),
        9: Field("labelSelector", Message("LabelSelectorAttributes", {
            1: Field("rawSelector", "string"),
            2: Field("requirements", LABEL_SELECTOR_REQUIREMENT, repeated=True),
        })),
    },
)

NON_RESOURCE_ATTRIBUTES = Message("NonResourceAttributes", {1: Field("path", "string"), 2: Field("verb", "string")})

SUBJECT_ACCESS_REVIEW_SPEC = Message(
    "SubjectAccessReviewSpec",
    {
        1: Field("resourceAttributes", RESOURCE_ATTRIBUTES),
        2: Field("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES),
        3: Field("user", "string"),
        4: Field("groups", "string", repeated=True),
        5: Field("extra", EXTRA_VALUE, map=True),
        6: Field("uid", "string"),
    },
)

SUBJECT_ACCESS_REVIEW_STATUS = Message(
    "SubjectAccessReviewStatus",
    {1: Field("allowed", "bool"), 2: Field("reason", "string"), 3: Field("evaluationError", "string"),
     4: Field("denied", "bool")},
)


def _review(kind: str, spec: Message, status: Message) -> Message:
    return Message(kind, {1: Field("metadata", OBJECT_META), 2: Field("spec", spec), 3: Field("status", status)})


SUBJECT_ACCESS_REVIEW = _review("SubjectAccessReview", SUBJECT_ACCESS_REVIEW_SPEC, SUBJECT_ACCESS_REVIEW_STATUS)
LOCAL_SUBJECT_ACCESS_REVIEW = _review("LocalSubjectAccessReview", SUBJECT_ACCESS_REVIEW_SPEC, SUBJECT_ACCESS_REVIEW_STATUS)
SELF_SUBJECT_ACCESS_REVIEW = _review(
    "SelfSubjectAccessReview",
    Message("SelfSubjectAccessReviewSpec", {1: Field("resourceAttributes", RESOURCE_ATTRIBUTES),
                                            2: Field("nonResourceAttributes", NON_RESOURCE_ATTRIBUTES)}),
    SUBJECT_ACCESS_REVIEW_STATUS,
)
SELF_SUBJECT_RULES_REVIEW = _review(
    "SelfSubjectRulesReview",
    Message("SelfSubjectRulesReviewSpec", {1: Field("namespace", "string")}),
    Message("SubjectRulesReviewStatus", {
        1: Field("resourceRules", Message("ResourceRule", {
            1: Field("verbs", "string", repeated=True), 2: Field("apiGroups", "string", repeated=True),
            3: Field("resources", "string", repeated=True), 4: Field("resourceNames", "string", repeated=True),
        }), repeated=True),
        2: Field("nonResourceRules", Message("NonResourceRule", {
            1: Field("verbs", "string", repeated=True), 2: Field("nonResourceURLs", "string", repeated=True),
        }), repeated=True),
        3: Field("incomplete", "bool"),
        4: Field("evaluationError", "string"),
    }),
)
