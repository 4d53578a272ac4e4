"""How a server authenticates: the ``kplane serve`` flags, with kube-apiserver's names."""

from __future__ import annotations

import argparse
from dataclasses import dataclass, field
from pathlib import Path


@dataclass(frozen=True)
class RequestHeaderOptions:
    """The front proxy's headers (``--requestheader-*``); off without ``client_ca_file``."""

    client_ca_file: Path | None = None  # the CA of the proxy's client certificates
    allowed_names: tuple[str, ...] = ()  # CNs allowed to send the headers (empty: any the CA signed)
    username_headers: tuple[str, ...] = ()  # X-Remote-User is common
    uid_headers: tuple[str, ...] = ()
    group_headers: tuple[str, ...] = ()
    extra_headers_prefix: tuple[str, ...] = ()

    def problems(self) -> list[str]:
        """What kube-apiserver refuses in these settings (a start-up error)."""
        out = [f'empty value in "{flag}"' for flag, values in self._lists() if any(not v.strip() for v in values)]
        if self.uid_headers and not any(h.lower() == "x-remote-uid" for h in self.uid_headers):
            out.append("--requestheader-uid-headers is set without specifying the standard X-Remote-Uid header - "
                       "API aggregation will not work")
        return out

    def _lists(self) -> list[tuple[str, tuple[str, ...]]]:
        return [("requestheader-username-headers", self.username_headers), ("requestheader-uid-headers", self.uid_headers),
                ("requestheader-group-headers", self.group_headers),
                ("requestheader-extra-headers-prefix", self.extra_headers_prefix),
                ("requestheader-allowed-names", self.allowed_names)]


@dataclass
class AuthenticationOptions:
    anonymous: bool = True  # --anonymous-auth: a request without credentials is system:anonymous
    token_auth_file: Path | None = None  # --token-auth-file: static bearer tokens (CSV), read at start
    client_ca_file: Path | None = None  # --client-ca-file: client certificates it signed name their user
    requestheader: RequestHeaderOptions = field(default_factory=RequestHeaderOptions)


class _Names(argparse.Action):
    """A list flag as kube's (pflag ``StringSlice``): comma-separated, and repeatable."""

    def __call__(self, parser: argparse.ArgumentParser, namespace: argparse.Namespace, values: object,
                 option_string: str | None = None) -> None:
        given = getattr(namespace, self.dest) or ()
        setattr(namespace, self.dest, (*given, *str(values).split(",")))


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--anonymous-auth", action=argparse.BooleanOptionalAction, default=True,
                        help="serve requests without credentials as system:anonymous in system:unauthenticated, "
                             "allowed what the authorizer grants them (default on, as kube-apiserver)")
    parser.add_argument("--token-auth-file", type=Path, metavar="FILE",
                        help="bearer tokens, one per CSV line: token,user,uid[,\"group1,group2\"] (read at start)")
    parser.add_argument("--client-ca-file", type=Path, metavar="FILE",
                        help="a request with a client certificate signed by one of these CAs (PEM) is its CN's, "
                             "in its O groups")
    parser.add_argument("--requestheader-client-ca-file", type=Path, metavar="FILE",
                        help="CAs (PEM) of the front proxy's client certificates: only a client with one is "
                             "believed in the --requestheader-username-headers")
    parser.add_argument("--requestheader-allowed-names", action=_Names, default=(), metavar="NAMES",
                        help="CNs of the front proxy's certificates allowed to name users (default: any)")
    parser.add_argument("--requestheader-username-headers", action=_Names, default=(), metavar="HEADERS",
                        help="headers naming the user, the first with a value wins (X-Remote-User is common)")
    parser.add_argument("--requestheader-uid-headers", action=_Names, default=(), metavar="HEADERS",
                        help="headers naming the user's uid (X-Remote-Uid is suggested)")
    parser.add_argument("--requestheader-group-headers", action=_Names, default=(), metavar="HEADERS",
                        help="headers naming the user's groups (X-Remote-Group is suggested)")
    parser.add_argument("--requestheader-extra-headers-prefix", action=_Names, default=(), metavar="PREFIXES",
                        help="prefixes of headers carrying the user's extra (X-Remote-Extra- is suggested)")


def from_args(args: argparse.Namespace) -> AuthenticationOptions:
    return AuthenticationOptions(
        anonymous=args.anonymous_auth, token_auth_file=args.token_auth_file, client_ca_file=args.client_ca_file,
        requestheader=RequestHeaderOptions(
            args.requestheader_client_ca_file, tuple(args.requestheader_allowed_names),
            tuple(args.requestheader_username_headers), tuple(args.requestheader_uid_headers),
            tuple(args.requestheader_group_headers), tuple(args.requestheader_extra_headers_prefix)))
