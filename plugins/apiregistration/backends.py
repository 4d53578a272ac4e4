"""Where an APIService's backend listens and how it is spoken to.

* ``spec.service`` is looked up as a core/v1 Service when this server serves Services, and
  spoken to over https as kube-aggregator does (:func:`kplane.api.service_target`: ExternalName,
  or the cluster IP dialled as the Service's writer set it, the port one of the Service's). The
  backend's certificate must be valid for ``<name>.<namespace>.svc`` and signed by a CA in
  ``caBundle`` (the system's CAs without one), unless ``insecureSkipTLSVerify``. A missing
  Service makes the APIService unavailable with reason ServiceNotFound.
* ``spec.url`` (a kplane extension, like an admission webhook's ``clientConfig.url``) is the
  backend's base URL: https as above (verified for the URL's host), or plain ``http://`` for a
  backend on a trusted path (the tests' in-process servers), which gets no identity.

Over https the aggregator presents its front-proxy client certificate
(``--proxy-client-cert-file``), and only then tells the backend who the user is (see "Identity
headers" in :mod:`kplane.plugins.apiregistration.aggregator`). Why asking a backend failed is
worded by :func:`kplane.api.describe_error`.
"""

from __future__ import annotations

import ssl
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from yarl import URL

from kplane.api import Informer, TLSContexts, UnreachableError, service_target
from kplane.plugins.apiregistration.settings import NO_BACKENDS_FLAG

BACKENDS_DISABLED = "BackendsDisabled"  # the Available condition's reason while backends are off



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
        self._tls = TLSContexts(client_cert)

    def backend(self, api_service: dict[str, Any]) -> Backend:
        """Where the APIService's backend listens; UnreachableError (its ``reason`` the
        Available condition's) when that cannot be told, or
        when backends are off."""
        if not self.enabled:
            raise UnreachableError(BACKENDS_DISABLED, f"APIService backends are off: the server was started with {NO_BACKENDS_FLAG}")
        spec = api_service.get("spec") or {}
        url = spec.get("url")
        if url:
            if urlsplit(url).scheme != "https":
                return Backend(url.rstrip("/"), False)
            return self._https(url.rstrip("/"), spec, None)
        service = spec.get("service") or {}
        lookup = self.services.indexer.get if self.services is not None else None
        target = service_target(lookup, service.get("namespace", ""), service.get("name", ""), int(service.get("port") or 443))
        return self._https(target.base, spec, target.server_hostname)

    def _https(self, base: str, spec: dict[str, Any], server_hostname: str | None) -> Backend:
        context = self._tls.context(spec.get("caBundle") or "", server_hostname, insecure=bool(spec.get("insecureSkipTLSVerify")),
                                    field="spec.caBundle")
        return Backend(base, context, server_hostname, self.client_cert is not None)
