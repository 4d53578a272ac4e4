"""Open a storage backend from the ``--storage`` URL, found by its scheme in the installed
distributions' ``kplane.storage`` entry points.

The contract for a backend, kplane's own (``sqlite``, ``etcd``, ``etcds``, declared in its
pyproject.toml) and a third party's alike:

- the entry point's **name** is the URL scheme it serves (``redis = "kplane_redis:BACKEND"`` serves
  ``--storage redis://…``);
- it names a :class:`Backend`: ``url_form``, how its URLs look (listed when a URL has no backend,
  if the backend's module is imported already; others are listed as ``scheme://...``), and
  ``open``, an async callable given the whole URL as typed;
- ``open`` returns a ready :class:`~kplane.core.storage.interface.Storage` (the contract suite in
  ``tests/storage/`` says what that means), and raises :class:`StorageURLError` for a URL it cannot
  use or :class:`~kplane.core.storage.interface.StorageError` when the storage cannot be reached;
  the server prints either message as it is, so neither may carry a secret.

Only the backend asked for is imported (an etcd server never imports the SQLite backend, nor a
SQLite one etcd's client), and none for a URL that no backend serves. A scheme another distribution also declares stays kplane's (of two
third parties', the first distribution's by name).
"""

from __future__ import annotations

import importlib.metadata
import os
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from urllib.parse import ParseResult, parse_qs, urlparse, urlsplit

from kplane.core.storage.interface import Storage, StorageError

ENTRY_POINT_GROUP = "kplane.storage"
OWN_DISTRIBUTION = "kplane"
DEFAULT_SCHEME = "sqlite"  # a server's storage without --storage; listed first among the supported
_TLS_OPTIONS = ("ca", "cert", "key")


class StorageURLError(ValueError):
    """A ``--storage`` URL no backend can open as written; the message is fit to print."""


@dataclass(frozen=True, slots=True)
class Backend:
    """What a ``kplane.storage`` entry point names (see the module docstring)."""

    url_form: str  # e.g. "sqlite:///path/to/state.db"
    open: Callable[[str], Awaitable[Storage]]  # the whole URL -> a ready Storage


async def open_storage(url: str) -> Storage:
    """The storage ``url`` names, opened by the backend installed for its scheme."""
    try:
        scheme = urlparse(url).scheme
    except ValueError as err:  # e.g. an unclosed "[" of an IPv6 address
        raise StorageURLError(f"malformed storage URL {url!r}: {err}") from None
    installed = _installed()
    entry = installed.get(scheme) if scheme else None
    if entry is None:
        listed = sorted(installed, key=lambda name: (name != DEFAULT_SCHEME, name))
        forms = [_url_form(name, installed[name]) for name in listed]
        supported = f"{', '.join(forms[:-1])} or {forms[-1]}" if len(forms) > 1 else "".join(forms)
        raise StorageURLError(f"unsupported storage URL {url!r} (supported: {supported})")
    return await _load(entry).open(url)


def _installed() -> dict[str, importlib.metadata.EntryPoint]:
    """The backends by scheme; of two for one scheme, kplane's, else the first distribution's by name."""
    def rank(entry: importlib.metadata.EntryPoint) -> tuple[bool, str]:
        dist = entry.dist.name if entry.dist is not None else ""
        return dist != OWN_DISTRIBUTION, dist

    found: dict[str, importlib.metadata.EntryPoint] = {}
    for entry in sorted(importlib.metadata.entry_points(group=ENTRY_POINT_GROUP), key=rank):
        found.setdefault(entry.name, entry)
    return found


def _url_form(scheme: str, entry: importlib.metadata.EntryPoint) -> str:
    """How a backend's URLs look, for the list of supported ones: its ``url_form`` when its module
    is imported already (kplane's own backends are in this one), else ``scheme://...``. Listing
    imports nothing, so a broken backend cannot change the message."""
    backend: object = sys.modules.get(entry.module)
    for attr in entry.attr.split(".") if entry.attr else ():
        backend = getattr(backend, attr, None)
    return backend.url_form if isinstance(backend, Backend) else f"{scheme}://..."


