"""Reaching a server that runs behind a Service or at a URL, as kube-apiserver's webhook clients
(``k8s.io/apiserver/pkg/util/webhook``) and kube-aggregator do, and why asking it failed, in Go's words.

* A Service reference (namespace, name, port) is looked up as a core/v1 Service in an informer's
  cache and spoken to over https: type ExternalName at ``<externalName>:<port>``, a Service with
  a cluster IP at ``<clusterIP>:<port>`` (the port must be one of the Service's; kplane has no
  service network, so the cluster IP is dialled as the Service's writer set it). The server's
  certificate must be valid for ``<name>.<namespace>.svc``.
* Certificates are checked against a ``caBundle`` (base64 PEM, as the wire carries it; none: the
  system's CAs), unless told to skip it. :class:`TLSContexts` keeps one context per bundle and
  name checked, so a pooled connection verified for one server's name never carries another's
  requests.
* :class:`WebhookClient` posts a review to a webhook (admission's, CRD conversion's) with a
  timeout and a bound on the answer's size.
* :func:`describe_error` words a failed request as Go's net, crypto/tls and net/http errors do,
  for a Status message or a condition; Python's own text never reaches a client.
"""

from __future__ import annotations

import asyncio
import base64
import logging
import os
import socket
import ssl
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import aiohttp

from kplane.core.client.tls import TLSClientConfig

log = logging.getLogger(__name__)


class UnreachableError(Exception):
    """A server cannot be addressed: ``reason`` is a condition's reason (``ServiceNotFound``)."""

    def __init__(self, reason: str, message: str) -> None:
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True, slots=True)
class ServiceTarget:
    """Where a Service's server listens: ``https://host:port`` and the name its certificate must have."""

    base: str
    server_hostname: str


#: What looks a Service up by ``namespace/name``: an informer's indexer ``get``; None when this
#: server serves no Services.
ServiceLookup = Callable[[str], dict[str, Any] | None] | None


def service_target(lookup: ServiceLookup, namespace: str, name: str, port: int) -> ServiceTarget:
    """The address of the Service ``namespace/name`` on ``port``; UnreachableError when it has none."""
    found = lookup(f"{namespace}/{name}") if lookup is not None else None
    if found is None:
        raise UnreachableError("ServiceNotFound", f'service/{name} in "{namespace}" is not present')
    svc = found.get("spec") or {}
    server_hostname = f"{name}.{namespace}.svc"
    if (svc.get("type") or "ClusterIP") == "ExternalName":
        host = svc.get("externalName") or ""
        if not host:
            raise UnreachableError("ServiceAccessError", f'service/{name} in "{namespace}" has no externalName')
        return ServiceTarget(f"https://{host_port(host, port)}", server_hostname)
    cluster_ip = svc.get("clusterIP") or ""
    if not cluster_ip or cluster_ip == "None":
        raise UnreachableError("MissingEndpoints", f'service/{name} in "{namespace}" has no cluster IP to route to')
    if not any(p.get("port") == port for p in svc.get("ports") or []):
        raise UnreachableError("ServicePortError", f'service/{name} in "{namespace}" is not listening on port {port}')
    return ServiceTarget(f"https://{host_port(cluster_ip, port)}", server_hostname)


def host_port(host: str, port: int) -> str:
    """``host:port``, an IPv6 address in brackets."""
    return f"[{host}]:{port}" if ":" in host and not host.startswith("[") else f"{host}:{port}"


