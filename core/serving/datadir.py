"""The server's data dir and the kubeconfig it writes there, each failure an operator can fix
reported as a :class:`StartupError` saying what is wrong."""

from __future__ import annotations

import base64
import os
from pathlib import Path

import yaml

from kplane.core.pki.certificates import KeyPair
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


def write_kubeconfig(path: Path, server: str, ca_data: bytes | None = None, client: KeyPair | None = None) -> None:
    """A kubeconfig pointing at this server: over HTTPS trusting ``ca_data`` (None: the system's
    CAs) and presenting ``client``'s certificate; over plain HTTP, with no credentials."""
    cluster: dict[str, str] = {"server": server}
    if ca_data is not None:
        cluster["certificate-authority-data"] = _b64(ca_data)
    user = {} if client is None else {"client-certificate-data": _b64(client.cert_pem()), "client-key-data": _b64(client.key_pem())}
    config = {
        "apiVersion": "v1",
        "kind": "Config",
        "clusters": [{"name": "kplane", "cluster": cluster}],
        "users": [{"name": "kplane-admin", "user": user}],
        "contexts": [{"name": "kplane", "context": {"cluster": "kplane", "user": "kplane-admin", "namespace": "default"}}],
        "current-context": "kplane",
        "preferences": {},
    }
    try:
        write_private(path, yaml.safe_dump(config, sort_keys=False).encode())
    except OSError as err:
        raise StartupError(f"cannot write the kubeconfig {path}: {err.strerror}") from None


def _b64(data: bytes) -> str:
    return base64.b64encode(data).decode()
