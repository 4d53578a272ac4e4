"""The node lifecycle flags, with kube-controller-manager's and the kubelet's names, as flags of
the core plugin: how often the simulated kubelets report, how often the node lifecycle
controller looks, and how long it waits before a silent node is ``Ready=Unknown``.

Their values reach the plugin as ``config.plugin_settings["core"]`` by their ``dest``; a test
gives them the same way (``plugin_settings={"core": {"node_monitor_grace_period": 2.0}}``).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kplane.api import PluginOptions, parse_duration

FLAG_FIELDS = {
    "node_status_update_frequency": "status_update_frequency",
    "node_monitor_period": "monitor_period",
    "node_monitor_grace_period": "monitor_grace_period",
}


@dataclass(frozen=True)
class Settings:
    status_update_frequency: float = 10.0  # the kubelets' heartbeat (status and Lease)
    monitor_period: float = 5.0  # how often the controller checks every node
    monitor_grace_period: float = 50.0  # silence after which a node's conditions are Unknown


def duration(text: str) -> float:
    """A Go duration flag value in seconds (argparse names this function in its message)."""
    return parse_duration(text)


def add_flags(parser: PluginOptions) -> None:
    parser.add_argument("--node-status-update-frequency", dest="node_status_update_frequency", type=duration, default=10.0,
                        metavar="DURATION", help="how often each simulated kubelet renews its Node's status and Lease (default 10s)")
    parser.add_argument("--node-monitor-period", dest="node_monitor_period", type=duration, default=5.0, metavar="DURATION",
                        help="how often the node lifecycle controller checks the nodes' heartbeats (default 5s)")
    parser.add_argument("--node-monitor-grace-period", dest="node_monitor_grace_period", type=duration, default=50.0,
                        metavar="DURATION", help="how long a node may stay silent before its conditions turn Unknown "
                                                 "and it is tainted unreachable (default 50s)")


def settings_of(config: Any, plugin_name: str) -> Settings:
    """These settings in the server's ``config`` (the defaults without one). ValueError for a
    value that cannot work, which stops the start naming it."""
    given = config.plugin_settings.get(plugin_name, {}) if config is not None else {}
    settings = Settings(**{field: float(given[dest]) for dest, field in FLAG_FIELDS.items() if given.get(dest) is not None})
    if min(settings.status_update_frequency, settings.monitor_period, settings.monitor_grace_period) <= 0:
        raise ValueError("--node-status-update-frequency, --node-monitor-period and --node-monitor-grace-period must be positive")
    return settings
