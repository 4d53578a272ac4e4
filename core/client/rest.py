"""An asyncio REST client for any group/version/resource of a Kubernetes-style API server.

It speaks HTTP+JSON like any other client, over TLS for an https:// server (``ssl``: a context
from :class:`~kplane.core.client.tls.TLSClientConfig`, or the kubeconfig's through
``from_config``); controllers use it to reach the server, even when they run in the server's own process.

    client = RESTClient.from_config(load_kubeconfig())  # or RESTClient(url, ssl=tls.context())
    deployments = client.resource("apps", "v1", "deployments", namespace="default")
    web = await deployments.get("web")
    async for event in deployments.watch(resource_version=rv):
        ...
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Mapping
from dataclasses import dataclass
from ssl import SSLContext
from typing import TYPE_CHECKING, Any, Protocol

import aiohttp
import orjson

from kplane.core.meta.validation import is_path_segment_name
from kplane.core.patching.mediatypes import MERGE_PATCH

if TYPE_CHECKING:
    from kplane.core.client.kubeconfig import ClientConfig



class ApiError(Exception):
    """A non-2xx answer; ``status`` is the metav1.Status the server sent."""

    def __init__(self, code: int, status: dict[str, Any]) -> None:
        super().__init__(f"{code} {status.get('reason', '')}: {status.get('message', '')}")
        self.code = code
        self.status = status

    @property
    def reason(self) -> str:
        return str(self.status.get("reason", ""))

    @property
    def namespace_terminating(self) -> bool:
        """A 403 because the namespace is being deleted (NamespaceLifecycle admission): nothing
        new can be made in it, so a controller stops trying."""
        causes = (self.status.get("details") or {}).get("causes") or []
        return self.code == 403 and any(cause.get("reason") == "NamespaceTerminating" for cause in causes)


@dataclass(frozen=True, slots=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED, DELETED, BOOKMARK (ERROR events raise ApiError)
    object: dict[str, Any]


class TokenSource(Protocol):
    """Bearer tokens that change over time (client-go's ``oauth2.TokenSource`` behind a
    ``ResettableTokenSourceWrapTransport``): a ServiceAccount token renewed before it expires."""

    async def token(self) -> str:
        """The token to send now (fetched or renewed when needed)."""
        ...

    def reset(self) -> None:
        """The server refused the last token (401): the next :meth:`token` fetches a new one."""
        ...


class RESTClient:
    """One HTTP session to an API server; ``resource()`` hands out clients of one resource each.

    The bearer token (``token``, or ``token_source``'s current one) goes with each request, not
    with the session: clients acting as different users can share one session (its connections
    and TLS settings), as the controllers of one controller-manager do."""

    def __init__(
        self,
        server: str,
        *,
        session: aiohttp.ClientSession | None = None,
        token: str | None = None,
        token_source: TokenSource | None = None,
        ssl: SSLContext | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> None:
        """``ssl`` and ``headers`` (e.g. a Basic Authorization) shape the session made here; ignored with ``session``."""
        if token and token_source is not None:
            raise ValueError("a client has a token or a token source, not both")
        self.server = server.rstrip("/")
        self.token = token or None
        self.token_source = token_source
        self._own_session = session is None
        self.session = session or aiohttp.ClientSession(
            headers=dict(headers or {}),
            connector=aiohttp.TCPConnector(ssl=ssl) if ssl is not None else None,
            timeout=aiohttp.ClientTimeout(total=None, sock_connect=10),
        )

    @classmethod
    def from_config(cls, config: ClientConfig) -> RESTClient:
        """A client for what a kubeconfig resolved to (see :mod:`kplane.core.client.kubeconfig`)."""
        return cls(config.server, token=config.token, ssl=config.ssl, headers=config.auth_headers)

    async def close(self) -> None:
        if self._own_session:
            await self.session.close()

    def resource(self, group: str, version: str, plural: str, namespace: str | None = None) -> ResourceClient:
        return ResourceClient(self, group, version, plural, namespace)

    async def authorization(self) -> dict[str, str]:
        """The ``Authorization`` header of the next request; none without a token."""
        token = await self.token_source.token() if self.token_source is not None else self.token
        return {"Authorization": f"Bearer {token}"} if token else {}

    def refused(self, status: int) -> None:
        """An answer's status came back: a 401 makes the token source fetch a new token."""
        if status == 401 and self.token_source is not None:
            self.token_source.reset()

    async def request(
        self,
        method: str,
        path: str,
        body: Any = None,
        *,
        params: dict[str, str] | None = None,
        content_type: str = "application/json",
    ) -> Any:
        data = orjson.dumps(body) if body is not None else None
        headers = {"Content-Type": content_type, "Accept": "application/json"} if data is not None else {"Accept": "application/json"}
        headers.update(await self.authorization())
        async with self.session.request(method, self.server + path, data=data, params=params, headers=headers) as reply:
            payload = await reply.read()
            parsed = orjson.loads(payload) if payload else None
            if reply.status >= 300:
                self.refused(reply.status)
                raise ApiError(reply.status, parsed if isinstance(parsed, dict) else {"message": payload.decode(errors="replace")})
            return parsed


def _check_segment(what: str, name: str) -> None:
    """A name that is one path segment, as client-go's ``Request.Name`` insists: ``..`` or a
    ``/`` from an object's field would make the URL name another object."""
    problems = is_path_segment_name(name) if name else ["may not be empty"]
    if problems:
        raise ValueError(f"invalid {what} {name!r}: {'; '.join(problems)}")


class ResourceClient:
    """One resource, optionally narrowed to a namespace."""

    def __init__(self, client: RESTClient, group: str, version: str, plural: str, namespace: str | None) -> None:
        self.client = client
        base = f"/apis/{group}/{version}" if group else f"/api/{version}"
        if namespace:
            _check_segment("namespace", namespace)
        self.collection = f"{base}/namespaces/{namespace}/{plural}" if namespace else f"{base}/{plural}"

    def _item(self, name: str, subresource: str = "") -> str:
        _check_segment("resource name", name)
        return f"{self.collection}/{name}" + (f"/{subresource}" if subresource else "")

    async def get(self, name: str, *, subresource: str = "") -> dict[str, Any]:
        return await self.client.request("GET", self._item(name, subresource))

    async def list(self, *, page_size: int = 500, **params: str) -> dict[str, Any]:
        """The whole collection, following ``continue`` tokens; returns one merged list."""
        query = {**params, "limit": str(page_size)}
        merged: dict[str, Any] | None = None
        while True:
            page = await self.client.request("GET", self.collection, params=query)
            if merged is None:
                merged = page
            else:
                merged["items"].extend(page["items"])
            token = page["metadata"].get("continue")
            if not token:
                merged["metadata"].pop("continue", None)
                return merged
            query["continue"] = token

    async def create(self, obj: dict[str, Any], **params: str) -> dict[str, Any]:
        return await self.client.request("POST", self.collection, obj, params=params)

    async def update(self, obj: dict[str, Any], *, subresource: str = "", **params: str) -> dict[str, Any]:
        return await self.client.request("PUT", self._item(obj["metadata"]["name"], subresource), obj, params=params)

    async def update_status(self, obj: dict[str, Any]) -> dict[str, Any]:
        return await self.update(obj, subresource="status")

    async def patch(self, name: str, patch: Any, *, content_type: str = MERGE_PATCH, subresource: str = "", **params: str) -> dict[str, Any]:
        return await self.client.request("PATCH", self._item(name, subresource), patch, params=params, content_type=content_type)

    async def delete(self, name: str, *, propagation_policy: str = "", **params: str) -> dict[str, Any]:
        body = {"kind": "DeleteOptions", "apiVersion": "v1", "propagationPolicy": propagation_policy} if propagation_policy else None
        return await self.client.request("DELETE", self._item(name), body, params=params)

    async def delete_collection(self, **params: str) -> dict[str, Any]:
        return await self.client.request("DELETE", self.collection, params=params)

    async def watch(self, *, resource_version: str = "", timeout_seconds: int = 0, bookmarks: bool = True, **params: str) -> AsyncIterator[WatchEvent]:
        """Events until the server ends the stream; an ERROR event raises ApiError (410: relist)."""
        query = {**params, "watch": "true", "resourceVersion": resource_version}
        if bookmarks:
            query["allowWatchBookmarks"] = "true"
        if timeout_seconds:
            query["timeoutSeconds"] = str(timeout_seconds)
        headers = await self.client.authorization()
        async with self.client.session.get(self.client.server + self.collection, params=query, headers=headers) as reply:
            if reply.status >= 300:
                self.client.refused(reply.status)
                payload = await reply.read()
                raise ApiError(reply.status, orjson.loads(payload) if payload else {})
            async for line in reply.content:
                if not line.strip():
                    continue
                event = orjson.loads(line)
                if event["type"] == "ERROR":
                    raise ApiError(int(event["object"].get("code", 500)), event["object"])
                yield WatchEvent(event["type"], event["object"])
