"""Internal types of the authentication.k8s.io group: TokenReview and SelfSubjectReview."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta


@dataclass(slots=True)
class UserInfo:
    """A user as an authenticator found it (``authentication.k8s.io`` UserInfo)."""

    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None


@dataclass(slots=True)
class TokenReviewSpec:
    token: str | None = None
    audiences: list[str] | None = None


@dataclass(slots=True)
class TokenReviewStatus:
    authenticated: bool | None = None
    user: UserInfo = field(default_factory=UserInfo)
    audiences: list[str] | None = None
    error: str | None = None


@dataclass(slots=True)
class TokenReview:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: TokenReviewSpec = field(default_factory=TokenReviewSpec)
    status: TokenReviewStatus = field(default_factory=TokenReviewStatus)


@dataclass(slots=True)
class SelfSubjectReviewStatus:
    user_info: UserInfo = field(default_factory=UserInfo)


@dataclass(slots=True)
class SelfSubjectReview:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    status: SelfSubjectReviewStatus = field(default_factory=SelfSubjectReviewStatus)
