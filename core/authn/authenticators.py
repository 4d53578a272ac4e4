"""The union of authenticators a request meets, in kube-apiserver's order.

Request authenticators (the front proxy's headers, client certificates) are asked first, then
the bearer token, if any, is given to each token authenticator (token file, ServiceAccount
tokens, ...). The first that knows the credentials wins. Credentials nobody accepts are an
:class:`AuthenticationError` (401), never a fall back to anonymous: only a request that carries
no credentials at all is ``system:anonymous``, and only with ``--anonymous-auth`` (kube's
``union.NewFailOnError(authenticators, anonymous)``). Every user but the anonymous one is put in
``system:authenticated`` (kube's ``AuthenticatedGroupAdder``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Protocol

from aiohttp import web

from kplane.core.authn.user import ALL_AUTHENTICATED, ALL_UNAUTHENTICATED, ANONYMOUS_USER, UserInfo


@dataclass(frozen=True, slots=True)
class Authenticated:
    """Who sent a request, and the audiences its credentials were good for (empty: any)."""

    user: UserInfo
    audiences: tuple[str, ...] = ()


class AuthenticationError(Exception):
    """Credentials were presented and are not good. The message is for the server's log: the
    client is told only "Unauthorized", as by kube-apiserver."""


class RequestAuthenticator(Protocol):
    """Finds a user in the request itself (a client certificate, the front proxy's headers).

    One that reads headers of its own also has ``reads_header(name) -> bool``: those headers
    are taken out of every request once it is authenticated, so no handler (nor a backend a
    request is proxied to) believes them, whoever sent them.
    """

    async def authenticate_request(self, request: web.Request) -> Authenticated | None:
        """The user, None when the request carries nothing this authenticator reads, or raise
        :class:`AuthenticationError` when what it carries is not good."""
        ...


class TokenAuthenticator(Protocol):
    """Finds the user a bearer token stands for."""

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        """The user, None when this authenticator does not know the token, or raise
        :class:`AuthenticationError` when it knows it to be bad (expired, revoked). ``audiences``:
        those the caller accepts (the server's API audiences, or a TokenReview's)."""
        ...


class StaticTokens:
    """Tokens known in advance, each standing for one user (``--token-auth-file``, the server's
    own loopback clients)."""

    def __init__(self, tokens: Mapping[str, UserInfo]) -> None:
        self.tokens = dict(tokens)

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        user = self.tokens.get(token)
        return Authenticated(user) if user is not None else None


def bearer_token(request: web.Request) -> str:
    """The request's bearer token, "" when it has none (kube's ``bearertoken``: the scheme is
    case-insensitive and anything else in ``Authorization`` is not a token)."""
    scheme, _, token = request.headers.get("Authorization", "").partition(" ")
    return token.strip() if scheme.lower() == "bearer" else ""


def header_text(value: str) -> str:
    """A header value as text: bytes that are not UTF-8 (which aiohttp keeps as surrogates)
    become U+FFFD, as Go's JSON writes them, so a name from a header can always be encoded."""
    return value.encode("utf-8", "surrogateescape").decode("utf-8", "replace")


class Authenticators:
    """Every authenticator the server has, asked in order; plugins add theirs through
    ``kplane_register_authenticators``."""

    def __init__(self, *, anonymous: bool = True, api_audiences: tuple[str, ...] = ()) -> None:
        self.anonymous = anonymous
        self.api_audiences = api_audiences  # what a token must be good for, when it names audiences
        self.request: list[tuple[str, RequestAuthenticator]] = []
        self.tokens: list[tuple[str, TokenAuthenticator]] = []

    def add_request(self, name: str, authenticator: RequestAuthenticator) -> None:
        """Ask ``authenticator`` about every request, after those added before."""
        self.request.append((name, authenticator))

    def add_token(self, name: str, authenticator: TokenAuthenticator) -> None:
        """Give every bearer token to ``authenticator``, after those added before."""
        self.tokens.append((name, authenticator))

    def identity_headers(self, request: web.Request) -> list[str]:
        """The headers of ``request`` that a request authenticator reads (``reads_header``)."""
        readers = [r for r in (getattr(a, "reads_header", None) for _, a in self.request) if r is not None]
        return [h for h in request.headers if any(read(h) for read in readers)] if readers else []

    async def authenticate(self, request: web.Request) -> Authenticated:
        """Who sent ``request``; raises :class:`AuthenticationError` for a 401."""
        problems: list[str] = []
        for name, authenticator in self.request:
            try:
                found = await authenticator.authenticate_request(request)
            except AuthenticationError as err:
                problems.append(f"{name}: {err}")
                continue
            if found is not None:
                return _authenticated(found)
        token = bearer_token(request)
        if token and not _encodable(token):
            raise AuthenticationError("a bearer token that is not UTF-8")
        if token:
            try:
                found = await self.authenticate_token(token, self.api_audiences)
            except AuthenticationError as err:
                problems.append(str(err))
            else:
                if found is not None:
                    return found
                problems.append("invalid bearer token")
        if problems:
            raise AuthenticationError("; ".join(problems))
        if not self.anonymous:
            raise AuthenticationError("no credentials, and anonymous requests are not allowed")
        return Authenticated(ANONYMOUS_USER)

    async def authenticate_token(self, token: str, audiences: tuple[str, ...]) -> Authenticated | None:
        """The user a token stands for (the request path, and TokenReview); None: nobody knows it."""
        problems: list[str] = []
        for name, authenticator in self.tokens:
            try:
                found = await authenticator.authenticate_token(token, audiences)
            except AuthenticationError as err:
                problems.append(f"{name}: {err}")
                continue
            if found is not None:
                scoped = self._audience_checked(found, audiences)
                return _authenticated(scoped) if scoped is not None else None
        if problems:
            raise AuthenticationError("; ".join(problems))
        return None

    def _audience_checked(self, found: Authenticated, audiences: tuple[str, ...]) -> Authenticated | None:
        """A token that names no audiences of its own (a token file's, say) is good for the
        server's API audiences only: for those of ``audiences`` among them, or for nobody (kube's
        ``WrapAudienceAgnosticToken``)."""
        if found.audiences or not self.api_audiences:
            return found
        good_for = tuple(a for a in audiences if a in self.api_audiences)
        return Authenticated(found.user, good_for) if good_for else None


def _encodable(text: str) -> bool:
    """Header bytes that are not UTF-8 reach us as lone surrogates, which no token holds."""
    try:
        text.encode()
    except UnicodeEncodeError:
        return False
    return True


def _authenticated(found: Authenticated) -> Authenticated:
    user = found.user
    if ALL_AUTHENTICATED in user.groups or ALL_UNAUTHENTICATED in user.groups:
        return found
    return Authenticated(user.with_group(ALL_AUTHENTICATED), found.audiences)
