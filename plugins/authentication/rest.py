"""TokenReview and SelfSubjectReview: created, answered, never stored (kube's
``pkg/registry/authentication/tokenreview`` and ``selfsubjectreview``)."""

from __future__ import annotations

from kplane.api import Authenticators, AuthenticationError, ObjectMeta, RequestContext, Served, clock, errors, user
from kplane.plugins.authentication.types import (
    SelfSubjectReview, SelfSubjectReviewStatus, TokenReview, TokenReviewStatus, UserInfo,
)


def user_info(found: user.UserInfo) -> UserInfo:
    """The API's UserInfo of a user."""
    return UserInfo(username=found.name, uid=found.uid or None, groups=list(found.groups) or None,
                    extra={key: list(values) for key, values in found.extra.items()} or None)


class TokenReviewREST(Served):
    """Authenticates ``spec.token`` with the server's token authenticators, for ``spec.audiences``
    (empty: the server's API audiences); ``status.audiences`` are those both the review and the
    token are good for."""

    def __init__(self, authenticators: Authenticators) -> None:
        self.authenticators = authenticators

    async def create(self, ctx: RequestContext, review: TokenReview) -> TokenReview:
        if not review.spec.token:
            raise errors.bad_request("token is required for TokenReview in authentication")
        wanted = tuple(review.spec.audiences or ()) or self.authenticators.api_audiences
        status = TokenReviewStatus()
        try:
            found = await self.authenticators.authenticate_token(review.spec.token, wanted)
        except AuthenticationError as err:
            found, status.error = None, str(err)
        else:
            if found is None:
                status.error = "invalid bearer token"  # kube's bearer token authenticator says so
        if found is not None:  # good for found.audiences: those of the review it may serve (the union saw to it)
            good_for = [a for a in wanted if a in found.audiences] if found.audiences else list(wanted)
            if wanted and found.audiences and not good_for:
                raise errors.internal_error("error validating audiences")
            status.authenticated = True
            status.user = user_info(found.user)
            status.audiences = good_for or None
        review.status = status
        return review


class SelfSubjectReviewREST(Served):
    """Answers whom the request acts as: the authenticated user, or the impersonated one."""

    async def create(self, ctx: RequestContext, review: SelfSubjectReview) -> SelfSubjectReview:
        return SelfSubjectReview(metadata=ObjectMeta(creation_timestamp=clock.now()),
                                 status=SelfSubjectReviewStatus(user_info=user_info(ctx.user)))
