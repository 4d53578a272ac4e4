"""Kubeconfig loading as kubectl and client-go do it, down to a ready :class:`RESTClient`.

Which files: an explicit path alone; else every file in ``KUBECONFIG`` (``os.pathsep``-separated,
duplicates and missing files skipped); else ``~/.kube/config``. Several files merge with
client-go's rule: the first file to define a named cluster, user or context, or the
``current-context``, wins, and entries are never merged field by field. Relative file paths
inside an entry are relative to the folder of the file that entry came from.

    client = client_from_kubeconfig()                 # KUBECONFIG or ~/.kube/config
    config = load_kubeconfig("kc.yaml", context="prod")
    client = RESTClient.from_config(config)

Not supported (a :class:`KubeconfigError`, rather than silently acting as someone else):
exec and auth-provider credential plugins, and impersonation (``as``).
"""

from __future__ import annotations

import base64
import binascii
import os
from dataclasses import dataclass, field
from pathlib import Path
from ssl import SSLContext  # by name: the ClientConfig field "ssl" shadows the module in annotations
from typing import Any

import yaml

from kplane.core.client.rest import RESTClient
from kplane.core.client.tls import TLSClientConfig, TLSConfigError

UNSUPPORTED_USER_FIELDS = ("exec", "auth-provider", "as", "as-uid", "as-groups", "as-user-extra")


class KubeconfigError(Exception):
    """The kubeconfig is missing, malformed, or does not describe a usable server and user."""


@dataclass(frozen=True)
class ClientConfig:
    """Where to connect and as whom: what a kubeconfig's context resolves to."""

    server: str
    namespace: str = "default"
    context: str = ""
    token: str | None = field(default=None, repr=False)
    username: str | None = None
    password: str | None = field(default=None, repr=False)
    ssl: SSLContext | None = field(default=None, repr=False)  # None for plain http:// servers
    ca_data: bytes | None = field(default=None, repr=False)  # the CA bundle it trusts (None: the system's)

    @property
    def auth_headers(self) -> dict[str, str]:
        """Basic auth as a header; a bearer token travels through RESTClient's ``token``."""
        if self.username is None and self.password is None:
            return {}
        credentials = base64.b64encode(f"{self.username or ''}:{self.password or ''}".encode()).decode()
        return {"Authorization": f"Basic {credentials}"}


@dataclass(frozen=True, slots=True)
class _Entry:
    """A named cluster, user or context, with the folder of the file that defined it."""

    body: dict[str, Any]
    folder: Path

    def path(self, key: str) -> Path | None:
        value = self.body.get(key)
        return self.folder / value if value else None  # an absolute value replaces the folder

    def data(self, key: str) -> bytes | None:
        value = self.body.get(key)
        if not value:
            return None
        try:
            return base64.b64decode(value, validate=True)
        except (binascii.Error, ValueError, TypeError):
            raise KubeconfigError(f"{key} is not valid base64") from None


@dataclass
class _Merged:
    current_context: str = ""
    clusters: dict[str, _Entry] = field(default_factory=dict)
    users: dict[str, _Entry] = field(default_factory=dict)
    contexts: dict[str, _Entry] = field(default_factory=dict)


def load_kubeconfig(path: str | os.PathLike[str] | None = None, context: str | None = None, *,
                    credentials: bool = True) -> ClientConfig:
    """Resolve ``context`` (default: the current-context) of the kubeconfig found as kubectl would.
    Without ``credentials``: the server and how to trust it, and none of the user's credentials
    (for clients that bring their own, as the controllers' ServiceAccount tokens)."""
    files = _candidate_files(path)
    merged = _merge(files)
    name = context or merged.current_context
    if not name:
        raise KubeconfigError(f"no current-context is set in {_names(files)} and no context was given")
    ctx = merged.contexts.get(name)
    if ctx is None:
        raise KubeconfigError(f'context "{name}" does not exist in {_names(files)}')
    cluster_name = _text(ctx.body.get("cluster"))
    if not cluster_name:
        raise KubeconfigError(f'context "{name}" names no cluster')
    cluster = merged.clusters.get(cluster_name)
    if cluster is None:
        raise KubeconfigError(f'cluster "{cluster_name}" of context "{name}" does not exist')
    server = _text(cluster.body.get("server"))
    if not server:
        raise KubeconfigError(f'cluster "{cluster_name}" has no server')
    user_name = _text(ctx.body.get("user"))
    user = merged.users.get(user_name) if user_name else _Entry({}, Path.cwd())
    if user is None:
        raise KubeconfigError(f'user "{user_name}" of context "{name}" does not exist')
    try:
        return _resolve(name, server, ctx, cluster, user if credentials else _Entry({}, user.folder))
    except KubeconfigError as err:
        raise KubeconfigError(f'context "{name}": {err}') from None


