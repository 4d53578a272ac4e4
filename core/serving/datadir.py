"""The server's data dir and the kubeconfig it writes there, each failure an operator can fix
reported as a :class:`StartupError` saying what is wrong."""

from __future__ import annotations

import os
from pathlib import Path

import yaml

from kplane.core.privatefiles import private_dir, write_private


class StartupError(Exception):
    """The server cannot start for a reason its operator can fix; the message says which."""


def prepare_data_dir(path: Path) -> None:
    """The data dir, private and writable by us, or an error saying why it is not."""
    try:
        private_dir(path)
    except OSError as err:
        raise StartupError(f"cannot use the data dir {path}: {err.strerror}") from None
    if not os.access(path, os.W_OK | os.X_OK):
        raise StartupError(f"the data dir {path} is not writable")


def write_kubeconfig(path: Path, server: str) -> None:
    """A kubeconfig pointing at this server (plain HTTP on loopback, no credentials yet)."""
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kplane", "cluster": {"server": server}}],
        "users": [{"name": "kplane-admin", "user": {}}],
        "contexts": [{"name": "kplane", "context": {"cluster": "kplane", "user": "kplane-admin", "namespace": "default"}}],
        "current-context": "kplane",
        "preferences": {},
    }
    try:
        write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
    except OSError as err:
        raise StartupError(f"cannot write the kubeconfig {path}: {err.strerror}") from None
