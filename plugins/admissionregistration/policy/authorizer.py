"""The ``authorizer`` variable of a policy's expressions, answered by the server's authorizers.

An expression's checks happen mid-evaluation, synchronously, while authorizers are coroutines:
a policy whose expressions authorize is evaluated in a worker thread, and each check is handed
to the event loop and waited for there (a bounded wait). Decisions are kept for the request, as
kube's caching authorizer keeps them, so one check asked by many bindings is decided once.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from typing import Any

from kplane.api import Authorizers, Decision, UserInfo, cel, user as users
from kplane.api import Attributes as AuthzAttributes

CHECK_SECONDS = 5.0  # longest wait for one decision
_DECISIONS = {Decision.ALLOW: "allow", Decision.DENY: "deny", Decision.NO_OPINION: "noopinion"}


def _user(requester: UserInfo, who: dict[str, Any] | None) -> UserInfo:
    if not who or "serviceAccount" not in who:
        return requester
    namespace, name = who["serviceAccount"]
    return UserInfo(users.service_account_username(namespace, name),
                    groups=(*users.service_account_groups(namespace), "system:authenticated"))


def _attributes(user: UserInfo, fields: dict[str, Any]) -> AuthzAttributes:
    verb = str(fields.get("verb") or "")
    if "path" in fields:
        return AuthzAttributes(user=user, verb=verb, resource_request=False, path=str(fields["path"]))
    return AuthzAttributes(user=user, verb=verb, resource_request=True, namespace=str(fields.get("namespace") or ""),
                           api_group=str(fields.get("group") or ""), api_version="*",
                           resource=str(fields.get("resource") or ""), subresource=str(fields.get("subresource") or ""),
                           name=str(fields.get("name") or ""))


class RequestAuthorizer:
    """One request's checks: made on the loop, asked for from an evaluating thread."""

    def __init__(self, authorizers: Authorizers, requester: UserInfo, loop: asyncio.AbstractEventLoop) -> None:
        self._authorizers = authorizers
        self._requester = requester
        self._loop = loop
        self._decided: dict[str, dict[str, str]] = {}

    async def _decide(self, fields: dict[str, Any]) -> dict[str, str]:
        verdict = await self._authorizers.authorize(_attributes(_user(self._requester, fields.get("user")), fields))
        return {"decision": _DECISIONS[verdict.decision], "reason": verdict.reason, "error": ""}

    def check(self, fields: dict[str, Any]) -> dict[str, str]:
        """``cel.authz.CHECK``'s function; on the loop's own thread it cannot wait, so it errs."""
        key = json.dumps(fields, sort_keys=True)
        if key in self._decided:
            return self._decided[key]
        try:
            asyncio.get_running_loop()
            return {"decision": "noopinion", "reason": "", "error": "authorization checks need an evaluation off the event loop"}
        except RuntimeError:
            pass  # a worker thread: the loop decides
        try:
            decided = asyncio.run_coroutine_threadsafe(self._decide(fields), self._loop).result(CHECK_SECONDS)
        except TimeoutError:
            decided = {"decision": "noopinion", "reason": "", "error": "the authorization check timed out"}
        self._decided[key] = decided
        return decided

    async def run(self, evaluate: Callable[[], Any]) -> Any:
        """``evaluate()`` in a worker thread, its checks answered by this authorizer."""
        def call() -> Any:
            cel.authz.CHECK.set(self.check)
            return evaluate()
        return await asyncio.to_thread(call)
