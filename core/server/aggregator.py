"""API aggregation: the server as kube-aggregator, a front proxy for API servers of other groups.

An ``apiregistration.k8s.io/v1`` APIService named ``<version>.<group>`` says who serves that
group/version. A *Local* one (no ``spec.service``, no ``spec.url``) is this server itself; any
other names a backend, and then

* every request under ``/apis/<group>/<version>`` (resources and the ``APIResourceList``) is
  proxied to it, even when this server also serves that group/version itself: the backend wins;
* discovery (``/apis`` in both forms, ``/apis/<group>``) lists the group/version, ordered by
  ``groupPriorityMinimum`` and ``versionPriority`` as Kubernetes orders it, with the resources
  the backend reports in its own aggregated discovery (kept for :attr:`Settings.discovery_ttl`);
* the OpenAPI v3 index lists ``apis/<group>/<version>`` with the backend's URL for it, and that
  document is proxied (hashes included, so kubectl's cache keeps working);
* :mod:`kplane.core.server.availability` checks the backend and records the ``Available`` condition.

Backends are off unless the server was started with ``--enable-apiservice-backends``.
kplane does not authenticate yet, so anyone who reaches the port could otherwise make the server
send requests to any host it can reach (cloud metadata addresses, services on its loopback) and
relay the answers, or hand a group/version served here (the controllers' Leases) to a server of
their own. Without the flag the ``APIServiceBackends`` admission check (:meth:`Aggregator.admit`)
refuses, with a 422 naming the field and the flag, any create or update that gives an APIService
a backend (``spec.url`` or ``spec.service``, for a new group/version or one served here), and
APIServices stored with one before are not proxied to: they are ``Available=False`` with reason
``BackendsDisabled`` and their requests get a 503. ``spec.service`` is covered too because in
kplane it names an address the user chose: an ExternalName Service any host, and a cluster IP is
whatever address the Service's writer set (there is no service network, so it is dialled as it is).

How a backend is reached. Kubernetes resolves ``spec.service`` through a core/v1 Service and
speaks https to it. kplane's servers speak plain HTTP on loopback and there may be no Services
at all, so:

* ``spec.url`` (a kplane extension, like an admission webhook's ``clientConfig.url``) is the
  backend's base URL: ``http://127.0.0.1:8444`` or an https URL (``caBundle`` and
  ``insecureSkipTLSVerify`` then apply);
* ``spec.service`` is looked up as a core/v1 Service when this server serves Services: type
  ExternalName goes to ``http://<externalName>:<port>``, a Service with a cluster IP to
  ``http://<clusterIP>:<port>`` (the port must be one of the Service's). A missing Service makes
  the APIService unavailable with reason ServiceNotFound.

Requests reach the backend as they came (method, path, query, body and headers streamed both
ways, watches included), less the hop-by-hop headers and every header that claims an identity:
``Authorization``, ``Impersonate-*`` and the front-proxy headers ``X-Remote-*``, whoever set them.

Identity headers. kube-aggregator tells a backend who the user is with ``X-Remote-User``,
``X-Remote-Group``, ``X-Remote-Uid`` and ``X-Remote-Extra-*``, and a backend believes them only
because they come over TLS from a client certificate it trusts for that (``--proxy-client-cert-file``
and the backend's ``--requestheader-client-ca-file``). A header a backend cannot tell from one any
client could send is a credential handed to whoever can make the server connect somewhere. The
rule: identity headers go only over an authenticated channel, https with the proxy's client
certificate. kplane has no such certificate yet, so neither the proxy nor the server's own
requests (the availability probe, discovery and OpenAPI fetches) send any: a backend sees an
anonymous request, as from any client.

Redirects are never followed, as kube-aggregator with ``--aggregator-reject-forwarding-redirect``
(its default): a proxied answer in 3xx with a ``Location`` becomes a 502 "the backend attempted
to redirect this request, which is not permitted", so no client is sent to another host with its
credentials; the probe and the discovery and OpenAPI fetches treat any 3xx as a failure. The one
redirect relayed is an OpenAPI document's to itself at its current hash (a path on this server,
as kube-aggregator answers a stale hash). A backend that cannot be reached, does not answer in
time, or is known to be unavailable gets the client a 503 ``ServiceUnavailable`` Status naming
the APIService, never a hang.

The APIServices are read through an informer on the server's loopback client, like any client
would: a change is effective here once the watch delivered it (milliseconds).
"""

