"""Decisions asked of another server's SubjectAccessReview: how an extension API server obeys
the RBAC of the cluster it extends (k8s.io/apiserver's ``DelegatingAuthorizerConfig``, the
webhook authorizer).

Allowed answers are cached for ``--authorization-webhook-cache-authorized-ttl`` (10 s), others
for ``--authorization-webhook-cache-unauthorized-ttl`` (10 s). A host that cannot be asked is no
opinion (so a 403 naming the failure), not cached. Paths in ``--authorization-always-allow-paths``
(the probes, by default) are allowed without asking: the host's kubelet probes them.
"""

from __future__ import annotations

from typing import Any

from kplane.core.authn.user import UserInfo
from kplane.core.authz.attributes import Attributes
from kplane.core.authz.authorizers import ALLOWED, Decision, Rules, Verdict
from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.meta.expiring import ExpiringCache

SUBJECT_ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews"
CACHE_SIZE = 8192
#: The mode name of the delegated authorizer (kube-apiserver's ``--authorization-mode=Webhook``).
WEBHOOK = "Webhook"


class SubjectAccessReviewAuthorizer:
    def __init__(self, client: RESTClient, *, authorized_ttl: float = 10.0, unauthorized_ttl: float = 10.0,
                 always_allow_paths: tuple[str, ...] = ()) -> None:
        self.client = client
        self.always_allow_paths = always_allow_paths
        self.cache: ExpiringCache[Verdict] = ExpiringCache(
            CACHE_SIZE, lambda v: authorized_ttl if v.allowed else unauthorized_ttl)

    async def authorize(self, attributes: Attributes) -> Verdict:
        if not attributes.resource_request and _matches(attributes.path, self.always_allow_paths):
            return ALLOWED
        review = subject_access_review(attributes)
        key = repr(review["spec"])  # everything the answer depends on, and nothing else
        try:
            return await self.cache.get(key, lambda: self._review(review))
        except (ApiError, OSError, ValueError) as err:
            return Verdict(Decision.NO_OPINION, f"the host's SubjectAccessReview failed: {err}")

    async def _review(self, review: dict[str, Any]) -> Verdict:
        answer = await self.client.request("POST", SUBJECT_ACCESS_REVIEWS, review)
        status = (answer or {}).get("status") or {}
        reason = str(status.get("reason") or "")
        if status.get("allowed"):
            return Verdict(Decision.ALLOW, reason)
        return Verdict(Decision.DENY if status.get("denied") else Decision.NO_OPINION, reason)

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """The host does not say what it allows (kube's webhook authorizer cannot either)."""
        return Rules(incomplete=True)


def subject_access_review(a: Attributes) -> dict[str, Any]:
    """The ``authorization.k8s.io/v1`` SubjectAccessReview asking about ``a``."""
    spec: dict[str, Any] = {"user": a.user.name, "groups": list(a.user.groups)}
    if a.user.uid:
        spec["uid"] = a.user.uid
    if a.user.extra:
        spec["extra"] = {k: list(v) for k, v in a.user.extra.items()}
    if a.resource_request:
        spec["resourceAttributes"] = {k: v for k, v in (
            ("namespace", a.namespace), ("verb", a.verb), ("group", a.api_group), ("version", a.api_version),
            ("resource", a.resource), ("subresource", a.subresource), ("name", a.name)) if v or k == "group"}
    else:
        spec["nonResourceAttributes"] = {"path": a.path, "verb": a.verb}
    return {"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview", "spec": spec}


def _matches(path: str, patterns: tuple[str, ...]) -> bool:
    return any(path == p or (p.endswith("*") and path.startswith(p[:-1])) for p in patterns)
