"""The ServiceAccount token authenticator (kube's ``pkg/serviceaccount/jwt.go`` and the
validator of ``claims.go``).

A bearer token is this authenticator's when it is a JWT whose ``iss`` is one of the accepted
issuers; any other token is left to the next authenticator. One of ours is good when a verifying
key checks its signature, its audiences meet those asked for (the API audiences for a request),
it is within ``exp``/``nbf``/``iat`` give or take kube's minute of leeway, and the ServiceAccount
and the Pod or Secret it is bound to still exist with the uids it names (an object deleted more
than the leeway ago and only waiting for its finalizers counts as gone). Otherwise the request is
a 401. Legacy tokens (issuer ``kubernetes/serviceaccount``, :mod:`.legacy`) are always
accepted, as kube's: they are good while their Secret holds exactly that token and the account
has the uid they name. The objects come from the watch cache; what it has not got (behind a
write just made) is read from storage, as kube's token getter falls back to a live read: only a
token with a good signature gets that far.
"""

from __future__ import annotations

import base64
import binascii
import hmac
import time
from typing import Any

import jwt

from kplane.api import (
    APIError, Authenticated, AuthenticationError, Registry, RequestContext, UserInfo, clock, user,
)
from kplane.plugins.core.tokens import legacy
from kplane.plugins.core.tokens.claims import LEEWAY, BoundClaims, user_of
from kplane.plugins.core.tokens.keys import KeySet

Obj = dict[str, Any]
INVALIDATED = "service account token has been invalidated"


