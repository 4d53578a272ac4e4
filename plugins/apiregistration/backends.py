"""Where an APIService's backend listens, how it is spoken to, and why asking it failed, in Go's words.

* ``spec.service`` is looked up as a core/v1 Service when this server serves Services, and
  spoken to over https as kube-aggregator does: type ExternalName at ``<externalName>:<port>``,
  a Service with a cluster IP at ``<clusterIP>:<port>`` (the port must be one of the Service's;
  kplane has no service network, so the cluster IP is dialled as the Service's writer set it).
  The backend's certificate must be valid for ``<name>.<namespace>.svc`` and signed by a CA in
  ``caBundle`` (the system's CAs without one), unless ``insecureSkipTLSVerify``. A missing
  Service makes the APIService unavailable with reason ServiceNotFound.
* ``spec.url`` (a kplane extension, like an admission webhook's ``clientConfig.url``) is the
  backend's base URL: https as above (verified for the URL's host), or plain ``http://`` for a
  backend on a trusted path (the tests' in-process servers), which gets no identity.

Over https the aggregator presents its front-proxy client certificate
(``--proxy-client-cert-file``), and only then tells the backend who the user is (see "Identity
headers" in :mod:`kplane.plugins.apiregistration.aggregator`).
"""

from __future__ import annotations

import base64
import logging
import os
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp
from yarl import URL

from kplane.api import Informer, TLSClientConfig
from kplane.plugins.apiregistration.settings import NO_BACKENDS_FLAG

log = logging.getLogger(__name__)

BACKENDS_DISABLED = "BackendsDisabled"  # the Available condition's reason while backends are off


class BackendError(Exception):
    """A backend cannot be addressed: ``reason`` is the APIService condition's reason."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True, slots=True)
class Backend:
    base: str  # scheme://host:port[/prefix], no trailing slash
    ssl: ssl.SSLContext | bool
    server_hostname: str | None = None  # the name the certificate must be valid for (a Service's)
    identity: bool = False  # https with the front proxy's certificate: the user's identity may be sent

    def url(self, raw_path: str) -> URL:
        """The backend's URL for a path (and query) exactly as the client encoded it."""
        return URL(self.base + raw_path, encoded=True)


class Backends:
    """Resolves APIServices to their backends (one TLS context per ``caBundle`` and name checked)."""

    def __init__(self, enabled: bool, services: Informer | None, client_cert: tuple[Path, Path] | None = None) -> None:
        self.enabled = enabled
        self.services = services  # core/v1 Services, when this server serves them
        self.client_cert = client_cert  # the front proxy's certificate and key
        self._ssl: dict[tuple[str, bool, str | None], ssl.SSLContext] = {}

    def backend(self, api_service: dict[str, Any]) -> Backend:
        """Where the APIService's backend listens; BackendError when that cannot be told, or
        when backends are off."""
        if not self.enabled:
            raise BackendError(BACKENDS_DISABLED, f"APIService backends are off: the server was started with {NO_BACKENDS_FLAG}")
        spec = api_service.get("spec") or {}
        url = spec.get("url")
        if url:
            if urlsplit(url).scheme != "https":
                return Backend(url.rstrip("/"), False)
            return self._https(url.rstrip("/"), spec, None)
        service = spec.get("service") or {}
        namespace, name, port = service.get("namespace", ""), service.get("name", ""), int(service.get("port") or 443)
        found = None
        if self.services is not None:
            found = self.services.indexer.get(f"{namespace}/{name}")
        if found is None:
            raise BackendError("ServiceNotFound", f'service/{name} in "{namespace}" is not present')
        svc = found.get("spec") or {}
        kind = svc.get("type") or "ClusterIP"
        if kind == "ExternalName":
            host = svc.get("externalName") or ""
            if not host:
                raise BackendError("ServiceAccessError", f'service/{name} in "{namespace}" has no externalName')
            return self._https(f"https://{_host(host)}:{port}", spec, f"{name}.{namespace}.svc")
        cluster_ip = svc.get("clusterIP") or ""
        if not cluster_ip or cluster_ip == "None":
            raise BackendError("MissingEndpoints", f'service/{name} in "{namespace}" has no cluster IP to route to')
        if not any(p.get("port") == port for p in svc.get("ports") or []):
            raise BackendError("ServicePortError", f'service/{name} in "{namespace}" is not listening on port {port}')
        return self._https(f"https://{_host(cluster_ip)}:{port}", spec, f"{name}.{namespace}.svc")

    def _https(self, base: str, spec: dict[str, Any], server_hostname: str | None) -> Backend:
        return Backend(base, self._ssl_for(spec, server_hostname), server_hostname, self.client_cert is not None)

    def _ssl_for(self, spec: dict[str, Any], server_hostname: str | None) -> ssl.SSLContext:
        """The context for ``caBundle`` (none: the system's CAs) or ``insecureSkipTLSVerify``,
        presenting the front proxy's certificate and verifying ``server_hostname``; one per name
        checked, so that a pooled connection verified for one backend's name never carries
        another's requests (kube-aggregator keeps a transport per APIService)."""
        insecure = bool(spec.get("insecureSkipTLSVerify"))
        bundle = "" if insecure else spec.get("caBundle") or ""
        key = (bundle, insecure, server_hostname)
        if key not in self._ssl:
            cert, key_file = self.client_cert if self.client_cert is not None else (None, None)
            try:
                tls = TLSClientConfig(ca_data=base64.b64decode(bundle) if bundle else None, cert_data=cert,
                                      key_data=key_file, server_name=server_hostname, insecure=insecure)
                self._ssl[key] = tls.context()
            except ValueError as err:  # validation checked it is base64, not that it is PEM
                raise BackendError("ServiceAccessError", f"spec.caBundle holds no usable CA certificate: {err}") from None
        return self._ssl[key]


