"""The access reviews: created, decided by the server's authorizers, never stored (kube's
``pkg/registry/authorization``: subjectaccessreview, localsubjectaccessreview,
selfsubjectaccessreview, selfsubjectrulesreview)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kplane.api import (
    Attributes, Authorizers, Decision, FieldError, RequestContext, Served, UserInfo, Verdict, errors,
)
from kplane.plugins.authorization import validation
from kplane.plugins.authorization.types import (
    LocalSubjectAccessReview, NonResourceAttributes, NonResourceRule, ResourceAttributes, ResourceRule,
    SelfSubjectAccessReview, SelfSubjectAccessReviewSpec, SelfSubjectRulesReview, SubjectAccessReview,
    SubjectAccessReviewSpec, SubjectAccessReviewStatus, SubjectRulesReviewStatus,
)

GROUP = "authorization.k8s.io"


def attributes_from(user: UserInfo, spec: SelfSubjectAccessReviewSpec | SubjectAccessReviewSpec) -> Attributes:
    """What the authorizers are asked (kube's ``ResourceAttributesFrom`` / ``NonResourceAttributesFrom``:
    an empty version means every version)."""
    if spec.resource_attributes is not None:
        r: ResourceAttributes = spec.resource_attributes
        return Attributes(user, r.verb or "", True, r.namespace or "", r.group or "", r.version or "*",
                          r.resource or "", r.subresource or "", r.name or "")
    n: NonResourceAttributes = spec.non_resource_attributes or NonResourceAttributes()
    return Attributes(user, n.verb or "", False, path=n.path or "")


def subject_of(spec: SubjectAccessReviewSpec) -> UserInfo:
    """The user a (Local)SubjectAccessReview asks about, as its spec names it."""
    return UserInfo(spec.user or "", spec.uid or "", tuple(spec.groups or ()), dict(spec.extra or {}))


def status_of(verdict: Verdict) -> SubjectAccessReviewStatus:
    return SubjectAccessReviewStatus(allowed=verdict.decision is Decision.ALLOW,
                                     denied=True if verdict.decision is Decision.DENY else None,
                                     reason=verdict.reason or None)


def _check(kind: str, found: list[FieldError]) -> None:
    if found:
        raise errors.invalid_object(kind, GROUP, "", found)


class _Review(Served):
    """A review decided by the server's authorizers."""

    def __init__(self, authorizers: Authorizers) -> None:
        self.authorizers = authorizers

    async def decide(self, user: UserInfo, spec: SelfSubjectAccessReviewSpec | SubjectAccessReviewSpec) -> SubjectAccessReviewStatus:
        return status_of(await self.authorizers.authorize(attributes_from(user, spec)))


class SubjectAccessReviewREST(_Review):
    """May the user the spec names do what it asks?"""

    async def create(self, ctx: RequestContext, review: SubjectAccessReview) -> SubjectAccessReview:
        _check("SubjectAccessReview", validation.validate_subject_access_review(review))
        review.status = await self.decide(subject_of(review.spec), review.spec)
        return review


class LocalSubjectAccessReviewREST(_Review):
    """A SubjectAccessReview in one namespace, the request's."""

    async def create(self, ctx: RequestContext, review: LocalSubjectAccessReview) -> LocalSubjectAccessReview:
        if review.metadata.namespace and review.metadata.namespace != ctx.namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
        review.metadata.namespace = ctx.namespace
        _check("LocalSubjectAccessReview", validation.validate_local_subject_access_review(review))
        review.status = await self.decide(subject_of(review.spec), review.spec)
        return review


class SelfSubjectAccessReviewREST(_Review):
    """May the requesting user do what the spec asks (``kubectl auth can-i``)?"""

    async def create(self, ctx: RequestContext, review: SelfSubjectAccessReview) -> SelfSubjectAccessReview:
        _check("SelfSubjectAccessReview", validation.validate_self_subject_access_review(review))
        review.status = await self.decide(ctx.user, review.spec)
        return review


class SelfSubjectRulesReviewREST(Served):
    """What may the requesting user do in ``spec.namespace`` (``kubectl auth can-i --list``)? The
    answer is a new review holding only the status, as kube's."""

    def __init__(self, authorizers: Authorizers) -> None:
        self.authorizers = authorizers

    async def create(self, ctx: RequestContext, review: SelfSubjectRulesReview) -> SelfSubjectRulesReview:
        if not review.spec.namespace:
            raise errors.bad_request("no namespace on request")
        rules = await self.authorizers.rules_for(ctx.user, review.spec.namespace)
        status = SubjectRulesReviewStatus(
            resource_rules=[ResourceRule(list(r.verbs), _listed(r.api_groups), _listed(r.resources), _listed(r.resource_names))
                            for r in rules.resource],
            non_resource_rules=[NonResourceRule(list(r.verbs), _listed(r.non_resource_urls)) for r in rules.non_resource],
            incomplete=rules.incomplete,
            evaluation_error=_aggregate(rules.errors),
        )
        return SelfSubjectRulesReview(status=status)


def _listed(values: tuple[str, ...]) -> list[str] | None:
    return list(values) or None


def _aggregate(problems: list[str]) -> str | None:
    """Several errors as kube's ``utilerrors.NewAggregate`` prints them: ``[a, b]``."""
    if not problems:
        return None
    return problems[0] if len(problems) == 1 else "[" + ", ".join(problems) + "]"


#: Each review's resource and the object serving it, made from the server's authorizers.
SERVED: dict[str, Callable[[Authorizers], Any]] = {
    "subjectaccessreviews": SubjectAccessReviewREST,
    "localsubjectaccessreviews": LocalSubjectAccessReviewREST,
    "selfsubjectaccessreviews": SelfSubjectAccessReviewREST,
    "selfsubjectrulesreviews": SelfSubjectRulesReviewREST,
}