from __future__ import annotations

import asyncio
import base64
import contextlib
import logging
import os
import socket
import ssl
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit

import aiohttp
import orjson
from aiohttp import web
from multidict import CIMultiDict
from yarl import URL

from kplane.core.client.informer import Handlers, Informer, SharedInformerFactory, wait_synced
from kplane.core.meta import errors
from kplane.core.registry.admission import AdmissionChain, AdmissionRequest, Operation
from kplane.core.runtime.gvk import version_priority_key
from kplane.core.runtime.scheme import Scheme

log = logging.getLogger(__name__)

GROUP, VERSION, RESOURCE = "apiregistration.k8s.io", "v1", "apiservices"
AVAILABLE = "Available"
AGGREGATED = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"
BACKENDS_FLAG = "--enable-apiservice-backends"
BACKENDS_DISABLED = "BackendsDisabled"  # the Available condition's reason while the flag is off
REDIRECT_REFUSED = "the backend attempted to redirect this request, which is not permitted"
DEFAULT_GROUP_PRIORITY = 1000  # a group Kubernetes does not list, as its CRDs get
DEFAULT_VERSION_PRIORITY = 15

# Kubernetes' own groups rank as kube-apiserver ranks them (``apiVersionPriorities``).
GROUP_PRIORITIES = {
    "": 18000,
    GROUP: 18000,  # apiregistration.k8s.io
    "apps": 17800,
    "events.k8s.io": 17750,
    "authentication.k8s.io": 17700,
    "authorization.k8s.io": 17600,
    "autoscaling": 17500,
    "batch": 17400,
    "certificates.k8s.io": 17300,
    "networking.k8s.io": 17200,
    "policy": 17100,
    "rbac.authorization.k8s.io": 17000,
    "storage.k8s.io": 16800,
    "admissionregistration.k8s.io": 16700,
    "apiextensions.k8s.io": 16700,
    "scheduling.k8s.io": 16600,
    "coordination.k8s.io": 16500,
    "node.k8s.io": 16300,
    "discovery.k8s.io": 16200,
    "flowcontrol.apiserver.k8s.io": 16100,
}
VERSION_PRIORITIES = {("", "v1"): 1}


def priorities(group: str, versions: list[str]) -> dict[str, tuple[int, int]]:
    """(groupPriorityMinimum, versionPriority) per served version, preferred version first: the
    preferred one gets 15, each later one one less (at least 1)."""
    group_priority = GROUP_PRIORITIES.get(group, DEFAULT_GROUP_PRIORITY)
    return {
        v: (group_priority, VERSION_PRIORITIES.get((group, v), max(1, DEFAULT_VERSION_PRIORITY - i)))
        for i, v in enumerate(versions)
    }

# RFC 9110 §7.6.1, plus what only this hop may decide (length, framing, the expectation).
HOP_BY_HOP = frozenset({
    "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
    "trailers", "transfer-encoding", "upgrade", "host", "content-length", "expect",
})
# Headers that claim an identity: a backend gets none of them (see "Identity headers" above).
NOT_FORWARDED = frozenset({"authorization"})
IDENTITY_PREFIXES = ("x-remote-", "impersonate-")


@dataclass
class Settings:
    backends: bool = False  # proxy to spec.url / spec.service backends at all (--enable-apiservice-backends)
    probe_interval: float = 30.0  # an available backend is checked again this often
    probe_timeout: float = 5.0  # one availability check
    probe_max_backoff: float = 5.0  # an unavailable backend is checked again within this
    discovery_ttl: float = 5.0  # a backend's discovery and OpenAPI index are kept this long
    discovery_timeout: float = 5.0  # one fetch of them
    connect_timeout: float = 5.0  # opening a connection to a backend
    response_timeout: float = 60.0  # a backend's response headers (a watch answers them at once)


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

    def url(self, raw_path: str) -> URL:
        """The backend's URL for a path (and query) exactly as the client encoded it."""
        return URL(self.base + raw_path, encoded=True)


