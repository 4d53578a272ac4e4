"""ServiceAccount tokens: the ``serviceaccounts/token`` subresource that issues them
(:mod:`.tokenrequest`), the authenticator that accepts them (:mod:`.authenticator`), their claims
(:mod:`.claims`), keys (:mod:`.keys`) and ``kplane serve`` flags (:mod:`.settings`).

One :class:`Tokens` per server, made when the strategies are registered and found again by the
later hooks through the server's registry.
"""

from __future__ import annotations

from pathlib import Path
from weakref import WeakKeyDictionary

from kplane.api import Registry
from kplane.plugins.core.tokens.keys import KeySet
from kplane.plugins.core.tokens.settings import Settings


class Tokens:
    """What issuing and verifying a server's tokens share: its settings and keys."""

    def __init__(self, settings: Settings, data_dir: Path | None) -> None:
        self.settings = settings
        self.keys = KeySet(settings.signing_key_file, settings.key_files, data_dir)


_servers: WeakKeyDictionary[Registry, Tokens] = WeakKeyDictionary()


def create(registry: Registry, settings: Settings, data_dir: Path | None) -> Tokens:
    made = _servers[registry] = Tokens(settings, data_dir)
    return made


def of(registry: Registry) -> Tokens:
    return _servers[registry]
