"""What a served resource or subresource can do: k8s.io/apiserver's ``registry/rest`` interfaces.

Each capability is a small protocol of one method. The registry hands out, per (group, resource,
subresource), the object serving it (:meth:`~kplane.core.registry.registry.Registry.rest`): the
resource's :class:`~kplane.core.registry.store.Store` has every resource capability; a
subresource is an object of its own with only the ones it has (``status``: get, update, patch;
``scale``: the same on autoscaling/v1 Scale; ``binding``: create). The router serves a verb only
when that object has the verb's capability (:data:`VERBS`), and discovery and OpenAPI list
exactly those verbs, so what a resource advertises is what it serves.

A :class:`Connecter` (``pods/log``, ``exec``, ``proxy``) takes whole HTTP requests of the methods
it names and streams its answer through an :class:`Exchange`, which the HTTP layer adapts its web
server's request to: serving objects never see the web framework. Its methods stand for verbs in
discovery as kube-apiserver lists them (:data:`CONNECT_VERBS`: GET is get, POST create).

A plugin serves a subresource with an object of its own, a :class:`Served` with the capabilities
it has (``registry.add_subresource``), and so it may serve a resource that is never stored
(``registry.add_rest``: the review resources, TokenReview or SubjectAccessReview, which are a
``rest.Creater`` only): such an object takes the internal object the HTTP layer decoded and
answers one, which the HTTP layer encodes in the version asked for.

Objects answering their resource's kind (:attr:`Served.own_kind` False) take internal objects
and answer :class:`~kplane.core.registry.stored.StoredObject`; the HTTP layer decodes bodies
(recording managedFields) and converts answers to the version asked for. Objects of a kind of
their own take and answer that kind's wire form.
"""

from __future__ import annotations

import functools
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from kplane.core.meta.deleteoptions import DeleteOptions
    from kplane.core.registry.options import ListOptions, WatchOptions
    from kplane.core.registry.store import ListPage, WatchEvent
    from kplane.core.registry.strategy import RequestContext
    from kplane.core.runtime.gvk import GroupVersionKind
    from kplane.core.runtime.protobuf import Message

#: The new state of an object from its stored one (None: missing, for a create on update).
UpdateFunc = Callable[[Any], Awaitable[Any]]


@runtime_checkable
class Getter(Protocol):
    """GET of one object by name (``rest.Getter``)."""

    async def get(self, ctx: RequestContext, name: str) -> Any: ...


@runtime_checkable
class Lister(Protocol):
    """GET of a collection, one page of the objects matching the options (``rest.Lister``)."""

    async def list(self, ctx: RequestContext, opts: ListOptions) -> ListPage: ...


@runtime_checkable
class Creater(Protocol):
    """POST: a new object of a collection, or a body posted to a named subresource, which finds
    its object by ``ctx.name`` (``rest.Creater`` and ``rest.NamedCreater``)."""

    async def create(self, ctx: RequestContext, obj: Any) -> Any: ...


@runtime_checkable
class Updater(Protocol):
    """PUT: ``updater`` turns the stored object into the new one inside a guarded write, so a
    concurrent writer is retried, not overwritten; returns the result and whether it was created
    (``rest.Updater`` with its ``UpdatedObjectInfo``)."""

    async def update(self, ctx: RequestContext, name: str, updater: UpdateFunc, *,
                     force_allow_create: bool = False) -> tuple[Any, bool]: ...


@runtime_checkable
class Patcher(Getter, Updater, Protocol):
    """PATCH: as ``rest.Patcher``, a Getter that is an Updater; the HTTP layer applies the patch
    to the stored object inside :meth:`Updater.update`."""


@runtime_checkable
class GracefulDeleter(Protocol):
    """DELETE of one object; returns it and whether it is gone, or only marked (finalizers, a
    grace period) (``rest.GracefulDeleter``)."""

    async def delete(self, ctx: RequestContext, name: str, opts: DeleteOptions) -> tuple[Any, bool]: ...


@runtime_checkable
class CollectionDeleter(Protocol):
    """DELETE of a collection: every object matching the list options (``rest.CollectionDeleter``)."""

    async def delete_collection(self, ctx: RequestContext, list_opts: ListOptions, opts: DeleteOptions) -> ListPage: ...


@runtime_checkable
class Watcher(Protocol):
    """GET of a collection with ``?watch``: its changes as events (``rest.Watcher``)."""

    async def watch(self, ctx: RequestContext, opts: WatchOptions) -> AsyncIterator[WatchEvent]: ...