# -- reading APIService objects (wire dicts) -------------------------------------------------------
def group_version(api_service: dict[str, Any]) -> tuple[str, str]:
    spec = api_service.get("spec") or {}
    return spec.get("group") or "", spec.get("version") or ""


def is_local(api_service: dict[str, Any]) -> bool:
    spec = api_service.get("spec") or {}
    return spec.get("service") is None and not spec.get("url")


def condition(api_service: dict[str, Any], type_: str = AVAILABLE) -> dict[str, Any] | None:
    for cond in (api_service.get("status") or {}).get("conditions") or []:
        if cond.get("type") == type_:
            return cond
    return None


def _priorities(api_service: dict[str, Any]) -> tuple[int, int]:
    spec = api_service.get("spec") or {}
    return int(spec.get("groupPriorityMinimum") or 0), int(spec.get("versionPriority") or 0)


def proxy_headers(incoming: Any, peer: str | None = None) -> CIMultiDict[str]:
    """The headers a backend gets: the client's, less hop-by-hop ones and any that claims an
    identity (credentials, impersonation, front-proxy headers), plus ``X-Forwarded-For``."""
    connection_listed = {h.strip().lower() for v in incoming.getall("Connection", []) for h in v.split(",")}
    out: CIMultiDict[str] = CIMultiDict()
    for name, value in incoming.items():
        low = name.lower()
        if low in HOP_BY_HOP or low in NOT_FORWARDED or low in connection_listed or low.startswith(IDENTITY_PREFIXES):
            continue
        if low == "x-forwarded-for":
            continue
        out.add(name, value)
    forwarded = ", ".join(incoming.getall("X-Forwarded-For", []))
    if peer:
        out["X-Forwarded-For"] = f"{forwarded}, {peer}" if forwarded else peer
    elif forwarded:
        out["X-Forwarded-For"] = forwarded
    return out


