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
* :mod:`~kplane.plugins.apiregistration.availability` checks the backend and records the
  ``Available`` condition.

Who may point the server at a backend: whoever may create or update APIServices, which RBAC
grants only to cluster admins by default (as in Kubernetes, where that is as good as being the
cluster: the backend sees every request of its group/version and may take over a group served
here). Backends can be turned off altogether with ``--no-enable-apiservice-backends``, for a
server that must never make requests to other hosts: then the ``APIServiceBackends`` admission
check (:mod:`~kplane.plugins.apiregistration.admission`) refuses, with a 422 naming the field
and the flag, any create or update that gives an APIService a backend (``spec.url`` or
``spec.service``), and APIServices stored with one before are not proxied to: they are
``Available=False`` with reason ``BackendsDisabled`` and their requests get a 503.

The parts, each a module of this package: :mod:`~kplane.plugins.apiregistration.backends` (where
a backend listens), :mod:`~kplane.plugins.apiregistration.proxy` (the ``PROXY`` request filter),
:mod:`~kplane.plugins.apiregistration.discovery` (the discovery and OpenAPI source),
:mod:`~kplane.plugins.apiregistration.availability` (the ``Available`` condition), wired into a
server by :mod:`~kplane.plugins.apiregistration.aggregation`; this module holds what they share.

Identity headers. kube-aggregator tells a backend who the user is with ``X-Remote-User``,
``X-Remote-Group`` (one per group), ``X-Remote-Uid`` and ``X-Remote-Extra-<key>`` (the key
%-escaped), and a backend believes them only because they come over TLS from a client
certificate it trusts for that (``--proxy-client-cert-file``, made by default: see
:mod:`kplane.core.serving.frontproxy`; and the backend's ``--requestheader-client-ca-file``, which
the host publishes in ``kube-system/extension-apiserver-authentication``). A header a backend
cannot tell from one any client could send is a credential handed to whoever can make the server
connect somewhere. The rule: identity headers go only over https with the proxy's client
certificate (:attr:`Backend.identity`); a plain-http backend sees anonymous requests. The user
sent is the one the request acts as (after impersonation); the server's own requests (the
availability probe, discovery and OpenAPI fetches) are ``system:kube-aggregator`` in
``system:masters``, as kube-aggregator's. The client's own ``Authorization``, ``Impersonate-*``
and ``X-Remote-*`` headers never reach a backend, and redirects are not followed (see
:mod:`~kplane.plugins.apiregistration.proxy`).

The APIServices are read through informers of the aggregator's own on the server's loopback
client, like any client would: a change is effective here once the watch delivered it
(milliseconds). They start once the server listens and are listed before it reports ready.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from typing import Any

import aiohttp
import orjson

from kplane.api import Handlers, RESTClient, Scheme, SharedInformerFactory, UserInfo, user, wait_synced
from kplane.plugins.apiregistration.apiservices import GROUP, RESOURCE, VERSION, group_version, is_local
from kplane.plugins.apiregistration.backends import Backend, Backends
from kplane.plugins.apiregistration.settings import Settings

log = logging.getLogger(__name__)

# Whom the server's own requests to a backend come from (kube-aggregator's name for itself).
AGGREGATOR_USER = UserInfo("system:kube-aggregator", groups=(user.SYSTEM_MASTERS,))


def identity_headers(backend: Backend, who: UserInfo) -> list[tuple[str, str]]:
    """The front proxy's headers naming ``who``, as client-go's ``SetAuthProxyHeaders`` sets
    them; none unless the channel to ``backend`` proves they are the proxy's."""
    if not backend.identity:
        return []
    headers = [("X-Remote-User", who.name), *(("X-Remote-Group", group) for group in who.groups)]
    if who.uid:
        headers.append(("X-Remote-Uid", who.uid))
    headers += [(f"X-Remote-Extra-{user.escape_extra_key(key)}", value)
                for key, values in who.extra.items() for value in values]
    return headers


class Aggregator:
    """What the parts share on one server: the APIService and Service informers, the HTTP
    session to the backends, and who serves which group/version."""

    def __init__(self, scheme: Scheme, settings: Settings, client: RESTClient) -> None:
        self.settings = settings
        self.informers = SharedInformerFactory(client)
        self.api_services = self.informers.informer(GROUP, VERSION, RESOURCE)
        self.api_services.add_handlers(Handlers.for_any(self._changed))
        self.services = self.informers.informer("", "v1", "services") if scheme.resource("", "v1", "services") else None
        if self.services is not None:
            self.services.add_handlers(Handlers.for_any(self._changed))
        self.backends = Backends(settings.backends, self.services, settings.client_cert)
        self.on_backend_failure: Callable[[str], None] = lambda name: None  # the availability check's hint
        self.session = aiohttp.ClientSession(
            connector=aiohttp.TCPConnector(limit=0),  # every proxied watch holds a connection
            cookie_jar=aiohttp.DummyCookieJar(),
            auto_decompress=False,  # bodies pass through as the backend encoded them
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=settings.connect_timeout),
        )
        self._routes: dict[tuple[str, str], dict[str, Any]] | None = None

    @staticmethod
    def serves_api_services(scheme: Scheme) -> bool:
        return scheme.resource(GROUP, VERSION, RESOURCE) is not None

    # -- lifecycle -----------------------------------------------------------------------------
    async def start(self, sync_timeout: float = 10.0) -> None:
        """Start the informers and wait until they listed (the server listens by now)."""
        self.informers.start()
        try:
            async with asyncio.timeout(sync_timeout):
                await wait_synced(*(i for i in (self.api_services, self.services) if i is not None))
        except TimeoutError:
            log.warning("aggregator: APIServices not listed within %ss; proxying starts once they are", sync_timeout)

    async def stop(self) -> None:
        await self.informers.stop()
        await self.session.close()

    def _changed(self, obj: dict[str, Any]) -> None:
        self._routes = None

    # -- who serves what -----------------------------------------------------------------------------
    def all_api_services(self) -> list[dict[str, Any]]:
        return self.api_services.indexer.list()

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
        return self.routes().get((group, version))

    # -- asking a backend about itself ----------------------------------------------------------------
    async def fetch(self, api_service: dict[str, Any], path: str, accept: str,
                    timeout: float | None = None) -> tuple[int, str, Any]:
        """GET ``path`` from the backend as :data:`AGGREGATOR_USER`, not following redirects:
        (status, content type, parsed JSON body); within ``timeout`` (default: the discovery timeout)."""
        backend = self.backends.backend(api_service)
        headers = [("Accept", accept), *identity_headers(backend, AGGREGATOR_USER)]
        async with asyncio.timeout(self.settings.discovery_timeout if timeout is None else timeout):
            async with self.session.get(backend.url(path), headers=headers, ssl=backend.ssl, allow_redirects=False,
                                        server_hostname=backend.server_hostname) as reply:
                raw = await reply.read()
                try:
                    parsed = orjson.loads(raw) if raw else None
                except orjson.JSONDecodeError:
                    parsed = None
                return reply.status, reply.headers.get("Content-Type", ""), parsed
