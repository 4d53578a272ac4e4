"""How a server authorizes: the ``kplane serve`` flags, with kube-apiserver's names."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from kplane.core.authz.authorizers import ALWAYS_ALLOW
from kplane.core.authz.delegated import WEBHOOK


#: The mode of the rbac plugin, kplane's default as kubeadm's clusters' (kube-apiserver's flag says AlwaysAllow).
RBAC = "RBAC"


@dataclass
class AuthorizationOptions:
    modes: tuple[str, ...] = (RBAC,)  # --authorization-mode, asked in this order


def _modes(text: str) -> tuple[str, ...]:
    modes = tuple(m.strip() for m in text.split(",") if m.strip())
    if not modes:
        raise argparse.ArgumentTypeError("name at least one authorization mode")
    if len(set(modes)) != len(modes):
        raise argparse.ArgumentTypeError(f"an authorization mode is named twice: {text}")
    return modes


def add_flags(parser: argparse.ArgumentParser) -> None:
    default = ",".join(AuthorizationOptions().modes)
    parser.add_argument("--authorization-mode", type=_modes, default=None, metavar="MODES",
                        help="authorizers asked in order, comma-separated: AlwaysAllow, AlwaysDeny, Webhook (the "
                             "host of --authorization-kubeconfig) or a mode a plugin offers (RBAC); members of "
                             f"system:masters are always allowed (default {default}; Webhook with "
                             "--authorization-kubeconfig; AlwaysAllow with --http)")


def from_args(args: argparse.Namespace, *, delegated: bool = False, plain_http: bool = False) -> AuthorizationOptions:
    """The flags' options. Without ``--authorization-mode``: with an ``--authorization-kubeconfig``
    (``delegated``) the host's SubjectAccessReview decides; over ``--http`` (``plain_http``),
    where kubectl sends no credentials and every request is anonymous, everything is allowed, as
    kube-apiserver's old insecure port did (and the server says so); otherwise RBAC."""
    if args.authorization_mode is not None:
        return AuthorizationOptions(modes=args.authorization_mode)
    if delegated:
        return AuthorizationOptions(modes=(WEBHOOK,))
    return AuthorizationOptions(modes=(ALWAYS_ALLOW,)) if plain_http else AuthorizationOptions()
