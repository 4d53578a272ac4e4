"""Bearer tokens checked by another server's TokenReview: how an extension API server knows the
users of the cluster it extends (k8s.io/apiserver's ``DelegatingAuthenticatorConfig``).

Answers are cached for ``--authentication-token-webhook-cache-ttl`` (10 s), failures as long as
successes; the token itself is never kept, only its SHA-256. A host that cannot be asked makes
the request a 401, not cached: the next request asks again.
"""

from __future__ import annotations

import hashlib
import logging
from typing import Any

from kplane.core.authn.authenticators import Authenticated, AuthenticationError
from kplane.core.authn.user import UserInfo
from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.meta.expiring import ExpiringCache

log = logging.getLogger(__name__)

TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews"
CACHE_SIZE = 4096


class TokenReviewAuthenticator:
    """A token authenticator asking the host (``client``) through ``authentication.k8s.io/v1``."""

    def __init__(self, client: RESTClient, ttl: float = 10.0) -> None:
        self.client = client
        self.cache: ExpiringCache[Authenticated | None] = ExpiringCache(CACHE_SIZE, lambda _: ttl)

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        key = (hashlib.sha256(token.encode()).digest(), audiences)
        return await self.cache.get(key, lambda: self._review(token, audiences))

    async def _review(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        spec: dict[str, Any] = {"token": token}
        if audiences:
            spec["audiences"] = list(audiences)
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
        try:
            answer = await self.client.request("POST", TOKEN_REVIEWS, review)
        except (ApiError, OSError, ValueError) as err:
            raise AuthenticationError(f"the host's TokenReview failed: {err}") from None
        status = (answer or {}).get("status") or {}
        if not status.get("authenticated"):
            return None
        return Authenticated(UserInfo.from_api(status.get("user") or {}), tuple(status.get("audiences") or ()))