def _load(entry: importlib.metadata.EntryPoint) -> Backend:
    try:
        backend = entry.load()
    except Exception as err:  # a third party's broken module: named, not a traceback
        raise StorageError(f"storage backend {entry.name!r} ({entry.value}) cannot be loaded: {err!r}") from err
    if not isinstance(backend, Backend):
        raise StorageError(f"storage backend {entry.name!r} ({entry.value}) is not a kplane.storage Backend")
    return backend


async def _open_sqlite(url: str) -> Storage:
    """``sqlite:///abs/path.db`` or ``sqlite://relative/path.db``; ``?shared=true`` when several
    processes open the database at once (as ``kplane serve --workers N`` does)."""
    from kplane.core.storage.sqlite import SQLiteStorage

    parsed = urlparse(url)
    path = (parsed.netloc + parsed.path) if parsed.netloc else parsed.path
    if not path:
        raise StorageURLError(f"storage URL {url!r} names no database file")
    query = parse_qs(parsed.query, keep_blank_values=True)
    shared = query.pop("shared", ["false"])
    if query or len(shared) != 1 or shared[0] not in ("true", "false"):
        raise StorageURLError(f"storage URL {url!r}: the only query parameter is shared=true or shared=false")
    return await SQLiteStorage.open(path, shared=shared[0] == "true")


async def _open_etcd(url: str) -> Storage:
    """``etcd://…`` or ``etcds://…``: endpoints separated by commas (tried in order); the path, if
    any, is the key prefix under which this installation keeps its keys. ``etcds`` speaks TLS,
    optionally with a CA bundle and a client certificate given as query parameters."""
    from kplane.core.storage.etcd import EtcdStorage

    parsed = urlparse(url)
    hosts = [host for host in parsed.netloc.split(",") if host]
    if not hosts:
        raise StorageURLError(f"storage URL {url!r} names no etcd endpoint")
    for host in hosts:
        _check_endpoint(url, host)
    scheme = "https" if parsed.scheme == "etcds" else "http"
    tls = _tls_options(url, parsed)
    try:
        return await EtcdStorage.open(
            [f"{scheme}://{host}" for host in hosts],
            prefix=parsed.path.rstrip("/"),
            ca_file=tls.get("ca"),
            cert_file=tls.get("cert"),
            key_file=tls.get("key"),
        )
    except OSError as err:  # the CA, certificate or key file is unreadable or not PEM
        reason = getattr(err, "reason", None)  # an SSLError's, without OpenSSL's source location
        problem = reason.replace("_", " ").lower() if reason else err.strerror or type(err).__name__
        raise StorageError(f"storage URL {url!r}: unusable TLS files: {problem}") from None


SQLITE = Backend("sqlite:///path/to/state.db", _open_sqlite)
ETCD = Backend("etcd://host:port[,host:port...][/prefix]", _open_etcd)
ETCDS = Backend("etcds://host:port[,...][/prefix][?ca=file&cert=file&key=file]", _open_etcd)


def _check_endpoint(url: str, host: str) -> None:
    """``host:port``: a host name or address, and a port number if one is given."""
    try:
        endpoint = urlsplit(f"//{host}")
        endpoint.port  # noqa: B018  (raises ValueError for a port that is not a number in range)
    except ValueError as err:
        raise StorageURLError(f"storage URL {url!r}: bad etcd endpoint {host!r}: {err}") from None
    if not endpoint.hostname:
        raise StorageURLError(f"storage URL {url!r}: bad etcd endpoint {host!r} (expected host:port)")


def _tls_options(url: str, parsed: ParseResult) -> dict[str, str]:
    """The ``ca``/``cert``/``key`` query parameters (file paths), by name."""
    options: dict[str, str] = {}
    for name, values in parse_qs(parsed.query, keep_blank_values=True).items():
        if name not in _TLS_OPTIONS or len(values) != 1 or not values[0]:
            raise StorageURLError(f"storage URL {url!r}: bad query parameter {name!r}")
        options[name] = values[0]
    if options and parsed.scheme != "etcds":
        raise StorageURLError(f"storage URL {url!r}: TLS options need the etcds:// scheme")
    for name, path in options.items():
        if not os.path.isfile(path):
            raise StorageURLError(f"storage URL {url!r}: the {name} file {path!r} does not exist")
    return options