class Aggregator:
    """The aggregation layer of one server; idle unless the scheme serves APIServices."""

    def __init__(self, scheme: Scheme, settings: Settings | None = None) -> None:
        self.scheme = scheme
        self.settings = settings or Settings()
        self.api_services: Informer | None = None
        self.services: Informer | None = None
        self.on_backend_failure: Callable[[str], None] = lambda name: None  # the availability check's hint
        self.session: aiohttp.ClientSession | None = None
        self._routes: dict[tuple[str, str], dict[str, Any]] | None = None
        self._ssl: dict[str, ssl.SSLContext] = {}  # by caBundle
        self._cache: dict[Any, tuple[float, Any]] = {}  # key -> (fetched at, value or BackendError)
        self._inflight: dict[Any, asyncio.Task[Any]] = {}

    # -- lifecycle -----------------------------------------------------------------------------
    @property
    def serves_api_services(self) -> bool:
        return self.scheme.resource(GROUP, VERSION, RESOURCE) is not None

    def attach(self, informers: SharedInformerFactory, admission: AdmissionChain) -> bool:
        """Ask ``informers`` (the server's loopback ones, not started yet) for what aggregation
        reads and join the admission chain; False when this server has no APIServices, and
        aggregation stays off."""
        if not self.serves_api_services:
            return False
        admission.add_validating("APIServiceBackends", self.admit)
        self.api_services = informers.informer(GROUP, VERSION, RESOURCE)
        self.api_services.add_handlers(Handlers.for_any(self._changed))
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0),  # every proxied watch holds a connection
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=False,  # bodies pass through as the backend encoded them
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=self.settings.connect_timeout),
        )
        if self.scheme.resource("", "v1", "services") is not None:
            self.services = informers.informer("", "v1", "services")
            self.services.add_handlers(Handlers.for_any(self._changed))
        return True

    async def start(self, sync_timeout: float = 10.0) -> None:
        """Wait until the informers listed (call after starting them)."""
        try:
            async with asyncio.timeout(sync_timeout):
                await wait_synced(*(i for i in (self.api_services, self.services) if i is not None))
        except TimeoutError:
            log.warning("aggregator: APIServices not listed within %ss; proxying starts once they are", sync_timeout)

    async def stop(self) -> None:
        for task in self._inflight.values():
            task.cancel()
        if self.session is not None:
            await self.session.close()

    def _changed(self, obj: dict[str, Any]) -> None:
        self._routes = None
        self._cache.clear()  # a backend moved, appeared, or changed availability: ask it afresh

    def admit(self, request: AdmissionRequest) -> None:
        """Refuse, while backends are off, a create or update that gives an APIService a backend
        it did not have (one stored with it before keeps it, unproxied, until changed)."""
        rt = request.resource
        if self.settings.backends or (rt.group, rt.plural) != (GROUP, RESOURCE) or request.subresource \
                or request.operation is Operation.DELETE:
            return
        spec = request.obj.spec
        field = "spec.url" if spec.url else "spec.service" if spec.service is not None else ""
        old = request.old.spec if request.old is not None else None
        if not field or (old is not None and (old.url, old.service) == (spec.url, spec.service)):
            return
        group, version = spec.group or "", spec.version or ""
        served = version in self.scheme.groups().get(group, ())
        why = (f"{'/'.join(filter(None, (group, version)))} is served by this server itself; " if served else "") + \
            (f"APIService backends are off: start the server with {BACKENDS_FLAG} to allow them (it does not "
             "authenticate yet: anyone who reaches it could then point it at any host)")
        raise errors.invalid_object("APIService", GROUP, request.obj.metadata.name or request.name, [errors.forbidden(field, why)])

    # -- who serves what -----------------------------------------------------------------------------
    def all_api_services(self) -> list[dict[str, Any]]:
        return self.api_services.indexer.list() if self.api_services is not None else []

    def routes(self) -> dict[tuple[str, str], dict[str, Any]]:
        """The proxied group/versions: each non-local APIService by (group, version)."""
        if self._routes is None:
            routes = {}
            for api_service in self.all_api_services():
                gv = group_version(api_service)
                if not is_local(api_service) and gv[0] and gv[0] != GROUP:  # never our own group
                    routes[gv] = api_service
            self._routes = routes
        return self._routes

    def route(self, group: str, version: str) -> dict[str, Any] | None:
        if self.api_services is None:
            return None
        return self.routes().get((group, version))

    def backend(self, api_service: dict[str, Any]) -> Backend:
        """Where the APIService's backend listens; BackendError when that cannot be told, or
        when backends are off."""
        if not self.settings.backends:
            raise BackendError(BACKENDS_DISABLED, f"APIService backends are off: the server was started without {BACKENDS_FLAG}")
        spec = api_service.get("spec") or {}
        url = spec.get("url")
        if url:
            parts = urlsplit(url)
            return Backend(url.rstrip("/"), self._ssl_for(spec) if parts.scheme == "https" else False)
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
            return Backend(f"http://{_host(host)}:{port}", False)
        cluster_ip = svc.get("clusterIP") or ""
        if not cluster_ip or cluster_ip == "None":
            raise BackendError("MissingEndpoints", f'service/{name} in "{namespace}" has no cluster IP to route to')
        if not any(p.get("port") == port for p in svc.get("ports") or []):
            raise BackendError("ServicePortError", f'service/{name} in "{namespace}" is not listening on port {port}')
        return Backend(f"http://{_host(cluster_ip)}:{port}", False)

    def _ssl_for(self, spec: dict[str, Any]) -> ssl.SSLContext | bool:
        if spec.get("insecureSkipTLSVerify"):
            return False
        bundle = spec.get("caBundle") or ""
        if not bundle:
            return True
        if bundle not in self._ssl:
            self._ssl[bundle] = ssl.create_default_context(cadata=base64.b64decode(bundle).decode())
        return self._ssl[bundle]

    # -- the proxy -------------------------------------------------------------------------------
    @web.middleware
    async def middleware(self, request: web.Request, handler: Callable[[web.Request], Awaitable[web.StreamResponse]]) -> web.StreamResponse:
        if self.api_services is not None:
            gv = _proxied_path(request.path)
            if gv is not None:
                api_service = self.route(*gv)
                if api_service is not None:
                    return await self.proxy(request, api_service)
        return await handler(request)

    async def proxy(self, request: web.Request, api_service: dict[str, Any]) -> web.StreamResponse:
        name = api_service["metadata"]["name"]
        available = condition(api_service)
        if available is not None and available.get("status") == "False":
            why = f"{available.get('reason', '')}: {available.get('message', '')}".strip(": ")
            raise errors.unavailable(f'the APIService "{name}" is not available: {why}')
        try:
            backend = self.backend(api_service)
        except BackendError as err:
            self.on_backend_failure(name)
            raise errors.unavailable(f'the APIService "{name}" has no backend to send the request to: {err.message}') from None
        assert self.session is not None
        target = backend.url(request.raw_path)
        peer = request.remote
        headers = proxy_headers(request.headers, peer)
        if request.content_length is not None:
            headers["Content-Length"] = str(request.content_length)
        body = request.content.iter_chunked(65536) if request.body_exists else None
        skip = [h for h in ("Accept", "Accept-Encoding", "User-Agent", "Content-Type") if h not in request.headers]
        try:
            async with asyncio.timeout(self.settings.response_timeout):
                upstream = await self.session.request(request.method, target, headers=headers, data=body,
                                                      allow_redirects=False, ssl=backend.ssl, skip_auto_headers=skip)
        except Exception as err:
            if not isinstance(err, (aiohttp.ClientError, OSError)):  # TimeoutError is an OSError
                raise
            self.on_backend_failure(name)
            if isinstance(err, TimeoutError) and not isinstance(err, aiohttp.ClientError):  # not a connect timeout
                raise errors.unavailable(f'the backend of the APIService "{name}" at {backend.base} did not answer '
                                         f"within {self.settings.response_timeout:g}s") from None
            raise errors.unavailable(f'the backend of the APIService "{name}" at {backend.base} cannot be reached: '
                                     f"{describe_error(err)}") from None
        try:
            location = upstream.headers.get("Location")
            if 300 <= upstream.status < 400 and location and not _to_itself(request.path, location):
                return web.Response(status=502, text=REDIRECT_REFUSED)
            return await self._relay(request, upstream)
        finally:
            upstream.close()

    async def _relay(self, request: web.Request, upstream: aiohttp.ClientResponse) -> web.StreamResponse:
        """Copy the backend's response to the client as it arrives; a client that goes away
        closes the backend's connection (a proxied watch ends at both ends)."""
        response = web.StreamResponse(status=upstream.status, reason=upstream.reason)
        connection_listed = {h.strip().lower() for v in upstream.headers.getall("Connection", []) for h in v.split(",")}
        for key, value in upstream.headers.items():
            low = key.lower()
            if low not in HOP_BY_HOP and low not in connection_listed:
                response.headers.add(key, value)
        bodyless = request.method == "HEAD" or upstream.status in (204, 304) or 100 <= upstream.status < 200
        if bodyless:
            if upstream.content_length is not None:
                response.headers["Content-Length"] = str(upstream.content_length)
            await response.prepare(request)
            await response.write_eof()
            return response
        if upstream.content_length is not None and "chunked" not in upstream.headers.get("Transfer-Encoding", "").lower():
            response.content_length = upstream.content_length
        else:
            response.enable_chunked_encoding()
        await response.prepare(request)
        watching = asyncio.create_task(_close_when_gone(request, upstream))
        try:
            async for chunk in upstream.content.iter_any():
                await response.write(chunk)
        except (aiohttp.ClientError, asyncio.TimeoutError):
            if response.content_length is not None or request.transport is None:
                _abort(request)  # a body cut short must not look complete
                return response
        except ConnectionResetError:
            return response  # the client went away
        finally:
            watching.cancel()
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response

    # -- asking a backend about itself ----------------------------------------------------------------
    async def fetch(self, api_service: dict[str, Any], path: str, accept: str,
                    timeout: float | None = None) -> tuple[int, str, Any]:
        """GET ``path`` from the backend, anonymously and not following redirects: (status,
        content type, parsed JSON body); within ``timeout`` (default: the discovery timeout)."""
        backend = self.backend(api_service)
        assert self.session is not None
        headers = {"Accept": accept}
        async with asyncio.timeout(self.settings.discovery_timeout if timeout is None else timeout):
            async with self.session.get(backend.url(path), headers=headers, ssl=backend.ssl, allow_redirects=False) as reply:
                raw = await reply.read()
                try:
                    parsed = orjson.loads(raw) if raw else None
                except orjson.JSONDecodeError:
                    parsed = None
                return reply.status, reply.headers.get("Content-Type", ""), parsed

    async def _cached(self, key: Any, fetch: Callable[[], Awaitable[Any]]) -> Any:
        """``fetch()``'s value (or BackendError), kept for the discovery TTL; concurrent askers
        share one fetch."""
        hit = self._cache.get(key)
        if hit is not None and time.monotonic() - hit[0] < self.settings.discovery_ttl:
            return hit[1]
        task = self._inflight.get(key)
        if task is None:
            async def run() -> Any:
                try:
                    value = await fetch()
                except BackendError as err:
                    value = err
                except Exception as err:  # whatever a backend answers, discovery must go on
                    value = BackendError("FailedDiscoveryCheck", describe_error(err))
                self._cache[key] = (time.monotonic(), value)
                return value

            task = self._inflight[key] = asyncio.create_task(run())
            task.add_done_callback(lambda _: self._inflight.pop(key, None))
        return await asyncio.shield(task)

    async def version_discovery(self, api_service: dict[str, Any]) -> dict[str, Any]:
        """The aggregated-discovery entry (``APIVersionDiscovery``) of a proxied group/version, from
        the backend's aggregated ``/apis`` (or its legacy ``APIResourceList``); ``Stale`` with no
        resources when the backend cannot tell."""
        group, version = group_version(api_service)
        available = condition(api_service)
        if available is not None and available.get("status") == "False":
            return {"version": version, "freshness": "Stale", "resources": []}
        try:
            base = self.backend(api_service).base
        except BackendError:
            return {"version": version, "freshness": "Stale", "resources": []}

        async def aggregated() -> Any:
            status, content_type, body = await self.fetch(api_service, "/apis", AGGREGATED)
            if status == 200 and "as=APIGroupDiscoveryList" in content_type and isinstance(body, dict):
                return body
            return None

        listing = await self._cached(("apis", base), aggregated)
        if isinstance(listing, dict):
            for item in listing.get("items") or []:
                if (item.get("metadata") or {}).get("name") == group:
                    for entry in item.get("versions") or []:
                        if entry.get("version") == version:
                            return {**entry, "freshness": entry.get("freshness") or "Current"}
            return {"version": version, "freshness": "Stale", "resources": []}

        async def legacy() -> Any:
            status, _, body = await self.fetch(api_service, f"/apis/{group}/{version}", "application/json")
            if status != 200 or not isinstance(body, dict):
                raise BackendError("FailedDiscoveryCheck", f"bad status from the backend: {status}")
            return body

        resource_list = await self._cached(("legacy", base, group, version), legacy)
        if not isinstance(resource_list, dict):
            return {"version": version, "freshness": "Stale", "resources": []}
        return {"version": version, "freshness": "Current", "resources": _from_legacy(group, version, resource_list)}

    async def openapi_entry(self, api_service: dict[str, Any]) -> dict[str, Any] | None:
        """The backend's ``/openapi/v3`` index entry for the APIService's group/version."""
        group, version = group_version(api_service)
        try:
            base = self.backend(api_service).base
        except BackendError:
            return None

        async def index() -> Any:
            status, _, body = await self.fetch(api_service, "/openapi/v3", "application/json")
            if status != 200 or not isinstance(body, dict):
                raise BackendError("FailedDiscoveryCheck", f"bad status from the backend: {status}")
            return body

        found = await self._cached(("openapi", base), index)
        if not isinstance(found, dict):
            return None
        entry = (found.get("paths") or {}).get(f"apis/{group}/{version}")
        return entry if isinstance(entry, dict) else None

    # -- discovery order --------------------------------------------------------------------------
    def ordered(self, served: dict[str, list[str]]) -> list[tuple[str, list[tuple[str, dict[str, Any] | None]]]]:
        """Every group and version to list, in Kubernetes' discovery order, each version with its
        proxying APIService (None: served here). ``served``: this server's own groups.

        As kube-aggregator: apiregistration.k8s.io first, then groups by their highest
        ``groupPriorityMinimum`` (ties by APIService name), versions by ``versionPriority``
        (ties GA > beta > alpha). A group/version served here without an APIService yet ranks
        as its Local APIService will (``priorities``).
        """
        routes = self.routes() if self.api_services is not None else {}
        entries: dict[tuple[str, str], tuple[int, int, str, dict[str, Any] | None]] = {}
        for api_service in self.all_api_services():
            gv = group_version(api_service)
            if gv in routes:
                entries[gv] = (*_priorities(api_service), api_service["metadata"]["name"], api_service)
            elif gv[1] in served.get(gv[0], ()):  # a Local one of a group/version still served here
                entries[gv] = (*_priorities(api_service), api_service["metadata"]["name"], None)
        for group, versions in served.items():  # ranked as their Local APIServices will be
            for version, (group_priority, version_priority) in priorities(group, list(versions)).items():
                entries.setdefault((group, version), (group_priority, version_priority, f"{version}.{group}", None))
        ranked = sorted(entries.items(), key=lambda kv: (kv[0][0] != GROUP, -kv[1][0], kv[1][2]))
        groups: dict[str, list[tuple[tuple[str, str], tuple[int, int, str, dict[str, Any] | None]]]] = {}
        for gv, entry in ranked:
            groups.setdefault(gv[0], []).append((gv, entry))
        result = []
        for group, members in groups.items():
            members.sort(key=lambda m: (-m[1][1], version_priority_key(m[0][1])))
            result.append((group, [(gv[1], entry[3]) for gv, entry in members]))
        return result


