"""How a server authorizes: the ``kplane serve`` flags, with kube-apiserver's names."""

from __future__ import annotations

import argparse
from dataclasses import dataclass

from kplane.core.authz.authorizers import ALWAYS_ALLOW


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
    parser.add_argument("--authorization-mode", type=_modes, default=AuthorizationOptions().modes, metavar="MODES",
                        help="authorizers asked in order, comma-separated: AlwaysAllow, AlwaysDeny, or a mode a "
                             f"plugin offers (RBAC); members of system:masters are always allowed (default {default})")


def from_args(args: argparse.Namespace) -> AuthorizationOptions:
    return AuthorizationOptions(modes=args.authorization_mode)
