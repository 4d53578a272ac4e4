"""The authenticators ``kplane serve``'s flags configure, added in kube-apiserver's order: the
front proxy's headers, client certificates (request authenticators, asked first), then the
token file (after the server's own loopback tokens). Files are read once, at start."""

from __future__ import annotations

import logging
from pathlib import Path

from kplane.core.authn.authenticators import Authenticators
from kplane.core.authn.clientcert import CertificateAuthority, ClientCertificates
from kplane.core.authn.options import AuthenticationOptions, RequestHeaderOptions
from kplane.core.authn.requestheader import HeaderNames, RequestHeaders
from kplane.core.authn.tokenfile import load_token_file

log = logging.getLogger(__name__)


class AuthenticationConfigError(ValueError):
    """A flag names a file that cannot be used, or settings kube-apiserver refuses."""


def certificate_authority(path: Path, flag: str) -> CertificateAuthority:
    """The CA bundle at ``path``, or an error naming ``flag``."""
    try:
        return CertificateAuthority(path.read_bytes(), f"{flag} {path}")
    except OSError as err:
        raise AuthenticationConfigError(f"{flag} {path} cannot be read: {err.strerror or err}") from None
    except ValueError as err:
        raise AuthenticationConfigError(str(err)) from None


def front_proxy(options: RequestHeaderOptions) -> RequestHeaders | None:
    """The front proxy's authenticator, None without ``--requestheader-client-ca-file``."""
    problems = options.problems()
    if problems:
        raise AuthenticationConfigError("; ".join(problems))
    if options.client_ca_file is None:
        if options.username_headers:
            log.warning("--requestheader-username-headers without --requestheader-client-ca-file: "
                        "no request's headers are believed")
        return None
    if options.username_headers and not any(h.strip().lower() == "x-remote-user" for h in options.username_headers):
        log.warning("--requestheader-username-headers is set without specifying the standard X-Remote-User header "
                    "- API aggregation will not work")
    names = HeaderNames(*(tuple(h.strip() for h in hs) for hs in (
        options.username_headers, options.uid_headers, options.group_headers, options.extra_headers_prefix)))
    authority = certificate_authority(options.client_ca_file, "--requestheader-client-ca-file")
    return RequestHeaders(authority, names, [n.strip() for n in options.allowed_names])


def add_configured(authenticators: Authenticators, options: AuthenticationOptions) -> None:
    """Add what ``options`` configure to ``authenticators``; raises :class:`AuthenticationConfigError`."""
    proxy = front_proxy(options.requestheader)
    if proxy is not None:
        authenticators.add_request("requestheader", proxy)
    if options.client_ca_file is not None:
        authority = certificate_authority(options.client_ca_file, "--client-ca-file")
        authenticators.add_request("x509", ClientCertificates(authority))
    if options.token_auth_file is not None:
        try:
            authenticators.add_token("token-file", load_token_file(options.token_auth_file))
        except ValueError as err:
            raise AuthenticationConfigError(f"--token-auth-file: {err}") from None
