"""The aggregator's settings: two come from ``kplane serve`` flags, the rest are tuning.

The server hands them over as plain values in ``config.plugin_settings[<plugin name>]``
(``{"backends": True, "probe_interval": 1.0}``); a name Settings has not makes the plugin fail
with a TypeError naming it.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

BACKENDS_FLAG = "--enable-apiservice-backends"  # the flag behind ``backends``, for messages


@dataclass
class Settings:
    backends: bool = False  # proxy to spec.url / spec.service backends at all (--enable-apiservice-backends)
    probe_interval: float = 30.0  # an available backend is checked again this often (--apiservice-probe-interval)
    probe_timeout: float = 5.0  # one availability check
    probe_max_backoff: float = 5.0  # an unavailable backend is checked again within this
    discovery_ttl: float = 5.0  # a backend's discovery and OpenAPI index are kept this long
    discovery_timeout: float = 5.0  # one fetch of them
    connect_timeout: float = 5.0  # opening a connection to a backend
    response_timeout: float = 60.0  # a backend's response headers (a watch answers them at once)


def settings_of(config: Any, plugin_name: str) -> Settings:
    """This plugin's settings in the server's ``config`` (defaults without a config: ``kplane plugins``)."""
    return Settings(**(config.plugin_settings.get(plugin_name, {}) if config is not None else {}))
