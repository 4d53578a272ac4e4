"""Wire schemas of authentication.k8s.io/v1 (``k8s.io/api/authentication/v1``)."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields


class UserInfoSchema(Schema):
    """Who a token or a request stands for."""

    username = fields.Str(metadata={"description": "The name that uniquely identifies this user among all active users."})
    uid = fields.Str(metadata={"description": (
        "A unique value that identifies this user across time: a user deleted and another added with the same "
        "name have different UIDs."
    )})
    groups = fields.List(fields.Str(), metadata={"map_type": "atomic", "description": "The groups this user is a part of."})
    extra = fields.Dict(keys=fields.Str(), values=fields.List(fields.Str()), metadata={"description": (
        "Any additional information provided by the authenticator."
    )})


class TokenReviewSpecSchema(Schema):
    """The token to authenticate, and for whom."""

    token = fields.Str(metadata={"description": "The opaque bearer token."})
    audiences = fields.List(fields.Str(), metadata={"map_type": "atomic", "description": (
        "The identifiers the resource server presented with the token identifies as. Audience-aware token "
        "authenticators verify that the token was intended for at least one of them. Empty: the audiences of "
        "this API server."
    )})


class TokenReviewStatusSchema(Schema):
    """The result of the token authentication request."""

    authenticated = fields.Bool(metadata={"description": "The token is associated with a known user."})
    user = fields.Nested(UserInfoSchema, metadata={"description": "The user associated with the token."})
    audiences = fields.List(fields.Str(), metadata={"map_type": "atomic", "description": (
        "The audiences chosen by the authenticator that are compatible with both the TokenReview and the token: "
        "a client that set spec.audiences should check that one of them is here."
    )})
    error = fields.Str(metadata={"description": "Why the token could not be checked."})


class TokenReviewSchema(Schema):
    """TokenReview attempts to authenticate a token to a known user. Nothing is stored: the answer is the
    review with its status filled in."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    spec = fields.Nested(TokenReviewSpecSchema, metadata={"description": "The request being evaluated."})
    status = fields.Nested(TokenReviewStatusSchema, metadata={"description": (
        "Filled in by the server: whether the token can be authenticated."
    )})


class SelfSubjectReviewStatusSchema(Schema):
    """What the server knows about the user making the request."""

    user_info = fields.Nested(UserInfoSchema, metadata={"description": "The user attributes of the requester."})


class SelfSubjectReviewSchema(Schema):
    """SelfSubjectReview answers with the user attributes the server has for whoever makes the request (as
    impersonation leaves them): ``kubectl auth whoami``."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    status = fields.Nested(SelfSubjectReviewStatusSchema, metadata={"description": (
        "Filled in by the server with the user attributes."
    )})
