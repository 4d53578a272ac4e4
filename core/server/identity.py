"""Who sent a request, as far as the server knows.

kplane has no authentication yet, so every request is anonymous: ``system:anonymous`` in the group
``system:unauthenticated``, as kube-apiserver calls a request without credentials. An
authenticator (a middleware) would record the user it found under :data:`USER` on the request;
whatever reads the identity (the aggregator's front-proxy headers) goes through :func:`user_of`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import web

USER = "kplane.user"  # request[USER]: the UserInfo an authenticator established


@dataclass(frozen=True, slots=True)
class UserInfo:
    name: str
    groups: tuple[str, ...] = ()
    extra: dict[str, tuple[str, ...]] = field(default_factory=dict)


ANONYMOUS = UserInfo("system:anonymous", ("system:unauthenticated",))


def user_of(request: web.Request) -> UserInfo:
    user = request.get(USER)
    return user if isinstance(user, UserInfo) else ANONYMOUS