class Exchange(Protocol):
    """One request to a :class:`Connecter` and its streamed answer, as the connecter sees them."""

    #: The request's HTTP method, one of the connecter's ``connect_methods``.
    method: str
    #: What the URL names after the subresource, for a connecter taking a subpath
    #: (:attr:`Served.connect_subpath`): ``/a/b`` of ``.../proxy/a/b``, ``/`` of ``.../proxy/``,
    #: "" of ``.../proxy``, as kube-apiserver's ``getRequestOptions`` makes it.
    path: str
    #: The request's query string as sent (percent-encoded, without ``?``), for a proxy to pass on.
    query_string: str

    def query(self, name: str) -> list[str]:
        """Every value of the query parameter ``name``, in order; empty when it is not given."""
        ...

    async def read(self) -> bytes:
        """The request's whole body (empty for none), on every call; 413 past the server's body limit."""
        ...

    async def start(self, content_type: str = "text/plain", status: int = 200,
                    headers: dict[str, str] | None = None) -> None:
        """Send the answer's status and headers (the first :meth:`write` does it with these
        defaults), with ``headers`` besides (a proxied answer's, a redirect's ``Location``). Until
        then an APIError raised by ``connect`` is answered as a Status. ValueError (a 500) for a
        status outside 100-599 or a content type or header with control characters."""
        ...

    async def write(self, chunk: bytes) -> None:
        """Send ``chunk`` to the client now (nothing for HEAD, whose answer has no body). Raises
        ConnectionResetError once the client has gone: let it propagate, the HTTP layer then ends
        the exchange quietly."""
        ...

    def header(self, name: str) -> str | None:
        """The request header ``name`` (case-insensitive), None when it is not sent."""
        ...

    def client_gone(self) -> bool:
        """The client has closed its connection (a stream with nothing to write for a while,
        such as a log followed, looks now and then, and ends)."""
        ...

    def websocket_protocols(self) -> list[str] | None:
        """The subprotocols, in the client's order, of a WebSocket upgrade request
        (``Sec-WebSocket-Protocol``; empty when it names none); None for a request that is no
        WebSocket upgrade."""
        ...

    async def websocket(self, protocol: str | None) -> WebSocket:
        """Accept the WebSocket upgrade, agreeing on ``protocol`` (one the client offered, or
        None for none), and talk over it from now on: the answer has started. ValueError (a
        500) for a request that is no upgrade or a protocol the client did not offer."""
        ...


class WebSocket(Protocol):
    """An accepted WebSocket (:meth:`Exchange.websocket`): binary messages each way."""

    #: The subprotocol agreed on, None for none.
    protocol: str | None

    async def send(self, data: bytes) -> None:
        """Send one binary message; ConnectionResetError once the client has gone."""
        ...

    async def send_text(self, data: str) -> None:
        """Send one text message (the base64 channel protocols'); ConnectionResetError once the client has gone."""
        ...

    async def receive(self) -> bytes | None:
        """The client's next message (text arrives as its UTF-8 bytes); None once it has closed."""
        ...

    async def close(self, code: int = 1000, reason: str = "") -> None:
        """Close the WebSocket (a no-op once closed); the HTTP layer closes it when ``connect`` returns."""
        ...


@runtime_checkable
class Connecter(Protocol):
    """Any HTTP method of its ``connect_methods`` (:attr:`Served.connect_methods`), answered as a
    stream for as long as it likes (``rest.Connecter``): ``connect`` reads the request and writes
    the answer through ``exchange``."""

    async def connect(self, ctx: RequestContext, name: str, exchange: Exchange) -> None: ...


#: Each Kubernetes verb and the capability that serves it, in the order kube-apiserver lists verbs.
VERBS: dict[str, type] = {
    "create": Creater,
    "delete": GracefulDeleter,
    "deletecollection": CollectionDeleter,
    "get": Getter,
    "list": Lister,
    "patch": Patcher,
    "update": Updater,
    "watch": Watcher,
}

#: The verbs a subresource can serve by capability: its URL names one object, so none of a
#: collection's (list, watch, deletecollection).
NAMED_VERBS: frozenset[str] = frozenset({"create", "delete", "get", "patch", "update"})
#: Those an object of a kind of its own (:attr:`Served.own_kind`) can: the HTTP layer handles
#: wire objects only for these.
OWN_KIND_VERBS: frozenset[str] = frozenset({"create", "get", "patch", "update"})
#: Those a resource served without storage (``registry.add_rest``) can: create (the reviews), and
#: get and list of objects made on request (metrics.k8s.io), answered as internal objects (a list
#: as a ``ListPage`` of them); the other verbs answer what storage holds (StoredObjects, watch events).
UNSTORED_VERBS: frozenset[str] = frozenset({"create", "get", "list"})

#: The verb each HTTP method a Connecter takes stands for in discovery and authorization
#: (kube-apiserver's ``toDiscoveryKubeVerb``); HEAD and OPTIONS are served but stand for none.
CONNECT_VERBS: dict[str, str] = {
    "GET": "get", "POST": "create", "PUT": "update", "PATCH": "patch", "DELETE": "delete", "HEAD": "", "OPTIONS": "",
}