def _host(host: str) -> str:
    return f"[{host}]" if ":" in host and not host.startswith("[") else host


# OpenSSL's verification results, as Go's crypto/x509 words them.
_X509_UNKNOWN_AUTHORITY = "x509: certificate signed by unknown authority"
_X509_TEXT = {
    9: "x509: certificate has expired or is not yet valid",
    10: "x509: certificate has expired or is not yet valid",
    18: _X509_UNKNOWN_AUTHORITY,
    19: _X509_UNKNOWN_AUTHORITY,
    20: _X509_UNKNOWN_AUTHORITY,
    21: _X509_UNKNOWN_AUTHORITY,
}
_X509_HOSTNAME_MISMATCH = 62


def describe_error(err: BaseException) -> str:
    """Why a backend could not be asked, in plain words fit for a Status message or a condition,
    worded after Go's net, crypto/tls and net/http errors.

    Python's own text (``[SSL: ...] ... (_ssl.c:1000)``, ``Cannot connect to host ... [Errno 111]``,
    an exception's args as a tuple) is never returned: the full detail goes to the log."""
    text = _plain_error(err)
    log.info("aggregator: backend request failed (%s): %r", text, err)
    return text


def _plain_error(err: BaseException) -> str:
    tls = _tls_error(err)
    if tls is not None:
        return _describe_tls(tls, err)
    if isinstance(err, TimeoutError):
        return "i/o timeout"
    if isinstance(err, aiohttp.ClientConnectorError):
        where = f"{err.host}:{err.port}"
        if isinstance(err.os_error, socket.gaierror):
            return f"dial tcp: lookup {err.host}: no such host"
        code = err.os_error.errno
        return f"dial tcp {where}: connect: {_strerror(code)}" if code else f"dial tcp {where}: connect failed"
    if isinstance(err, aiohttp.ServerDisconnectedError):
        return "EOF: the backend closed the connection without an answer"
    if isinstance(err, aiohttp.ClientPayloadError):
        return "unexpected EOF: the backend's answer was cut short"
    if isinstance(err, aiohttp.ClientResponseError):  # aiohttp's HTTP parser refused the answer
        return "net/http: malformed HTTP response from the backend"
    if isinstance(err, aiohttp.InvalidURL):
        return "invalid backend URL"
    if isinstance(err, OSError) and err.errno:  # ClientOSError: a read or write on the connection
        return f"read: {_strerror(err.errno)}"
    return "the request to the backend failed"


def _tls_error(err: BaseException) -> ssl.SSLError | None:
    """The TLS failure behind ``err``, if that is what it is (aiohttp wraps it)."""
    # the innermost first: aiohttp's wrappers are SSLErrors themselves, without OpenSSL's details
    for candidate in (getattr(err, "certificate_error", None), getattr(err, "os_error", None), err.__cause__, err):
        if isinstance(candidate, ssl.SSLError):
            return candidate
    return None


def _describe_tls(tls: ssl.SSLError, err: BaseException) -> str:
    if isinstance(tls, ssl.SSLCertVerificationError):
        if tls.verify_code == _X509_HOSTNAME_MISMATCH:
            host = getattr(err, "host", "")
            why = f"x509: certificate is not valid for {host}" if host else "x509: certificate is not valid for this host"
        else:
            why = _X509_TEXT.get(tls.verify_code, "x509: certificate verification failed")
        return f"tls: failed to verify certificate: {why}"
    reason = tls.reason if isinstance(tls.reason, str) else ""
    if reason == "WRONG_VERSION_NUMBER":  # a plain-HTTP server on an https URL
        return "tls: first record does not look like a TLS handshake"
    if reason and reason.replace("_", "").isalnum():  # OpenSSL's reason codes: SSLV3_ALERT_HANDSHAKE_FAILURE
        return f"tls: handshake failed: {reason.lower().replace('_', ' ')}"
    return "tls: handshake failed"


def _strerror(code: int) -> str:
    """``connection refused``: the C library's text, lowercased as Go's syscall errors are."""
    return os.strerror(code).lower()
