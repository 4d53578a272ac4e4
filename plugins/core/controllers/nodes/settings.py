"""Flags of the simulated nodes (the core plugin's): how long a container's main process runs when
its pod does not say (``kplane.io/run-seconds``), and the kubelet's crash-loop back-off.

The values reach the plugin as ``config.plugin_settings["core"]`` by their ``dest``; an embedder
or a test may give them there by the same names.
"""

from __future__ import annotations

from typing import Any

from kplane.api import PluginOptions, parse_duration

DEFAULT_RUN_SECONDS = 5.0
DEFAULT_RESTART_BACKOFF = 10.0  # the kubelet's initial container back-off
RUN_SECONDS = "simulated_run_seconds"
RESTART_BACKOFF = "simulated_restart_backoff"


def _duration(text: str) -> float:
    """A Go duration (``5s``, ``1m30s``) or plain seconds; argparse names this function in its message."""
    try:
        seconds = float(text)
    except ValueError:
        seconds = parse_duration(text)
    if not 0 <= seconds <= 365 * 24 * 3600:
        raise ValueError(text)
    return seconds


def _backoff(text: str) -> float:
    seconds = _duration(text)
    if seconds < 0.1:
        raise ValueError(text)
    return seconds


def add_flags(parser: PluginOptions) -> None:
    parser.add_argument("--simulated-run-seconds", dest=RUN_SECONDS, type=_duration, default=DEFAULT_RUN_SECONDS,
                        metavar="DURATION",
                        help="how long a simulated container of a Job-like pod (restartPolicy Never or OnFailure), or "
                             "one whose image tag says exit-N, runs before it exits, unless its pod's kplane.io/run-seconds "
                             f"annotation says otherwise (default {DEFAULT_RUN_SECONDS:g}s)")
    parser.add_argument("--simulated-restart-backoff", dest=RESTART_BACKOFF, type=_backoff, default=DEFAULT_RESTART_BACKOFF,
                        metavar="DURATION",
                        help="the simulated kubelets' first crash-loop back-off, doubled per restart up to 5 minutes "
                             f"(at least 100ms; default {DEFAULT_RESTART_BACKOFF:g}s, as the kubelet's)")


def node_settings(config: Any) -> dict[str, float]:
    """The simulated nodes' keyword arguments from the server's ``config`` (defaults without one)."""
    given = ((getattr(config, "plugin_settings", None) or {}).get("core") or {})
    return {"run_seconds": float(given.get(RUN_SECONDS, DEFAULT_RUN_SECONDS)),
            "restart_backoff": float(given.get(RESTART_BACKOFF, DEFAULT_RESTART_BACKOFF))}
