"""How a server authenticates: the ``kplane serve`` flags, with kube-apiserver's names."""

from __future__ import annotations

import argparse
from dataclasses import dataclass


@dataclass
class AuthenticationOptions:
    anonymous: bool = True  # --anonymous-auth: a request without credentials is system:anonymous


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--anonymous-auth", action=argparse.BooleanOptionalAction, default=True,
                        help="serve requests without credentials as system:anonymous in system:unauthenticated, "
                             "allowed what the authorizer grants them (default on, as kube-apiserver)")


def from_args(args: argparse.Namespace) -> AuthenticationOptions:
    return AuthenticationOptions(anonymous=args.anonymous_auth)
