"""How a server authorizes: the ``kplane serve`` flags, with kube-apiserver's names."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from kplane.core.authz.authorizers import ALWAYS_ALLOW
from kplane.core.authz.delegated import WEBHOOK


@dataclass
class AuthorizationOptions:
    modes: tuple[str, ...] = (ALWAYS_ALLOW,)  # --authorization-mode, asked in this order


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
                             "--authorization-kubeconfig)")


def from_args(args: argparse.Namespace, *, delegated: bool = False) -> AuthorizationOptions:
    """The flags' options; ``delegated``: an ``--authorization-kubeconfig`` names a host, whose
    SubjectAccessReview then decides unless ``--authorization-mode`` says otherwise."""
    if args.authorization_mode is not None:
        return AuthorizationOptions(modes=args.authorization_mode)
    return AuthorizationOptions(modes=(WEBHOOK,)) if delegated else AuthorizationOptions()
