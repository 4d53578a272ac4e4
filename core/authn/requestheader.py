"""The front proxy's request headers (k8s.io/apiserver ``headerrequest`` behind ``x509request``'s
verifier): how an extension server learns whom the aggregator authenticated.

The headers (``X-Remote-User``, ``X-Remote-Group``, ``X-Remote-Extra-<key>``, ``X-Remote-Uid``
as kube-apiserver's aggregator sends them; whichever ``--requestheader-*-headers`` name) are
believed only from a client whose certificate verifies against ``--requestheader-client-ca-file``
and whose CN is among ``--requestheader-allowed-names`` (any, when empty). Whoever sends them,
no handler sees them: the authentication filter takes them out of every request (see
:meth:`RequestHeaders.reads_header`), so a client cannot pass them on to anything downstream.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from aiohttp import web
from multidict import CIMultiDictProxy

from kplane.core.authn.authenticators import Authenticated, AuthenticationError, header_text
from kplane.core.authn.clientcert import CertificateAuthority, common_name, peer_certificate
from kplane.core.authn.user import UserInfo, unescape_extra_key


@dataclass(frozen=True, slots=True)
class HeaderNames:
    """Which headers carry the user (the first with a value wins), its uid (likewise), its
    groups (every value of each) and its extra (every header under one of the prefixes)."""

    username: tuple[str, ...]
    uid: tuple[str, ...] = ()
    group: tuple[str, ...] = ()
    extra_prefix: tuple[str, ...] = ()


class RequestHeaders:
    """The request authenticator that trusts the front proxy's headers."""

    def __init__(self, authority: CertificateAuthority, names: HeaderNames, allowed_names: Sequence[str] = ()) -> None:
        self.authority = authority
        self.names = names
        self.allowed_names = frozenset(allowed_names)
        self._exact = frozenset(h.lower() for h in (*names.username, *names.uid, *names.group))
        self._prefixes = tuple(p.lower() for p in names.extra_prefix)

    def reads_header(self, name: str) -> bool:
        """A header this authenticator reads: taken out of every request, trusted or not."""
        low = name.lower()
        return low in self._exact or low.startswith(self._prefixes)

    async def authenticate_request(self, request: web.Request) -> Authenticated | None:
        headers = request.headers
        name = _first(headers, self.names.username)
        if not name:
            return None
        certificate = peer_certificate(request)
        if certificate is None:  # not from the proxy: the headers say nothing
            return None
        self.authority.verify(certificate)
        cn = common_name(certificate)
        if self.allowed_names and cn not in self.allowed_names:
            raise AuthenticationError(f"x509: subject with cn={cn} is not in the allowed list")
        groups = tuple(header_text(v) for h in self.names.group for v in headers.getall(h, ()) if v)
        extra: dict[str, list[str]] = {}
        for prefix in self._prefixes:  # prefixes first: the values keep the prefixes' order
            for header, value in headers.items():
                if header.lower().startswith(prefix):
                    extra.setdefault(unescape_extra_key(header[len(prefix):].lower()), []).append(header_text(value))
        return Authenticated(UserInfo(name, _first(headers, self.names.uid), groups,
                                      {k: tuple(v) for k, v in extra.items()}))


def _first(headers: CIMultiDictProxy[str], names: Sequence[str]) -> str:
    """The first value of the first of ``names`` that has a non-empty one (Go's ``Header.Get``)."""
    for name in names:
        value = headers.get(name, "")
        if value:
            return header_text(value)
    return ""