def _proxied_path(path: str) -> tuple[str, str] | None:
    """(group, version) of ``/apis/<group>/<version>[/...]`` and of its OpenAPI document
    ``/openapi/v3/apis/<group>/<version>``; None for anything else."""
    if path.startswith("/apis/"):
        parts = path.split("/", 4)
    elif path.startswith("/openapi/v3/apis/"):
        parts = path[len("/openapi/v3"):].split("/", 4)
        if len(parts) > 4:
            return None
    else:
        return None
    if len(parts) < 4 or not parts[2] or not parts[3]:
        return None
    return parts[2], parts[3]


def _from_legacy(group: str, version: str, resource_list: dict[str, Any]) -> list[dict[str, Any]]:
    """Aggregated-discovery resources from a legacy ``APIResourceList``
    (``endpoints.ConvertGroupVersionIntoToDiscovery``)."""
    resources: dict[str, dict[str, Any]] = {}
    for entry in resource_list.get("resources") or []:
        name = entry.get("name", "")
        kind = {"group": entry.get("group", group), "version": entry.get("version", version), "kind": entry.get("kind", "")}
        if "/" in name:
            parent, sub = name.split("/", 1)
            resources.setdefault(parent, {"resource": parent, "verbs": []}).setdefault("subresources", []).append(
                {"subresource": sub, "responseKind": kind, "verbs": entry.get("verbs") or []})
            continue
        found = resources.setdefault(name, {"resource": name})
        found.update({
            "responseKind": kind,
            "scope": "Namespaced" if entry.get("namespaced") else "Cluster",
            "singularResource": entry.get("singularName") or "",
            "verbs": entry.get("verbs") or [],
        })
        for key in ("shortNames", "categories"):
            if entry.get(key):
                found[key] = entry[key]
    return list(resources.values())


def _to_itself(path: str, location: str) -> bool:
    """An OpenAPI document's redirect to the same document (its current hash) on this server."""
    target = urlsplit(location)
    return path.startswith("/openapi/v3/") and not target.scheme and not target.netloc and target.path == path


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


async def _close_when_gone(request: web.Request, upstream: aiohttp.ClientResponse, every: float = 0.25) -> None:
    """aiohttp does not cancel a handler whose client disconnects; watch for it, and close the
    backend's connection then, which ends the relay loop."""
    while True:
        await asyncio.sleep(every)
        transport = request.transport
        if transport is None or transport.is_closing():
            upstream.close()
            return


def _abort(request: web.Request) -> None:
    transport = request.transport
    if transport is not None:
        transport.abort()

