"""The ServiceAccount token flags, with kube-apiserver's names, as flags of the core plugin.

They are the core plugin's (not the server's) because everything they configure lives here: the
keys sign and verify the tokens of the ServiceAccounts this plugin serves, and a server without
the core group has no accounts to issue tokens for. ``--api-audiences`` comes along because kube
derives it from ``--service-account-issuer``; the plugin hands it to the server's authenticator
union (``Authenticators.api_audiences``) so every token authenticator and TokenReview see it.

The values reach the plugin as ``config.plugin_settings["core"]`` by their ``dest``; an embedder
or a test may give any field of :class:`Settings` by its name instead.
"""

from __future__ import annotations

import argparse
from dataclasses import dataclass
from typing import Any

from kplane.api import PluginOptions, parse_duration

#: kubeadm's issuer: what in-cluster clients know the API server as.
DEFAULT_ISSUER = "https://kubernetes.default.svc.cluster.local"
MAX_EXPIRATION_FLAG = "--service-account-max-token-expiration"
# The flags' dests and the fields they set.
FLAG_FIELDS = {
    "service_account_issuer": "issuers",
    "service_account_key_file": "key_files",
    "service_account_signing_key_file": "signing_key_file",
    "api_audiences": "api_audiences",
    "service_account_max_token_expiration": "max_expiration",
    "service_account_extend_token_expiration": "extend_expiration",
}
_MIN_MAX_EXPIRATION, _MAX_MAX_EXPIRATION = 3600.0, float(1 << 32)  # kube-apiserver's bounds of the flag


@dataclass(frozen=True)
class Settings:
    issuers: tuple[str, ...] = (DEFAULT_ISSUER,)  # the first issues; all are accepted
    key_files: tuple[str, ...] = ()  # PEM files of more keys that verify tokens
    signing_key_file: str = ""  # "": DATA_DIR/pki/sa.key, made the first time a token is issued
    api_audiences: tuple[str, ...] = ()  # what a token must be good for (empty: the first issuer)
    max_expiration: float = 0.0  # seconds; longer TokenRequests are shortened to it (0: no maximum)
    extend_expiration: bool = True  # pod-bound tokens of 3607 s are good for a year, warning after 3607 s

    @property
    def audiences(self) -> tuple[str, ...]:
        """The API audiences: the flag's, or the issuer (kube's default)."""
        return self.api_audiences or self.issuers[:1]


def duration(text: str) -> float:
    """A Go duration flag value in seconds (argparse names this function in its message)."""
    return parse_duration(text)


def add_flags(parser: PluginOptions) -> None:
    parser.add_argument("--service-account-issuer", dest="service_account_issuer", action="append", metavar="ISSUER",
                        help="the iss claim of ServiceAccount tokens issued here; repeat it to accept tokens of "
                             f"other issuers too, the first one issues (default {DEFAULT_ISSUER})")
    parser.add_argument("--service-account-key-file", dest="service_account_key_file", action="append", metavar="FILE",
                        help="a PEM file of RSA or ECDSA public keys, private keys or certificates whose keys verify "
                             "ServiceAccount tokens, besides the signing key's; repeatable")
    parser.add_argument("--service-account-signing-key-file", dest="service_account_signing_key_file", metavar="FILE",
                        help="the PEM RSA or ECDSA private key that signs ServiceAccount tokens (default "
                             "DATA_DIR/pki/sa.key, an RSA key made the first time a token is issued)")
    parser.add_argument("--api-audiences", dest="api_audiences", action="append", metavar="AUDIENCE[,AUDIENCE...]",
                        help="the audiences a token must be good for to authenticate to this server, and those of "
                             "a TokenRequest that names none (default: the first --service-account-issuer)")
    parser.add_argument(MAX_EXPIRATION_FLAG, dest="service_account_max_token_expiration", type=duration,
                        default=0.0, metavar="DURATION",
                        help="the longest a TokenRequest's token is good for; longer requests are shortened to it, "
                             "with a warning (between 1h and 2^32s; default: no maximum)")
    parser.add_argument("--service-account-extend-token-expiration", dest="service_account_extend_token_expiration",
                        action=argparse.BooleanOptionalAction, default=True,
                        help="a pod-bound token asked for 3607 seconds, as the ServiceAccount admission plugin's "
                             "projected tokens are, is good for a year, as kube-apiserver's (default on)")


def settings_of(config: Any, plugin_name: str) -> Settings:
    """This plugin's token settings in the server's ``config`` (defaults without one: ``kplane plugins``).
    ValueError for a value kube-apiserver refuses, which stops the start naming it."""
    given = config.plugin_settings.get(plugin_name, {}) if config is not None else {}
    values: dict[str, Any] = {}
    for name, value in given.items():
        key = FLAG_FIELDS.get(name, name)
        if key not in Settings.__dataclass_fields__:
            continue  # another of the plugin's flags (the simulated nodes', the node lifecycle's)
        if value is None:
            continue  # a repeatable flag not given: the default
        if key == "api_audiences":
            value = tuple(part.strip() for item in value for part in item.split(",") if part.strip())
        elif key in ("issuers", "key_files"):
            value = tuple(value)
        values[key] = value
    settings = Settings(**values)
    if not settings.issuers or any(not issuer for issuer in settings.issuers):
        raise ValueError("--service-account-issuer must not be empty")
    if settings.max_expiration and not _MIN_MAX_EXPIRATION <= settings.max_expiration <= _MAX_MAX_EXPIRATION:
        raise ValueError(f"{MAX_EXPIRATION_FLAG} must be between 1 hour and 2^32 seconds")
    return settings
