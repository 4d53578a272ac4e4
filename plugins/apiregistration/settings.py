"""The aggregator's settings: two come from ``kplane serve`` flags (:func:`add_flags`), the
front proxy's certificate from the server's (``--proxy-client-cert-file``, read from the
config by :func:`settings_of`), the rest are tuning.

The server hands them over as plain values in ``config.plugin_settings[<plugin name>]``: the
flags by their ``dest`` (``{"apiservice_backends": True}``), and from an embedder or a test any
field of Settings by its name (``{"backends": True, "probe_interval": 1.0}``); a name that is
neither makes the plugin fail with a TypeError naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import argparse

from kplane.api import PluginOptions

BACKENDS_FLAG = "--enable-apiservice-backends"  # the flag behind ``backends``
NO_BACKENDS_FLAG = "--no-enable-apiservice-backends"
# The flags' dests (also @pytest.mark.kplane's keywords for them) and the fields they set.
FLAG_FIELDS = {"apiservice_backends": "backends", "apiservice_probe_interval": "probe_interval"}


@dataclass
class Settings:
    backends: bool = True  # proxy to spec.url / spec.service backends at all (--no-enable-apiservice-backends: off)
    probe_interval: float = 30.0  # an available backend is checked again this often (--apiservice-probe-interval)
    probe_timeout: float = 5.0  # one availability check
    probe_max_backoff: float = 5.0  # an unavailable backend is checked again within this
    discovery_ttl: float = 5.0  # a backend's discovery and OpenAPI index are kept this long
    discovery_timeout: float = 5.0  # one fetch of them
    connect_timeout: float = 5.0  # opening a connection to a backend
    response_timeout: float = 60.0  # a backend's response headers (a watch answers them at once)
    client_cert: tuple[Path, Path] | None = None  # the front proxy's certificate and key, presented over https


def add_flags(parser: PluginOptions) -> None:
    parser.add_argument("--apiservice-probe-interval", dest="apiservice_probe_interval", type=float, default=30.0,
                        metavar="SECONDS", help="how often the backend of an available APIService is checked again "
                                                "(default 30)")
    parser.add_argument(BACKENDS_FLAG, dest="apiservice_backends", action=argparse.BooleanOptionalAction, default=True,
                        help="proxy the group/versions of APIServices with spec.url or spec.service to those servers, "
                             "also for groups served here (default on; who may create APIServices is RBAC's to say). "
                             f"{NO_BACKENDS_FLAG}: such APIServices are refused, for a server that must never make "
                             "requests to other hosts")


def settings_of(config: Any, plugin_name: str) -> Settings:
    """This plugin's settings in the server's ``config`` (defaults without a config: ``kplane plugins``)."""
    given = config.plugin_settings.get(plugin_name, {}) if config is not None else {}
    settings = Settings(**{FLAG_FIELDS.get(name, name): value for name, value in given.items()})
    proxy = config.front_proxy if config is not None else None
    if settings.client_cert is None and proxy is not None and proxy.client_cert_file and proxy.client_key_file:
        settings.client_cert = (proxy.client_cert_file, proxy.client_key_file)
    return settings