class Served:
    """What the router, discovery and OpenAPI read of a served object besides its capabilities;
    the base class of a plugin's own (``registry.add_subresource``), which sets what applies."""

    #: The verbs it serves of those it has capabilities for (a strategy's ``verbs``: namespaces
    #: have no deletecollection); None: all of them.
    verbs: frozenset[str] | None = None
    #: The kind it takes and answers when not its resource's (``pods/binding``: core/v1 Binding);
    #: discovery's ``kind``/``responseKind``.
    kind: GroupVersionKind | None = None
    #: The schema of ``kind``, for OpenAPI's bodies (and the patches of such a kind).
    schema: type | None = None
    #: The protobuf table of ``kind``, so its bodies are accepted as protobuf too.
    protobuf: Message | None = None
    #: Takes and answers wire objects of ``kind`` (None: the resource's kind), not internal
    #: objects; such an object serves some of get, update, patch and create.
    own_kind: bool = False
    #: A finished DELETE answers with the deleted object instead of a Status.
    returns_deleted: bool = False
    #: The HTTP methods a :class:`Connecter` takes, some of :data:`CONNECT_VERBS` (``ConnectMethods``).
    connect_methods: frozenset[str] = frozenset()
    #: Its Connecter also serves the URLs below it (``pods/x/proxy/a/b``, kube's
    #: ``NewConnectOptions`` subpath), the rest of the path reaching it as :attr:`Exchange.path`.
    connect_subpath: bool = False


@functools.cache
def capabilities(cls: type) -> frozenset[str]:
    """The verbs objects of ``cls`` have the capabilities for (found once per class: a protocol
    check is slow, and the router asks on every request)."""
    return frozenset(verb for verb, capability in VERBS.items() if issubclass(cls, capability))


@functools.cache
def connects(cls: type) -> bool:
    """Objects of ``cls`` are Connecters (found once per class, as :func:`capabilities`)."""
    return issubclass(cls, Connecter)


def connect_methods(served: Served) -> tuple[str, ...]:
    """The HTTP methods ``served`` connects, in :data:`CONNECT_VERBS`' order (empty unless it is
    a Connecter)."""
    if not connects(type(served)):
        return ()
    return tuple(method for method in CONNECT_VERBS if method in served.connect_methods)


def verbs_of(served: Served) -> tuple[str, ...]:
    """The verbs ``served`` serves, in kube-apiserver's order: its capabilities, narrowed by what
    it declares, and those its connect methods stand for."""
    have = capabilities(type(served))
    connected = {CONNECT_VERBS[method] for method in connect_methods(served)}
    return tuple(verb for verb in VERBS
                 if verb in connected or (verb in have and (served.verbs is None or verb in served.verbs)))


def problems(served: Served, *, resource: bool = False) -> list[str]:
    """What makes ``served`` unfit to serve a subresource (``resource``: a resource without
    storage): nothing to serve, verbs declared that it has no capability for, verbs no
    subresource (:data:`NAMED_VERBS`), no object of a kind of its own (:data:`OWN_KIND_VERBS`)
    or no resource without storage (:data:`UNSTORED_VERBS`) can serve, or connect methods that
    are unknown or stand for a verb a capability serves (one verb, one way to serve it)."""
    found = []
    have = capabilities(type(served))
    if served.verbs is not None and not served.verbs <= have:
        found.append(f"verbs {sorted(served.verbs)} must be some of {sorted(have)}")
    if resource and (served.own_kind or served.kind is not None):
        found.append("a resource takes and answers its own kind, so it sets neither own_kind nor kind")
    if resource:
        able, what = UNSTORED_VERBS, "a resource without storage"
    elif served.own_kind:
        able, what = OWN_KIND_VERBS, "an object of a kind of its own"
    else:
        able, what = NAMED_VERBS, "a subresource"
    beyond = sorted((have if served.verbs is None else have & served.verbs) - able)
    if beyond:
        found.append(f"verbs {beyond} cannot be served by {what} (only {sorted(able)}; narrow them with verbs)")
    if connects(type(served)) != bool(served.connect_methods):
        found.append("a Connecter names its connect_methods, and only a Connecter does")
    unknown = sorted(method for method in served.connect_methods if method not in CONNECT_VERBS)
    if unknown:
        found.append(f"connect_methods {unknown} must be some of {list(CONNECT_VERBS)}")
    connected = {CONNECT_VERBS.get(method, "") for method in served.connect_methods}
    both = sorted(verb for verb in have & connected if served.verbs is None or verb in served.verbs)
    if both:
        found.append(f"verbs {both} are served both by a capability and by connect")
    if not found and not verbs_of(served) and not served.connect_methods:
        found.append("it has no capability (see kplane.core.registry.rest)")
    return found