class Objects:
    """The ServiceAccounts, Pods and Secrets tokens name, as the watch cache holds them, read from
    storage when the cache has not got the object a token names (yet).

    kube-apiserver reads them through informers' listers; here the server's own watch cache
    already holds every one of them, as stored bytes, so an informer's decoded copy of every Pod
    and Secret (some 10 KB a Pod) would be a second copy of the cluster to keep. A token names
    one object; decoding it per request costs less than keeping them all decoded."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def current(self, plural: str, namespace: str, name: str, uid: str | None) -> Obj | None:
        """The object named, as the cache has it when its uid is ``uid`` (None: any), else as
        storage has it (None: there is none)."""
        store = self.registry.store("", plural)
        assert store is not None  # the core plugin registered it
        cached = await store.get_recent(namespace, name)
        if cached is not None and (uid is None or (cached.get("metadata") or {}).get("uid") == uid):
            return cached
        try:
            return (await store.get(RequestContext(resource=plural, namespace=namespace, name=name), name)).obj
        except APIError as err:
            if err.code == 404:
                return None
            raise


class ServiceAccountTokens:
    """``authenticate_token`` for the tokens of the ``serviceaccounts/token`` subresource."""

    def __init__(self, keys: KeySet, issuers: tuple[str, ...], api_audiences: tuple[str, ...], objects: Objects) -> None:
        self.keys = keys
        self.issuers = frozenset((*issuers, legacy.ISSUER))
        self.api_audiences = api_audiences
        self.objects = objects

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        try:
            header = jwt.get_unverified_header(token)
            unverified = jwt.decode(token, options={"verify_signature": False})
        except (jwt.PyJWTError, ValueError):  # UnicodeError and what PyJWT lets through are ValueErrors
            return None  # not a JWT: another authenticator's
        issuer = unverified.get("iss")
        if not isinstance(issuer, str) or issuer not in self.issuers:
            return None  # kube unmarshals iss into a string: anything else is not ours
        kid = str(header.get("kid", ""))
        await self.keys.adopt_made(kid)
        payload = self._verified(token, kid)
        token_audiences = _audiences(payload.get("aud")) or self.api_audiences  # none: the API's, as kube
        wanted = audiences or self.api_audiences
        good_for = tuple(a for a in token_audiences if a in wanted)
        if not good_for:
            raise AuthenticationError(f"token audiences {list(token_audiences)} is invalid for the target audiences {list(wanted)}")
        if issuer == legacy.ISSUER:
            return Authenticated(await self._legacy_user(token, payload), good_for)
        claims = BoundClaims.read(payload)
        if claims is None:
            raise AuthenticationError("token could not be validated")
        await self._still_bound(claims)
        jti = payload.get("jti")
        return Authenticated(user_of(claims, jti if isinstance(jti, str) else ""), good_for)

    def _verified(self, token: str, kid: str) -> dict[str, Any]:
        """The payload once a key verifies the signature and the times are good."""
        problems: list[str] = []
        for key in self.keys.candidates(kid):
            try:
                return jwt.decode(token, key.key, algorithms=list(key.algorithms), leeway=LEEWAY,
                                  options={"verify_aud": False, "verify_iss": False})
            except jwt.InvalidSignatureError:
                problems.append("signature does not verify")
            except jwt.ExpiredSignatureError:
                raise AuthenticationError("service account token has expired") from None
            except jwt.ImmatureSignatureError:
                raise AuthenticationError("service account token is not valid yet") from None
            except jwt.PyJWTError as err:
                problems.append(str(err))
        raise AuthenticationError("; ".join(problems) or "no key verifies service account tokens yet")

    async def _legacy_user(self, token: str, payload: dict[str, Any]) -> UserInfo:
        """The account of a legacy token whose Secret still holds it (kube's legacy validator,
        which gives such a user no credential id)."""
        try:
            claims = legacy.LegacyClaims.read(payload)
        except ValueError as err:
            raise AuthenticationError(str(err)) from None
        namespace = claims.namespace
        secret = await self.objects.current("secrets", namespace, claims.secret_name, None)
        if secret is None or secret["metadata"].get("deletionTimestamp"):
            raise AuthenticationError("Token has been invalidated")
        if not hmac.compare_digest(_secret_token(secret), token.encode()):
            raise AuthenticationError("Token does not match server's copy")
        account = await self.objects.current("serviceaccounts", namespace, claims.account_name, claims.account_uid)
        if account is None or account["metadata"].get("deletionTimestamp"):
            raise AuthenticationError(f"ServiceAccount {namespace}/{claims.account_name} has been deleted")
        if account["metadata"].get("uid") != claims.account_uid:
            raise AuthenticationError(f"ServiceAccount UID ({account['metadata'].get('uid')}) does not match claim ({claims.account_uid})")
        return UserInfo(user.service_account_username(namespace, claims.account_name), uid=claims.account_uid,
                        groups=user.service_account_groups(namespace))

    async def _still_bound(self, claims: BoundClaims) -> None:
        """The account, and the Pod or Secret the token is bound to, are still there, the same ones."""
        namespace = claims.namespace
        account = await self.objects.current("serviceaccounts", namespace, claims.account.name, claims.account.uid)
        if account is None:
            raise AuthenticationError(f"service account {namespace}/{claims.account.name} not found")
        if account["metadata"].get("uid") != claims.account.uid:
            raise AuthenticationError(f"service account UID ({account['metadata'].get('uid')}) does not match claim ({claims.account.uid})")
        _not_deleted(account, f"service account {namespace}/{claims.account.name} has been deleted")
        for plural, ref in (("secrets", claims.secret), ("pods", claims.pod)):
            if ref is None:
                continue
            bound = await self.objects.current(plural, namespace, ref.name, ref.uid)
            if bound is None or bound["metadata"].get("uid") != ref.uid:
                raise AuthenticationError(INVALIDATED)
            _not_deleted(bound, INVALIDATED)


def _secret_token(secret: Obj) -> bytes:
    """The token a Secret holds (its data is base64 on the wire and in storage)."""
    try:
        return base64.b64decode((secret.get("data") or {}).get(legacy.TOKEN_KEY, ""), validate=True)
    except (binascii.Error, ValueError, TypeError):
        return b""


def _audiences(value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        return (value,)
    if isinstance(value, list):
        return tuple(a for a in value if isinstance(a, str))
    return ()


def _not_deleted(obj: Obj, why: str) -> None:
    """kube's rule: an object whose deletion began more than the leeway ago no longer holds a token up."""
    deleted = obj["metadata"].get("deletionTimestamp")
    if deleted and clock.epoch(deleted) < time.time() - LEEWAY:
        raise AuthenticationError(why)
