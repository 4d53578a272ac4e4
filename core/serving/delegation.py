"""kplane as an extension API server: authentication and authorization delegated to the cluster
it extends, with k8s.io/apiserver's ``DelegatingAuthenticationOptions`` and
``DelegatingAuthorizationOptions`` flags (those sample-apiserver takes).

``--authentication-kubeconfig`` names the host: bearer tokens are checked by its TokenReview.
``--authorization-kubeconfig`` too: decisions come from its SubjectAccessReview, as the
``Webhook`` authorization mode, which becomes the default mode when that flag is given.
Without ``--client-ca-file`` and ``--requestheader-client-ca-file`` the host's
``kube-system/extension-apiserver-authentication`` says which CAs to trust
(:mod:`kplane.core.serving.authconfigmap`; ``--authentication-skip-lookup``,
``--authentication-tolerate-lookup-failure``).
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from pathlib import Path

from kplane.core.authn.authenticators import Authenticators
from kplane.core.authn.delegated import TokenReviewAuthenticator
from kplane.core.authz.authorizers import Authorizers
from kplane.core.authz.delegated import WEBHOOK, SubjectAccessReviewAuthorizer
from kplane.core.client.kubeconfig import client_from_kubeconfig
from kplane.core.client.rest import RESTClient
from kplane.core.server.filters import parse_duration

ALWAYS_ALLOW_PATHS = ("/healthz", "/readyz", "/livez")


@dataclass
class DelegationOptions:
    authentication_kubeconfig: Path | None = None
    token_cache_ttl: float = 10.0
    authorization_kubeconfig: Path | None = None
    authorized_ttl: float = 10.0
    unauthorized_ttl: float = 10.0
    always_allow_paths: tuple[str, ...] = ALWAYS_ALLOW_PATHS
    skip_lookup: bool = False  # --authentication-skip-lookup
    tolerate_lookup_failure: bool = False  # --authentication-tolerate-lookup-failure


def _ttl(text: str) -> float:
    try:
        return parse_duration(text)
    except ValueError as err:
        raise argparse.ArgumentTypeError(str(err)) from None


def _paths(text: str) -> tuple[str, ...]:
    return tuple(p.strip() for p in text.split(",") if p.strip())


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--authentication-kubeconfig", type=Path, default=None, metavar="FILE",
                        help="kubeconfig of the cluster this server extends: bearer tokens are checked by its "
                             "TokenReview (an extension API server's delegated authentication)")
    parser.add_argument("--authentication-skip-lookup", action="store_true",
                        help="do not read the CAs and front-proxy settings no flag gives from the host's "
                             "kube-system/extension-apiserver-authentication ConfigMap")
    parser.add_argument("--authentication-tolerate-lookup-failure", action="store_true",
                        help="start even if that ConfigMap cannot be read (requests may then be anonymous)")
    parser.add_argument("--authentication-token-webhook-cache-ttl", type=_ttl, default=10.0, metavar="DURATION",
                        help="how long the host's TokenReview answers are kept (default 10s)")
    parser.add_argument("--authorization-kubeconfig", type=Path, default=None, metavar="FILE",
                        help="kubeconfig of the cluster this server extends: requests are authorized by its "
                             "SubjectAccessReview (the Webhook mode, then the default --authorization-mode)")
    parser.add_argument("--authorization-webhook-cache-authorized-ttl", type=_ttl, default=10.0, metavar="DURATION",
                        help="how long the host's allowed answers are kept (default 10s)")
    parser.add_argument("--authorization-webhook-cache-unauthorized-ttl", type=_ttl, default=10.0, metavar="DURATION",
                        help="how long the host's other answers are kept (default 10s)")
    parser.add_argument("--authorization-always-allow-paths", type=_paths, default=ALWAYS_ALLOW_PATHS,
                        metavar="PATHS", help="paths allowed without asking the host (default "
                                              f"{','.join(ALWAYS_ALLOW_PATHS)})")


def from_args(args: argparse.Namespace) -> DelegationOptions:
    return DelegationOptions(args.authentication_kubeconfig, args.authentication_token_webhook_cache_ttl,
                             args.authorization_kubeconfig, args.authorization_webhook_cache_authorized_ttl,
                             args.authorization_webhook_cache_unauthorized_ttl, args.authorization_always_allow_paths,
                             args.authentication_skip_lookup, args.authentication_tolerate_lookup_failure)


def delegate(options: DelegationOptions, authenticators: Authenticators, authorizers: Authorizers) -> list[RESTClient]:
    """Add the host's TokenReview and SubjectAccessReview to the server; the clients to close on stop."""
    clients: list[RESTClient] = []
    if options.authentication_kubeconfig is not None:
        client = client_from_kubeconfig(options.authentication_kubeconfig)
        clients.append(client)
        authenticators.add_token("TokenReview", TokenReviewAuthenticator(client, options.token_cache_ttl))
    if options.authorization_kubeconfig is not None:
        client = client_from_kubeconfig(options.authorization_kubeconfig)
        clients.append(client)
        authorizers.add(WEBHOOK, SubjectAccessReviewAuthorizer(
            client, authorized_ttl=options.authorized_ttl, unauthorized_ttl=options.unauthorized_ttl,
            always_allow_paths=options.always_allow_paths))
    return clients
