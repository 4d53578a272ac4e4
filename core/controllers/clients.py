"""The clients controllers act through, each under its own identity (kube-controller-manager's
``ControllerClientBuilder``s, chosen by ``--use-service-account-credentials``).

A controller asks ``manager.client_for("<account>")`` for its client; ``<account>`` is the
ServiceAccount in ``kube-system`` it acts as, whose bootstrap role (``system:controller:<account>``)
grants what it does. Who that client really is depends on the builder the manager was given:

- :class:`SharedClient`: every controller acts as the controller-manager itself (kube's
  ``SimpleControllerClientBuilder``; ``kplane controller-manager`` without the flag).
- :class:`InProcessAccounts`: ``kplane serve``'s in-process controllers. Each account gets a random
  token, minted in memory and known only to the server's own authenticator, standing for
  ``system:serviceaccount:kube-system:<account>``.
- :class:`TokenRequestAccounts`: ``kplane controller-manager --use-service-account-credentials``.
  Each account's token comes from the TokenRequest API (the ServiceAccount is created when
  missing) and is renewed before it expires (kube's ``DynamicControllerClientBuilder``).
"""

from __future__ import annotations

import asyncio
import logging
import secrets
import time
from collections.abc import Callable, MutableMapping
from datetime import datetime
from typing import Protocol

from kplane.core.authn.user import UserInfo, service_account_groups, service_account_username
from kplane.core.client.rest import ApiError, RESTClient

log = logging.getLogger(__name__)

#: The namespace of the controllers' ServiceAccounts.
NAMESPACE = "kube-system"
#: What kube's builder asks a TokenRequest for, and the share of a token's life left when it is renewed.
EXPIRATION_SECONDS = 3600
LEEWAY = 0.2
MIN_LIFETIME = 600.0  # a shorter answer is taken as clock skew (kube pins it to 10 minutes)


class ClientBuilder(Protocol):
    """Hands out one client per ServiceAccount name, the same one each time it is asked."""

    def client_for(self, account: str) -> RESTClient: ...

    async def close(self) -> None:
        """Close the clients handed out (not the controller-manager's own)."""
        ...


class SharedClient:
    """Every controller acts through the controller-manager's own client."""

    def __init__(self, client: RESTClient) -> None:
        self.client = client

    def client_for(self, account: str) -> RESTClient:
        return self.client

    async def close(self) -> None:
        return None


class _PerAccount:
    """A client per account, made by ``make`` once and handed out again after."""

    def __init__(self, make: Callable[[str], RESTClient]) -> None:
        self.make = make
        self.clients: dict[str, RESTClient] = {}

    def client_for(self, account: str) -> RESTClient:
        client = self.clients.get(account)
        if client is None:
            client = self.clients[account] = self.make(account)
        return client

    async def close(self) -> None:
        for client in self.clients.values():
            await client.close()
        self.clients.clear()


def account_user(account: str) -> UserInfo:
    """The user a controller's ServiceAccount token stands for."""
    return UserInfo(service_account_username(NAMESPACE, account), groups=service_account_groups(NAMESPACE))


class InProcessAccounts(_PerAccount):
    """Tokens minted here and known to ``tokens`` (the server's own StaticTokens): never written
    anywhere, gone with the process. ``base`` is the server's loopback client, whose session
    (address, TLS) the controllers share."""

    def __init__(self, base: RESTClient, tokens: MutableMapping[str, UserInfo]) -> None:
        super().__init__(self._client)
        self.base = base
        self.tokens = tokens

    def _client(self, account: str) -> RESTClient:
        token = secrets.token_urlsafe(32)
        self.tokens[token] = account_user(account)
        return RESTClient(self.base.server, session=self.base.session, token=token)

    async def close(self) -> None:
        """The tokens stop working with their clients."""
        for client in self.clients.values():
            if client.token is not None:
                self.tokens.pop(client.token, None)
        await super().close()


class TokenRequestAccounts(_PerAccount):
    """Tokens from ``POST /api/v1/namespaces/kube-system/serviceaccounts/<account>/token``, asked
    for by ``base`` (the controller-manager's own identity, which may create ServiceAccounts and
    their tokens). ``bare``: a client of the same server without credentials (no client
    certificate either, which the server would believe before the token); the controllers'
    clients share its session, and closing this builder closes it."""

    def __init__(self, base: RESTClient, bare: RESTClient, *,
                 expiration_seconds: int = EXPIRATION_SECONDS, clock: Callable[[], float] = time.time) -> None:
        super().__init__(self._client)
        self.base = base
        self.bare = bare
        self.expiration_seconds = expiration_seconds
        self.clock = clock

    def _client(self, account: str) -> RESTClient:
        source = ServiceAccountToken(self.base, NAMESPACE, account,
                                     expiration_seconds=self.expiration_seconds, clock=self.clock)
        return RESTClient(self.bare.server, session=self.bare.session, token_source=source)

    async def close(self) -> None:
        await super().close()
        await self.bare.close()


class ServiceAccountToken:
    """One ServiceAccount's token through the TokenRequest API, fetched on first use and again
    once less than ``LEEWAY`` of its life is left, or after the server refused it."""

    def __init__(self, client: RESTClient, namespace: str, name: str, *,
                 expiration_seconds: int = EXPIRATION_SECONDS, clock: Callable[[], float] = time.time) -> None:
        self.client = client
        self.namespace = namespace
        self.name = name
        self.expiration_seconds = expiration_seconds
        self.clock = clock
        self._token = ""
        self._renew_at = 0.0
        self._lock = asyncio.Lock()  # concurrent requests wait for one TokenRequest

    async def token(self) -> str:
        if self._fresh():
            return self._token
        async with self._lock:
            if not self._fresh():
                await self._request()
        return self._token

    def reset(self) -> None:
        self._renew_at = 0.0

    def _fresh(self) -> bool:
        return bool(self._token) and self.clock() < self._renew_at

    async def _request(self) -> None:
        await self._ensure_account()
        path = f"/api/v1/namespaces/{self.namespace}/serviceaccounts/{self.name}/token"
        review = {"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
                  "spec": {"expirationSeconds": self.expiration_seconds}}
        answer = await self.client.request("POST", path, review)
        status = answer.get("status") or {}
        now = self.clock()
        expires = datetime.fromisoformat(str(status["expirationTimestamp"]).replace("Z", "+00:00")).timestamp()
        lifetime = max(expires - now, MIN_LIFETIME)
        self._token = str(status["token"])
        self._renew_at = now + lifetime * (1 - LEEWAY)
        log.debug("token for %s/%s renewed, again in %.0fs", self.namespace, self.name, self._renew_at - now)

    async def _ensure_account(self) -> None:
        """Create the ServiceAccount when missing (another controller-manager may be quicker)."""
        accounts = self.client.resource("", "v1", "serviceaccounts", self.namespace)
        try:
            await accounts.get(self.name)
        except ApiError as err:
            if err.code != 404:
                raise
            try:
                await accounts.create({"apiVersion": "v1", "kind": "ServiceAccount", "metadata": {"name": self.name}})
            except ApiError as created:
                if created.code != 409:
                    raise
