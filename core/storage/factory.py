"""Open a storage backend from the ``--storage`` URL."""

from __future__ import annotations

from urllib.parse import parse_qs, urlparse

from core.storage.interface import Storage

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
    parsed = urlparse(url)
    if parsed.scheme == "sqlite":
        from core.storage.sqlite import SQLiteStorage

        path = (parsed.netloc + parsed.path) if parsed.netloc else parsed.path
        if not path:
            raise StorageURLError(f"storage URL {url!r} names no database file")
        return await SQLiteStorage.open(path)
    if parsed.scheme in ("etcd", "etcds"):
        from core.storage.etcd import EtcdStorage

        hosts = [host for host in parsed.netloc.split(",") if host]
        if not hosts:
            raise StorageURLError(f"storage URL {url!r} names no etcd endpoint")
        scheme = "https" if parsed.scheme == "etcds" else "http"
        tls = _tls_options(url, parsed.scheme, parsed.query)
        return await EtcdStorage.open(
            [f"{scheme}://{host}" for host in hosts],
            prefix=parsed.path.rstrip("/"),
            ca_file=tls.get("ca"),
            cert_file=tls.get("cert"),
            key_file=tls.get("key"),
        )
    raise StorageURLError(f"unsupported storage URL {url!r} (supported: {_SUPPORTED})")


def _tls_options(url: str, scheme: str, query: str) -> dict[str, str]:
    """The ``ca``/``cert``/``key`` query parameters (file paths), by name."""
    options: dict[str, str] = {}
    for name, values in parse_qs(query, keep_blank_values=True).items():
        if name not in _TLS_OPTIONS or len(values) != 1 or not values[0]:
            raise StorageURLError(f"storage URL {url!r}: bad query parameter {name!r}")
        options[name] = values[0]
    if options and scheme != "etcds":
        raise StorageURLError(f"storage URL {url!r}: TLS options need the etcds:// scheme")
    return options
