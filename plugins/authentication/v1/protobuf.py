"""Protobuf tables of authentication.k8s.io/v1 TokenReview and SelfSubjectReview, which client-go
(``kubectl auth whoami``) posts as protobuf.

Field numbers are those of ``k8s.io/api`` v0.32 ``authentication/v1/generated.proto``; see
:mod:`kplane.core.runtime.protobuf` for the format.
"""

from __future__ import annotations

from kplane.api import EXTRA_VALUE, OBJECT_META, Field, Message

USER_INFO = Message(
    "UserInfo",
    {
        1: Field("username", "string"),
        2: Field("uid", "string"),
        3: Field("groups", "string", repeated=True),
        4: Field("extra", EXTRA_VALUE, map=True),
    },
)

TOKEN_REVIEW = Message(
    "TokenReview",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", Message("TokenReviewSpec", {
            1: Field("token", "string"),
            2: Field("audiences", "string", repeated=True),
        })),
        3: Field("status", Message("TokenReviewStatus", {
            1: Field("authenticated", "bool"),
            2: Field("user", USER_INFO),
            3: Field("error", "string"),
            4: Field("audiences", "string", repeated=True),
        })),
    },
)

SELF_SUBJECT_REVIEW = Message(
    "SelfSubjectReview",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("status", Message("SelfSubjectReviewStatus", {1: Field("userInfo", USER_INFO)})),
    },
)
