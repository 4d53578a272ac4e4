"""ServiceAccount tokens: the ``serviceaccounts/token`` subresource that issues them
(:mod:`.tokenrequest`), the authenticator that accepts them (:mod:`.authenticator`), their claims
(:mod:`.claims`), keys (:mod:`.keys`) and ``kplane serve`` flags (:mod:`.settings`); the legacy
tokens of Secrets (:mod:`.legacy`) and the controller that fills them (:mod:`.controller`).

One :class:`Tokens` per server, made when the strategies are registered and found again by the
later hooks through the server's registry, or, by the controllers' hook, through the server's
config: the in-process controller-manager signs with the server's own keys.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any
from weakref import WeakKeyDictionary

from kplane.api import Registry
from kplane.plugins.core.tokens.keys import KeySet
from kplane.plugins.core.tokens.settings import Settings


class Tokens:
    """What issuing and verifying a server's tokens share: its settings and keys."""

    def __init__(self, settings: Settings, data_dir: Path | None, config: Any) -> None:
        self.settings = settings
        self.config = config  # the server's, as the hooks get it
        self.keys = KeySet(settings.signing_key_file, settings.key_files, data_dir)


_servers: WeakKeyDictionary[Registry, Tokens] = WeakKeyDictionary()


def create(registry: Registry, settings: Settings, config: Any) -> Tokens:
    made = _servers[registry] = Tokens(settings, config.data_dir if config is not None else None, config)
    return made


def of(registry: Registry) -> Tokens:
    return _servers[registry]


def serving(config: Any) -> Tokens | None:
    """The Tokens of the server in this process whose config is ``config`` (None: no server here,
    as for ``kplane controller-manager``)."""
    if config is None:
        return None
    return next((made for made in list(_servers.values()) if made.config is config), None)