class TLSContexts:
    """Client contexts by (caBundle, skip verification, name checked), made once each."""

    def __init__(self, client_cert: tuple[Path, Path] | None = None) -> None:
        self.client_cert = client_cert  # presented to every server (the front proxy's, for backends)
        self._made: dict[tuple[str, bool, str | None], ssl.SSLContext] = {}

    def context(self, ca_bundle: str, server_hostname: str | None, *, insecure: bool = False,
                field: str = "caBundle") -> ssl.SSLContext:
        """The context verifying ``server_hostname`` (None: the URL's host) with ``ca_bundle``
        (base64 PEM; "": the system's CAs); UnreachableError naming ``field`` if it holds no CA."""
        bundle = "" if insecure else ca_bundle
        key = (bundle, insecure, server_hostname)
        if key not in self._made:
            cert, key_file = self.client_cert if self.client_cert is not None else (None, None)
            try:
                tls = TLSClientConfig(ca_data=base64.b64decode(bundle) if bundle else None, cert_data=cert,
                                      key_data=key_file, server_name=server_hostname, insecure=insecure)
                self._made[key] = tls.context()
            except ValueError as err:  # validation checked it is base64, not that it is PEM
                raise UnreachableError("ServiceAccessError", f"{field} holds no usable CA certificate: {err}") from None
        return self._made[key]


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
    """Why a server could not be asked, in plain words fit for a Status message or a condition,
    worded after Go's net, crypto/tls and net/http errors.

    Python's own text (``[SSL: ...] ... (_ssl.c:1000)``, ``Cannot connect to host ... [Errno 111]``,
    an exception's args as a tuple) is never returned: the full detail goes to the log."""
    text = _plain_error(err)
    log.info("request to a webhook or backend failed (%s): %r", text, err)
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
        return "EOF: the server closed the connection without an answer"
    if isinstance(err, aiohttp.ClientPayloadError):
        return "unexpected EOF: the server's answer was cut short"
    if isinstance(err, aiohttp.ClientResponseError):  # aiohttp's HTTP parser refused the answer
        return "net/http: malformed HTTP response"
    if isinstance(err, aiohttp.InvalidURL):
        return "invalid URL"
    if isinstance(err, OSError) and err.errno:  # ClientOSError: a read or write on the connection
        return f"read: {_strerror(err.errno)}"
    return "the request failed"


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


# -- posting a review to a webhook ---------------------------------------------------------------

class CallError(Exception):
    """A webhook that could not be asked or gave no usable answer; ``str()`` is Go's wording
    (``Post "https://...": dial tcp ...: connect: connection refused``)."""


def max_answer(sent: int) -> int:
    """The most bytes read of a webhook's answer to a review of ``sent`` bytes: room for
    objects several times their size, never unbounded."""
    return 4 * sent + (1 << 20)


class WebhookClient:
    """What one server's webhooks (admission's and CRD conversion's) share, as kube's
    ``webhook.ClientManager``: one HTTP session, the TLS contexts, and the Services a
    ``clientConfig.service`` is resolved with."""

    def __init__(self, services: ServiceLookup = None) -> None:
        self.services = services
        self.tls = TLSContexts()
        self._session: aiohttp.ClientSession | None = None

    def session(self) -> aiohttp.ClientSession:
        if self._session is None or self._session.closed:
            self._session = aiohttp.ClientSession(cookie_jar=aiohttp.DummyCookieJar())
        return self._session

    async def close(self) -> None:
        if self._session is not None:
            await self._session.close()

    def target(self, client_config: dict[str, Any]) -> tuple[str, ssl.SSLContext, str | None]:
        """The URL a ``WebhookClientConfig`` names, the TLS context verifying it and the name its
        certificate must have (None: the URL's host). Raises UnreachableError."""
        bundle = client_config.get("caBundle") or ""
        url = client_config.get("url")
        if url:
            return url, self.tls.context(bundle, urlsplit(url).hostname), None
        service = client_config.get("service") or {}
        found = service_target(self.services, service.get("namespace", ""), service.get("name", ""),
                               int(service.get("port") or 443))
        path = service.get("path") or ""
        url = found.base + (path if path.startswith("/") or not path else "/" + path)
        return url, self.tls.context(bundle, found.server_hostname), found.server_hostname

    async def post(self, client_config: dict[str, Any], body: bytes, timeout: float, query: str = "") -> bytes:
        """POST ``body`` (JSON) and return the answer's bytes, read up to :func:`max_answer`;
        a non-2xx answer, a failure to connect, a timeout or an oversized answer is a CallError."""
        try:
            url, context, server_hostname = self.target(client_config)
        except UnreachableError as err:
            raise CallError(err.message) from None
        if query:
            url += ("&" if urlsplit(url).query else "?") + query
        headers = {"Content-Type": "application/json", "Accept": "application/json"}
        limit = max_answer(len(body))
        try:
            async with asyncio.timeout(timeout):
                async with self.session().post(url, data=body, headers=headers, ssl=context, allow_redirects=False,
                                               server_hostname=server_hostname) as reply:
                    chunks, size = [], 0
                    async for chunk in reply.content.iter_chunked(65536):
                        size += len(chunk)
                        if size > limit:
                            raise CallError(f"the webhook's answer is larger than {limit} bytes")
                        chunks.append(chunk)
                    if not 200 <= reply.status < 300:
                        raise CallError(f"the server responded with the status code {reply.status} but did not "
                                        "return more information")
                    return b"".join(chunks)
        except TimeoutError:
            raise CallError(f'Post "{url}": context deadline exceeded') from None
        except (aiohttp.ClientError, OSError) as err:
            raise CallError(f'Post "{url}": {describe_error(err)}') from None