def client_from_kubeconfig(path: str | os.PathLike[str] | None = None, context: str | None = None) -> RESTClient:
    """A RESTClient for the kubeconfig's context; call it with an event loop running, and ``close()`` it."""
    return RESTClient.from_config(load_kubeconfig(path, context))


def _candidate_files(path: str | os.PathLike[str] | None) -> list[Path]:
    if path is not None:
        explicit = Path(path)
        if not explicit.is_file():
            raise KubeconfigError(f"kubeconfig {explicit} does not exist")
        return [explicit]
    listed = os.environ.get("KUBECONFIG", "")
    if listed:
        return [Path(p) for p in dict.fromkeys(p for p in listed.split(os.pathsep) if p)]
    return [Path.home() / ".kube" / "config"]


def _merge(files: list[Path]) -> _Merged:
    """First definition wins, for named entries and for current-context alike."""
    merged = _Merged()
    loaded = 0
    for file in files:
        try:
            text = file.read_text()
        except FileNotFoundError:
            continue
        except OSError as err:
            raise KubeconfigError(f"cannot read kubeconfig {file}: {err}") from None
        loaded += 1
        config = _parse(file, text)
        merged.current_context = merged.current_context or str(config.get("current-context") or "")
        folder = file.parent.absolute()
        for section, key, entries in (("clusters", "cluster", merged.clusters), ("users", "user", merged.users),
                                      ("contexts", "context", merged.contexts)):
            items = config.get(section) or []
            if not isinstance(items, list):
                raise KubeconfigError(f"malformed kubeconfig {file}: {section} is not a list")
            for item in items:
                if not isinstance(item, dict) or not item.get("name") or not isinstance(item.get(key) or {}, dict):
                    raise KubeconfigError(f"malformed kubeconfig {file}: every {section} entry needs a name and a {key} mapping")
                entries.setdefault(str(item["name"]), _Entry(item.get(key) or {}, folder))
    if not loaded:
        raise KubeconfigError(f"no kubeconfig found (looked for {_names(files)})")
    return merged


def _parse(file: Path, text: str) -> dict[str, Any]:
    try:
        config = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise KubeconfigError(f"malformed kubeconfig {file}: {err}") from None
    if config is None:
        return {}
    if not isinstance(config, dict):
        raise KubeconfigError(f"malformed kubeconfig {file}: not a mapping")
    return config


def _resolve(name: str, server: str, ctx: _Entry, cluster: _Entry, user: _Entry) -> ClientConfig:
    unsupported = [key for key in UNSUPPORTED_USER_FIELDS if user.body.get(key)]
    if unsupported:
        raise KubeconfigError(f"the user's {', '.join(unsupported)} is not supported")
    token = _text(user.body.get("token"))
    token_file = user.path("tokenFile")
    if token is None and token_file is not None:
        token = _read(token_file, "tokenFile").decode().strip()
    username, password = _text(user.body.get("username")), _text(user.body.get("password"))
    if token is not None and (username is not None or password is not None):
        raise KubeconfigError("more than one authentication method (token and basic auth); only one is allowed")
    ca_data = cluster.data("certificate-authority-data") or _file_data(cluster, "certificate-authority")
    return ClientConfig(
        server=server,
        namespace=ctx.body.get("namespace") or "default",
        context=name,
        token=token,
        username=username,
        password=password,
        ssl=_tls_context(cluster, user, ca_data) if server.startswith("https://") else None,
        ca_data=ca_data,
    )


def _tls_context(cluster: _Entry, user: _Entry, ca_data: bytes | None) -> SSLContext:
    """The cluster's CA (else the system's), server name and insecure-skip-tls-verify, and the user's certificate."""
    tls = TLSClientConfig(
        ca_data=ca_data,
        cert_data=user.data("client-certificate-data") or user.path("client-certificate"),
        key_data=user.data("client-key-data") or user.path("client-key"),
        server_name=cluster.body.get("tls-server-name") or None,
        insecure=bool(cluster.body.get("insecure-skip-tls-verify")),
    )
    try:
        return tls.context()
    except TLSConfigError as err:
        raise KubeconfigError(str(err)) from None


def _file_data(entry: _Entry, key: str) -> bytes | None:
    path = entry.path(key)
    return None if path is None else _read(path, key)


def _read(path: Path, key: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise KubeconfigError(f"cannot read {key} {path}: {err.strerror}") from None


def _text(value: Any) -> str | None:
    """A YAML scalar as a string; absent and empty alike are None, as Go's zero value."""
    return None if value is None or value == "" else str(value)


def _names(files: list[Path]) -> str:
    return ", ".join(str(f) for f in files)
