"""Open a storage backend from the ``--storage`` URL."""

from __future__ import annotations

import os
from urllib.parse import parse_qs, urlparse, urlsplit

from kplane.core.storage.interface import Storage, StorageError

_SUPPORTED = (
    "sqlite:///path/to/state.db, etcd://host:port[,host:port...][/prefix]"
    " or etcds://host:port[,...][/prefix][?ca=file&cert=file&key=file]"
)
_TLS_OPTIONS = ("ca", "cert", "key")


class StorageURLError(ValueError):
    pass


async def open_storage(url: str) -> Storage:
    """``sqlite:///abs/path.db``, ``sqlite://relative/path.db``, ``etcd://…`` or ``etcds://…``.

    An etcd URL lists endpoints separated by commas (tried in order); its path, if any, is the
    key prefix under which this installation keeps its keys. ``etcds`` speaks TLS, optionally
    with a CA bundle and a client certificate given as query parameters.
    """
    try:
        parsed = urlparse(url)
    except ValueError as err:  # e.g. an unclosed "[" of an IPv6 address
        raise StorageURLError(f"malformed storage URL {url!r}: {err}") from None
    if parsed.scheme == "sqlite":
        from kplane.core.storage.sqlite import SQLiteStorage

        path = (parsed.netloc + parsed.path) if parsed.netloc else parsed.path
        if not path:
            raise StorageURLError(f"storage URL {url!r} names no database file")
        return await SQLiteStorage.open(path)
    if parsed.scheme in ("etcd", "etcds"):
        from kplane.core.storage.etcd import EtcdStorage

        hosts = [host for host in parsed.netloc.split(",") if host]
        if not hosts:
            raise StorageURLError(f"storage URL {url!r} names no etcd endpoint")
        for host in hosts:
            _check_endpoint(url, host)
        scheme = "https" if parsed.scheme == "etcds" else "http"
        tls = _tls_options(url, parsed.scheme, parsed.query)
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
    raise StorageURLError(f"unsupported storage URL {url!r} (supported: {_SUPPORTED})")


def _check_endpoint(url: str, host: str) -> None:
    """``host:port``: a host name or address, and a port number if one is given."""
    try:
        endpoint = urlsplit(f"//{host}")
        endpoint.port  # noqa: B018  (raises ValueError for a port that is not a number in range)
    except ValueError as err:
        raise StorageURLError(f"storage URL {url!r}: bad etcd endpoint {host!r}: {err}") from None
    if not endpoint.hostname:
        raise StorageURLError(f"storage URL {url!r}: bad etcd endpoint {host!r} (expected host:port)")


def _tls_options(url: str, scheme: str, query: str) -> dict[str, str]:
    """The ``ca``/``cert``/``key`` query parameters (file paths), by name."""
    options: dict[str, str] = {}
    for name, values in parse_qs(query, keep_blank_values=True).items():
        if name not in _TLS_OPTIONS or len(values) != 1 or not values[0]:
            raise StorageURLError(f"storage URL {url!r}: bad query parameter {name!r}")
        options[name] = values[0]
    if options and scheme != "etcds":
        raise StorageURLError(f"storage URL {url!r}: TLS options need the etcds:// scheme")
    for name, path in options.items():
        if not os.path.isfile(path):
            raise StorageURLError(f"storage URL {url!r}: the {name} file {path!r} does not exist")
    return options
