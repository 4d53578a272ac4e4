"""Resource endpoints: one generic handler per verb, for every resource of every plugin.

A request is routed here by URL shape (see :mod:`kplane.core.server.requestinfo`), looked up in the
scheme and registry *per request* (groups come and go while the server runs), and handed to the
object serving the resource or subresource, by the capability its verb needs
(:mod:`kplane.core.registry.rest`): a verb it has none for is answered 405. Bodies of the
resource's kind are decoded with the version's schema and answers converted to the version asked
in; an object of a kind of its own (Scale, Binding) takes and answers that kind as it is. A
request of a method a Connecter takes is its to answer, streamed (:mod:`kplane.core.server.connecting`).
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from typing import Any, cast

import orjson
from aiohttp import web

from kplane.core.audit.context import admission_annotations, record_request_object
from kplane.core.authn.filter import user_of
from kplane.core.authz.filter import create_check
from kplane.core.config import BOOKMARK_INTERVAL
from kplane.core.managedfields import fieldmanager
from kplane.core.meta import deleteoptions, errors
from kplane.core.meta.protobuf import DELETE_OPTIONS
from kplane.core.metrics.families import Tally
from kplane.core.patching import jsonpatch, mergepatch, strategic
from kplane.core.patching.errors import PatchError
from kplane.core.patching.mediatypes import APPLY_PATCH, JSON_PATCH, MERGE_PATCH, STRATEGIC_MERGE_PATCH
from kplane.core.registry import rest
from kplane.core.registry.admission import AdmissionRequest, Operation
from kplane.core.registry.registry import Registry
from kplane.core.registry.options import WatchOptions
from kplane.core.registry.store import EventStream, ListPage, WatchEvent, in_batches
from kplane.core.registry.stored import StoredObject, storage_bytes
from kplane.core.registry.strategy import RequestContext
from kplane.core.runtime import protobuf
from kplane.core.runtime.gojson import go_json_type, go_print
from kplane.core.runtime.gvk import GroupVersion
from kplane.core.runtime.scheme import IGNORE, DecodeError, ResourceType, Scheme
from kplane.core.runtime.schema import Shape, shape_of
from kplane.core.server import connecting, listing, negotiation, params, partial_metadata, requestinfo, tables
from kplane.core.server.decoding import Decoded
from kplane.core.server.openapi import patch_types
from kplane.core.server.ownership import FieldTracker
from kplane.core.server.requestinfo import RequestInfo
from kplane.core.server.watchstream import Flusher, WatchStream

DEFAULT_WATCH_TIMEOUT = 1800.0  # kube-apiserver's --min-request-timeout

# The Kubernetes verb of a request by method and whether it names an object (a GET of a
# collection is list, or watch with ?watch); the serving object's capabilities say which it supports.
_VERBS = {
    ("GET", False): "list", ("POST", False): "create", ("DELETE", False): "deletecollection",
    ("GET", True): "get", ("PUT", True): "update", ("PATCH", True): "patch", ("DELETE", True): "delete",
}


#: Serves one verb: the request, what it names, its resource, and the object serving it.
Handler = Callable[[web.Request, RequestInfo, ResourceType, Any], Awaitable[web.StreamResponse]]


_VERSION_WARNINGS = web.RequestKey("version_warnings", tuple)


class ResourceEndpoints:
    def __init__(self, scheme: Scheme, registry: Registry, *, bookmark_interval: float = BOOKMARK_INTERVAL,
                 share_watch_encoding: bool = True, watch_events: Tally | None = None) -> None:
        self.scheme = scheme
        self.watch_events = watch_events  # apiserver_watch_events_total, by group, version and kind
        self.registry = registry
        self.bookmark_interval = bookmark_interval
        self.share_watch_encoding = share_watch_encoding  # False only to measure the naive way
        self.lists = listing.ListWriter()
        self._watches: set[asyncio.Task[Any]] = set()
        self._flusher = Flusher()  # writes what watch streams took from the fan-out, once per loop turn
        # The handler of each verb: for objects serving their resource's kind, and for those
        # serving a kind of their own.
        self._objects: dict[str, Handler] = {
            "get": self.get, "update": self.update, "patch": self.patch, "delete": self.delete,
            "list": self.list_objects, "watch": self.watch, "deletecollection": self.delete_collection,
            "create": self.create,
        }
        self._own_kind: dict[str, Handler] = {
            "get": self.get_own, "update": self.update_own, "patch": self.patch_own, "create": self.create_own,
        }

    @staticmethod
    async def version_warnings(request: web.Request, response: web.StreamResponse) -> None:
        """The app's ``on_response_prepare``: the Warning headers of the version a request
        asked for (a deprecated one's), on every answer, errors and streams included."""
        for text in request.get(_VERSION_WARNINGS, ()):
            response.headers.add("Warning", negotiation.warning_header(text))

    async def close_watches(self, app: web.Application | None = None) -> None:
        """End every open watch and connect stream, so a shutdown does not wait for their timeouts."""
        for task in list(self._watches):
            task.cancel()

    async def handle(self, request: web.Request) -> web.StreamResponse:
        info = requestinfo.of(request)
        if info is None:
            raise _not_found()
        rt = self.scheme.resource(info.group, info.version, info.resource)
        if rt is None or (info.namespaced_path and not rt.namespaced):
            raise _not_found()
        served = self.registry.rest(info.group, info.resource, info.subresource, info.version)
        if served is None or (info.subresource and not info.name):
            raise _not_found()
        if info.trailing and not (getattr(served, "connect_subpath", False) and request.method in rest.connect_methods(served)):
            raise _not_found()  # only a connecter taking a subpath serves the URLs below it
        strategy = self.registry.strategy(info.group, info.resource, version=info.version)
        if strategy is not None and strategy.version_warnings:
            request[_VERSION_WARNINGS] = strategy.version_warnings
        method = request.method
        if method in rest.connect_methods(served):
            if rt.namespaced and not info.namespace:
                raise _not_found()
            connecter = cast(rest.Connecter, served)  # it has connect methods: it is one
            ctx = _context(request, info)
            options_kind = getattr(connecter, "kind", None)
            if options_kind is not None:  # a connect with options (exec, attach, portforward, proxy): admitted
                await self._admit_connect(rt, info, ctx, connecting.options_object(options_kind, request, info.subpath))
            return await self._streaming(connecting.connect(request, ctx, connecter, info.subpath))
        verb = _VERBS.get((method, bool(info.name)))
        if info.subresource and method == "POST":
            verb = "create"  # a POST to a named subresource, as pods/binding takes
        elif verb == "list" and params.flag(request.query, "watch"):
            verb = "watch"
        if verb not in rest.verbs_of(served) or (verb == "create" and rt.namespaced and not info.namespace):
            raise errors.method_not_allowed(method, f"{rt.plural}{'/' + info.subresource if info.subresource else ''}")
        handlers = self._own_kind if served.own_kind else self._objects
        return await handlers[verb](request, info, rt, served)

    # -- reads ------------------------------------------------------------------------------
    async def get(self, request: web.Request, info: RequestInfo, rt: ResourceType, store: rest.Getter) -> web.Response:
        view = self._view(request, info, rt)
        ctx = _context(request, info)
        ctx.any_recent = request.query.get("resourceVersion") == "0"
        stored = await store.get(ctx, info.name)
        if view is not None and not isinstance(stored, StoredObject):  # made on request, never stored
            stored = StoredObject(None, 0, rt.encode(stored, rt.storage_version))
        if view is not None:
            if view.objects:
                stored, = await _ready(rt, [stored], info.version)
            return negotiation.json_response(200, view.object(stored), view.content_type)
        return negotiation.respond(request, 200, await _to_version(rt, stored, info.version))

    async def list_objects(self, request: web.Request, info: RequestInfo, rt: ResourceType, store: rest.Lister) -> web.StreamResponse:
        view = self._view(request, info, rt)
        opts = params.list_options(request.query)
        async with self.lists.turn():
            page = await store.list(_context(request, info), opts)
        if page.items and not isinstance(page.items[0], StoredObject):
            return await self._send_unstored(request, info, rt, view, page)
        found = page.items
        converted = rt.converts_async(info.version) and (view is None or view.objects)
        if converted:  # the page at once: one conversion request, as kube-apiserver converts a list
            found = await _ready(rt, found, info.version)
        items, rv, token = [stored.pack() for stored in found], page.resource_version, page.continue_
        del page, found  # only the packed items are held while the answer is sent
        if view is not None:
            envelope, item = view.envelope(rv, token), view.item
            return await self.lists.send(request, 200, envelope, items,
                                         lambda packed: orjson.dumps(item(StoredObject.unpack(packed))), view.content_type)
        item_json = _json_in(rt, info.version, converted)
        return await self.lists.send(request, 200, _list_envelope(rt, info.version, rv, token), items,
                                     lambda packed: item_json(StoredObject.unpack(packed)))

    async def _send_unstored(self, request: web.Request, info: RequestInfo, rt: ResourceType, view: View | None,
                             page: ListPage) -> web.StreamResponse:
        """A page of internal objects made on request by a resource served without storage
        (``registry.add_rest``), each encoded here: in the storage version for a view, which
        converts what it shows, else in the version asked for."""
        rv, token = page.resource_version, page.continue_
        if view is not None:
            wires = [rt.encode(obj, rt.storage_version) for obj in page.items]
            item = view.item
            return await self.lists.send(request, 200, view.envelope(rv, token), wires,
                                         lambda wire: orjson.dumps(item(StoredObject(None, 0, wire))), view.content_type)
        wires = [rt.encode(obj, info.version) for obj in page.items]
        return await self.lists.send(request, 200, _list_envelope(rt, info.version, rv, token), wires, orjson.dumps)

    def _view(self, request: web.Request, info: RequestInfo, rt: ResourceType) -> View | None:
        """How the client asked to see the objects when not as themselves: a Table (``kubectl
        get``) or PartialObjectMetadata (client-go's metadata client); else None."""
        if tables.wants_table(request):
            strategy = self.registry.strategy(rt.group, rt.plural, version=info.version)
            return tables.TableBuilder(rt, strategy.columns if strategy else (), info.version, tables.include_object(request))
        partial = partial_metadata.wanted(request)
        return partial_metadata.PartialMetadata(*partial, rt) if partial else None

    async def watch(self, request: web.Request, info: RequestInfo, rt: ResourceType, store: rest.Watcher) -> web.StreamResponse:
        opts = params.watch_options(request.query)
        timeout = params.integer(request.query, "timeoutSeconds") or DEFAULT_WATCH_TIMEOUT
        view = self._view(request, info, rt)
        events = await store.watch(_context(request, info), opts)
        return await self._streaming(self._send_watch(request, info, rt, opts, timeout, view, events))

    async def _admit_connect(self, rt: ResourceType, info: RequestInfo, ctx: RequestContext, options: dict[str, Any]) -> None:
        """A CONNECT through the admission plugins that handle it (kube's ``ConnectResource``)."""
        request = AdmissionRequest(Operation.CONNECT, rt, info.subresource, info.namespace, info.name, options, None, ctx)
        await self.registry.admission.mutate(request)
        await self.registry.admission.validate(request)

    async def _streaming(self, answer: Awaitable[web.StreamResponse]) -> web.StreamResponse:
        """``answer``, a stream the shutdown ends (:meth:`close_watches`) rather than waits for."""
        task = asyncio.current_task()
        assert task is not None
        self._watches.add(task)
        try:
            return await answer
        finally:
            self._watches.discard(task)

    async def _send_watch(self, request: web.Request, info: RequestInfo, rt: ResourceType, opts: WatchOptions,
                          timeout: float, view: View | None, events: AsyncIterator[WatchEvent]) -> web.StreamResponse:
        content_type = view.content_type if view is not None else negotiation.JSON
        response = web.StreamResponse(headers={"Content-Type": content_type, "Cache-Control": "no-cache"})
        response.enable_chunked_encoding()
        await response.prepare(request)
        batches = in_batches(events)
        transport = request.transport
        if transport is None:  # the client went away before the first byte
            await batches.aclose()  # type: ignore[attr-defined]
            return response
        bookmark_every = self.bookmark_interval if opts.allow_bookmarks else None
        api_version = GroupVersion(rt.group, info.version).api_version
        version = info.version
        stream = WatchStream(response, transport, self._flusher, functools.partial(self._event_line, rt, version, view),
                             last_rv=opts.resource_version if opts.resource_version not in ("", "0") else "",
                             tally=self.watch_events, counted=(rt.group, version, rt.kind))
        converts = rt.converts_async(version) and (view is None or view.objects)
        # once caught up, events come from the fan-out straight to the stream, unless each needs
        # an awaited conversion (a CRD's conversion webhook)
        sink_wanted = isinstance(batches, EventStream) and not converts
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        try:
            while (left := deadline - loop.time()) > 0:
                try:
                    batch = await batches.batch(min(left, bookmark_every) if bookmark_every else left)
                except StopAsyncIteration:
                    break
                if not batch:  # quiet (or all filtered out): tell the client how far it is up to date
                    now = loop.time()
                    if bookmark_every and stream.last_rv and now - stream.quiet_since >= bookmark_every and now < deadline:
                        bookmark = {"kind": rt.kind, "apiVersion": api_version, "metadata": {"resourceVersion": str(stream.last_rv)}}
                        await stream.write_line(negotiation.encode_json({"type": "BOOKMARK", "object": bookmark}))
                    continue
                if converts:
                    batch = await _events_in(rt, batch, version)
                await stream.write(batch)
                if sink_wanted and cast(EventStream, batches).deliver(stream.offer):
                    sink_wanted = False
        except errors.APIError as err:
            with contextlib.suppress(ConnectionResetError):
                await stream.write_line(negotiation.encode_json({"type": "ERROR", "object": err.status()}))
        except ConnectionResetError:
            return response  # the client went away; nothing more to say to it
        finally:
            with contextlib.suppress(errors.APIError):  # logged; the stream is over either way
                await batches.aclose()  # type: ignore[attr-defined]
            stream.close()
        with contextlib.suppress(ConnectionResetError):
            await response.write_eof()
        return response

    def _event_line(self, rt: ResourceType, version: str, view: View | None, event: WatchEvent) -> bytes:
        """One watch line; every watcher of the same storage event shares it per version and
        format (JSON, a Table with or without the object, PartialObjectMetadata)."""
        if not self.share_watch_encoding:  # the naive way, for benchmarks: all work per watcher
            event = WatchEvent(event.type, event.obj.copy())
        key = (event.type, version) if view is None else (event.type, version, *view.memo_key)
        line = event.memo.get(key)
        if line is None:
            obj = _object_in(rt, event.obj, version) if view is None else view.watch_object(event.obj)
            line = event.memo[key] = negotiation.encode_json({"type": event.type, "object": obj})
        return line

    # -- writes -----------------------------------------------------------------------------
    async def create(self, request: web.Request, info: RequestInfo, rt: ResourceType, store: rest.Creater) -> web.Response:
        opts = params.write_options(request.query, params.CREATE_OPTIONS)
        body, duplicates = await _decode_object(request, rt, info.version)
        ctx = _context(request, info, opts)
        tracker = self._tracker(request, ctx, rt, info.version)
        obj, warnings = tracker.decode(rt, None, body, opts.field_validation, duplicates)
        stored = await store.create(ctx, obj)
        return negotiation.respond(request, 201, await _to_version(rt, stored, info.version), warnings + ctx.warnings)

    async def update(self, request: web.Request, info: RequestInfo, rt: ResourceType, store: rest.Updater) -> web.Response:
        opts = params.write_options(request.query, params.UPDATE_OPTIONS)
        body, duplicates = await _decode_object(request, rt, info.version)
        ctx = _context(request, info, opts)
        tracker = self._tracker(request, ctx, rt, info.version)
        warnings: list[str] = []

        async def updater(old: Any) -> Any:
            previous = rt.encode(old, info.version) if old is not None else None
            obj, found = tracker.decode(rt, previous, body, opts.field_validation, duplicates)
            warnings[:] = found
            return obj

        stored, created = await store.update(ctx, info.name, updater)
        return negotiation.respond(request, 201 if created else 200, await _to_version(rt, stored, info.version), warnings + ctx.warnings)

    async def patch(self, request: web.Request, info: RequestInfo, rt: ResourceType, store: rest.Patcher) -> web.Response:
        content_type, decoded = await _read_patch(request, rt)
        document = decoded.value
        opts = params.write_options(request.query, params.PATCH_OPTIONS, apply=content_type == APPLY_PATCH)
        validation, force = opts.field_validation, opts.force
        ctx = _context(request, info, opts)
        tracker = self._tracker(request, ctx, rt, info.version)
        warnings: list[str] = []
        if content_type == APPLY_PATCH:
            document = _apply_config(document, rt, info)

        async def updater(old: Any) -> Any:
            current = rt.encode(old, info.version) if old is not None else None
            if content_type == APPLY_PATCH:
                obj, found = rt.decode(tracker.apply(current, document, force=force), info.version, validation,
                                       decoded.duplicates)
            elif current is None:  # only apply creates; kube-apiserver's other patchers answer NotFound
                raise errors.not_found(rt.plural, rt.group, info.name)
            else:
                patched = _apply_patch(content_type, current, document, tracker.shape)
                _check_type_meta(patched, rt, info.version)
                try:
                    obj, found = tracker.decode(rt, current, patched, validation, decoded.duplicates)
                except DecodeError as err:
                    raise _undecodable_patch(content_type, document, patched, err) from None
            warnings[:] = found
            return obj

        stored, created = await store.update(ctx, info.name, updater, force_allow_create=content_type == APPLY_PATCH)
        return negotiation.respond(request, 201 if created else 200, await _to_version(rt, stored, info.version), warnings + ctx.warnings)

    def _tracker(self, request: web.Request, ctx: RequestContext, rt: ResourceType, version: str) -> FieldTracker:
        """What records this write in managedFields, under the (sub)resource's strategy's rules."""
        strategy = self.registry.strategy(rt.group, rt.plural, ctx.subresource, ctx.version)
        assert strategy is not None  # the request's object is served, so it has one
        return FieldTracker(request, ctx, rt, strategy, version=version)

    # -- a kind of its own (Scale, Binding) ------------------------------------------------
    async def get_own(self, request: web.Request, info: RequestInfo, rt: ResourceType, served: rest.Served) -> web.Response:
        getter = cast(rest.Getter, served)  # the router routes a GET only to a Getter
        return negotiation.respond(request, 200, await getter.get(_context(request, info), info.name))

    async def update_own(self, request: web.Request, info: RequestInfo, rt: ResourceType, served: rest.Served) -> web.Response:
        opts = params.write_options(request.query, params.UPDATE_OPTIONS)
        body = await _read_own_kind(request, rt, served)

        async def updater(current: Any) -> Any:
            return body

        return await self._write_own(request, info, rt, served, opts, updater)

    async def patch_own(self, request: web.Request, info: RequestInfo, rt: ResourceType, served: rest.Served) -> web.Response:
        content_type, decoded = await _read_patch(request, rt)
        opts = params.write_options(request.query, params.PATCH_OPTIONS, apply=content_type == APPLY_PATCH)
        shape = shape_of(served.schema) if served.schema is not None else rt.versions[rt.storage_version].shape

        async def updater(current: Any) -> Any:
            return _apply_patch(content_type, current, decoded.value, shape)

        return await self._write_own(request, info, rt, served, opts, updater)

    async def _write_own(self, request: web.Request, info: RequestInfo, rt: ResourceType, served: rest.Served,
                         opts: params.WriteOptions, updater: rest.UpdateFunc) -> web.Response:
        """A PUT or PATCH of a kind of its own; what it writes of the parent (a Scale's replica
        count) is recorded in the parent's managedFields, in the storage version."""
        writer = cast(rest.Updater, served)  # the router routes a PUT or PATCH only to an Updater
        ctx = _context(request, info, opts)
        parent = self.registry.strategy(rt.group, rt.plural, version=info.version)
        assert parent is not None  # a resource always has one
        tracker = FieldTracker(request, ctx, rt, parent, version=rt.storage_version)
        ctx.decode = lambda old, new: tracker.decode(rt, old, new, IGNORE)[0]
        result, created = await writer.update(ctx, info.name, updater)
        return negotiation.respond(request, 201 if created else 200, result, ctx.warnings)

    async def create_own(self, request: web.Request, info: RequestInfo, rt: ResourceType, served: rest.Served) -> web.Response:
        """A POST to a named subresource (pods/binding); it answers as kube-apiserver does, a Success Status."""
        creater = cast(rest.Creater, served)  # the router routes a POST only to a Creater
        opts = params.write_options(request.query, params.CREATE_OPTIONS)
        body = await _read_own_kind(request, rt, served)
        ctx = _context(request, info, opts)
        return negotiation.respond(request, 201, await creater.create(ctx, body), ctx.warnings)

    async def delete(self, request: web.Request, info: RequestInfo, rt: ResourceType, store: rest.GracefulDeleter) -> web.Response:
        versions = _delete_options_versions(rt)
        opts = params.delete_options(request.query, await _delete_options_body(request, versions), versions)
        stored, gone = await store.delete(_context(request, info, dry_run=bool(opts.dry_run)), info.name, opts)
        if not gone:  # still there (finalizers to run, or a grace period): the object, as kube-apiserver answers
            # 202 only when orphanDependents=false asked for cascading, as kube-apiserver keeps it for old clients
            code = 202 if opts.orphan_dependents is False else 200
            return negotiation.respond(request, code, await _to_version(rt, stored, info.version))
        if isinstance(store, rest.Served) and store.returns_deleted:
            return negotiation.respond(request, 200, await _to_version(rt, stored, info.version))
        return negotiation.respond(request, 200, _success(rt, stored))

    async def delete_collection(self, request: web.Request, info: RequestInfo, rt: ResourceType,
                                store: rest.CollectionDeleter) -> web.StreamResponse:
        list_opts = params.list_options(request.query)
        versions = _delete_options_versions(rt)
        opts = params.delete_options(request.query, await _delete_options_body(request, versions), versions)
        ctx = _context(request, info, dry_run=bool(opts.dry_run))
        listed = await store.delete_collection(ctx, list_opts, opts)
        envelope = _list_envelope(rt, info.version, listed.resource_version, listed.continue_)
        converted = rt.converts_async(info.version)
        items = await _ready(rt, listed.items, info.version) if converted else listed.items
        return await self.lists.send(request, 200, envelope, items, _json_in(rt, info.version, converted))


#: A way of answering with the objects other than as themselves (see ``Handlers._view``).
View = tables.TableBuilder | partial_metadata.PartialMetadata


def _context(request: web.Request, info: RequestInfo, opts: params.WriteOptions | None = None, *,
             dry_run: bool = False) -> RequestContext:
    """The request's context: a write's from its validated ``opts``; a delete gives ``dry_run``
    from its DeleteOptions (body or query); reads are never dry runs. Its user is whom the
    request acts as (authenticated, or impersonated)."""
    return RequestContext(
        group=info.group,
        version=info.version,
        resource=info.resource,
        subresource=info.subresource,
        namespace=info.namespace,
        name=info.name,
        dry_run=opts.dry_run if opts is not None else dry_run,
        field_manager=opts.field_manager if opts is not None else "",
        user=user_of(request),
        authorize_create=create_check(request),
        audit_annotations=admission_annotations(request),
    )


def _delete_options_versions(rt: ResourceType) -> list[str]:
    """The apiVersions a DeleteOptions body for ``rt`` may name: meta's, and those of ``rt``'s group."""
    return [*deleteoptions.API_VERSIONS, *(GroupVersion(rt.group, version).api_version for version in rt.versions)]


def _not_found() -> errors.APIError:
    return errors.APIError(404, errors.StatusReason.NOT_FOUND, "the server could not find the requested resource", {})


async def _to_version(rt: ResourceType, stored: StoredObject | Any, version: str) -> dict[str, Any] | orjson.Fragment:
    """An answer's object in ``version`` (see :func:`_object_in`), converted first when the
    kind converts asynchronously."""
    if isinstance(stored, StoredObject):
        stored, = await _ready(rt, [stored], version)
    return _object_in(rt, stored, version)


async def _ready(rt: ResourceType, items: list[StoredObject], version: str) -> list[StoredObject]:
    """``items`` as objects already in ``version`` when the kind converts asynchronously (a
    conversion webhook): all in one conversion, each held as a StoredObject of that version, so
    that whatever encodes them afterwards converts nothing. Else ``items`` as they are."""
    if not items or not rt.converts_async(version):
        return items
    converted = await rt.convert_many([stored.obj for stored in items], version)
    return [StoredObject(storage_bytes(obj), stored.revision) for obj, stored in zip(converted, items, strict=True)]


async def _events_in(rt: ResourceType, batch: list[WatchEvent], version: str) -> list[WatchEvent]:
    """A watch batch with its objects in ``version`` for a kind that converts asynchronously.

    Each event's object is converted once per version however many watch it: the first watcher
    to need it starts one conversion for all such events of its batch, kept on the shared
    event's memo, and every other watcher awaits that. A failed conversion is forgotten, so a
    watch started again later asks anew."""
    pending = [event for event in batch if ("in", event.type, version) not in event.memo]
    if pending:
        task = asyncio.ensure_future(_ready(rt, [event.obj for event in pending], version))
        for index, event in enumerate(pending):
            event.memo[("in", event.type, version)] = (task, index)

        def forget_if_failed(done: asyncio.Future[list[StoredObject]]) -> None:
            if done.cancelled() or done.exception() is not None:
                for event in pending:
                    event.memo.pop(("in", event.type, version), None)

        task.add_done_callback(forget_if_failed)
    out = []
    for event in batch:
        task, index = event.memo[("in", event.type, version)]
        out.append(WatchEvent(event.type, (await asyncio.shield(task))[index], event.memo))
    return out


def _object_in(rt: ResourceType, stored: StoredObject | Any, version: str) -> dict[str, Any] | orjson.Fragment:
    """The object in ``version``: the stored bytes as they are when that is the storage version;
    an internal object (what a resource served without storage answers) encoded."""
    if not isinstance(stored, StoredObject):
        return rt.encode(stored, version)
    if rt.reads_stored(version):
        return stored.fragment()
    return rt.convert(stored.obj, rt.storage_version, version)


def _list_envelope(rt: ResourceType, version: str, rv: str, token: str) -> dict[str, Any]:
    """A ``<Kind>List`` with its items left out (``items`` is its last field, ``[]``)."""
    return {"kind": rt.list_kind, "apiVersion": GroupVersion(rt.group, version).api_version,
            "metadata": listing.list_meta(rv, token), "items": []}


def _json_in(rt: ResourceType, version: str, converted: bool = False) -> Callable[[StoredObject], bytes]:
    """How to write one object of a list in ``version``: the stored bytes, or converted (the
    bytes again when :func:`_ready` converted the objects)."""
    if rt.reads_stored(version) or converted:
        return StoredObject.json
    return lambda stored: orjson.dumps(rt.convert(stored.obj, rt.storage_version, version))


def _success(rt: ResourceType, stored: StoredObject) -> dict[str, Any]:
    meta = stored.obj["metadata"]
    details = errors.status_details({"name": meta["name"], "group": rt.group, "kind": rt.plural, "uid": meta.get("uid", "")})
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "details": details}


async def _decode_object(request: web.Request, rt: ResourceType, version: str) -> tuple[dict[str, Any], list[str]]:
    """The body as a wire JSON dict, with its duplicate keys as strict-decoding errors; protobuf
    bodies become one too, for the kinds that registered a table, so they share JSON's validation."""
    expected = GroupVersion(rt.group, version).api_version
    decoded = await _read_body(request, rt.versions[version].protobuf, rt.kind, (expected,))
    _check_type_meta(decoded.value, rt, version)
    return decoded.value, decoded.duplicates


async def _read_own_kind(request: web.Request, rt: ResourceType, served: rest.Served) -> Any:
    """The body of a write to an object serving a kind of its own (its ``kind``; None: ``rt``'s,
    in no version protobuf names)."""
    kind = served.kind
    api_versions = (GroupVersion(kind.group, kind.version).api_version,) if kind else ()
    return (await _read_body(request, served.protobuf, kind.kind if kind else rt.kind, api_versions)).value


async def _read_body(request: web.Request, table: protobuf.Message | None, kind: str, api_versions: Sequence[str]) -> Decoded:
    """A request body of ``kind`` in JSON, YAML or, when ``table`` is given, Kubernetes protobuf
    (``k8s\\0`` + runtime.Unknown naming one of ``api_versions``), decoded into the JSON value it
    stands for: every format then takes the same validation, and the audit log records it."""
    content_type = negotiation.media_type(request.headers.get("Content-Type"))
    if content_type != protobuf.MEDIA_TYPE:
        decoded = await negotiation.read_decoded(request, content_type)
    else:
        decoded = Decoded(_from_protobuf(await negotiation.read_body(request), table, kind, api_versions))
    record_request_object(request, decoded.value)
    return decoded


def _from_protobuf(raw: bytes, table: protobuf.Message | None, kind: str, api_versions: Sequence[str]) -> dict[str, Any]:
    expected = " or ".join(api_versions)
    if table is None:
        raise errors.APIError(
            415,
            errors.StatusReason.UNSUPPORTED_MEDIA_TYPE,
            "the body of the request was in an unknown format - accepted media types include: "
            f"{negotiation.JSON}, {negotiation.YAML} ({protobuf.MEDIA_TYPE} is accepted only for "
            f"some kinds, not for {expected} {kind})",
        )
    try:
        api_version, found, data = protobuf.decode_envelope(raw)
        if found != kind or api_version not in api_versions:
            raise errors.APIError(
                415,
                errors.StatusReason.UNSUPPORTED_MEDIA_TYPE,
                f"the protobuf body holds a {api_version} {found}, but only {expected} {kind} is accepted here as {protobuf.MEDIA_TYPE}",
            )
        return {"apiVersion": api_version, "kind": kind, **protobuf.decode_message(data, table)}
    except protobuf.ProtobufError as err:
        raise errors.bad_request(f"the {protobuf.MEDIA_TYPE} body of the {kind} cannot be decoded: {err}; send it as JSON or YAML instead") from None


def _check_type_meta(body: Any, rt: ResourceType, version: str) -> None:
    """A body must be an object of this kind and version; missing apiVersion/kind default to the URL's."""
    if not isinstance(body, dict):
        raise errors.bad_request(f"the body of the request must be a {rt.kind} object, not {type(body).__name__ if body is not None else 'null'}")
    expected = GroupVersion(rt.group, version).api_version
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if api_version and api_version != expected:
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API version ({expected})")
    if kind and kind != rt.kind:
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind ({rt.kind})")
    if not isinstance(body.get("metadata", {}), dict):
        raise errors.bad_request(f'{rt.kind} in version "{version}" cannot be handled as a {rt.kind}: metadata must be an object')


async def _read_patch(request: web.Request, rt: ResourceType) -> tuple[str, negotiation.Decoded]:
    """The patch's format, one ``rt`` takes (a custom resource no strategic merge patch), and body."""
    content_type = negotiation.media_type(request.headers.get("Content-Type"))
    accepted = patch_types(rt)
    if content_type not in accepted:
        raise errors.unsupported_media_type(content_type, accepted)
    decoded = await negotiation.read_decoded(request, content_type)
    record_request_object(request, decoded.value, patch=True)  # kube's audit logs the patch as sent
    return content_type, decoded


def _apply_patch(content_type: str, current: dict[str, Any], document: Any, shape: Shape) -> Any:
    """The patched object; ``shape`` is the schema strategic merge patch takes merge keys from."""
    try:
        if content_type == JSON_PATCH:
            patched = jsonpatch.apply_json_patch(current, document)
        elif content_type == MERGE_PATCH:
            patched = mergepatch.apply_merge_patch(current, document)
        else:
            patched = strategic.apply_strategic_merge_patch(current, document, shape)
    except PatchError as err:
        raise err.api_error() from None
    if not isinstance(patched, dict):  # kube-apiserver cannot decode the result into an object
        shown = orjson.dumps(patched).decode()
        detail = f"the patched document is {'null' if patched is None else 'a JSON ' + go_json_type(patched)}, not an object"
        raise errors.invalid_object("", "", "", [errors.invalid("patch", shown[:256], detail)])
    return patched


def _undecodable_patch(content_type: str, document: Any, patched: dict[str, Any], err: DecodeError) -> errors.APIError:
    """422 on field ``patch``, as kube-apiserver's patchers answer a result that does not decode
    (a wrong type, or unknown fields under Strict): the strategic merge patcher quotes the patch
    as Go prints it with the unstructured converter's message, the JSON patchers the patched object."""
    if content_type == STRATEGIC_MERGE_PATCH:
        problem = errors.invalid("patch", go_print(document), err.conversion or err.why)
    else:
        problem = errors.invalid("patch", orjson.dumps(patched).decode(), err.why)
    return errors.invalid_object("", "", "", [problem])


def _apply_config(config: Any, rt: ResourceType, info: RequestInfo) -> dict[str, Any]:
    """An apply body, checked as kube-apiserver checks it, named as the URL names it."""
    fieldmanager.check_apply_body(config, GroupVersion(rt.group, info.version).api_version, rt.kind)
    _check_type_meta(config, rt, info.version)
    meta = dict(config.get("metadata") or {})
    if meta.get("name", info.name) != info.name:
        raise errors.bad_request(f"the name of the object ({meta['name']}) does not match the name on the URL ({info.name})")
    meta["name"] = info.name
    return {**config, "metadata": meta}


async def _delete_options_body(request: web.Request, api_versions: list[str]) -> Any:
    """The DeleteOptions body of a DELETE or deletecollection, as its JSON value; None when there
    is none. Protobuf clients (client-go's typed clients) send it as protobuf."""
    raw = await negotiation.read_body(request)
    if not raw.strip():
        return None
    content_type = negotiation.media_type(request.headers.get("Content-Type"))
    if content_type == protobuf.MEDIA_TYPE:
        options = _from_protobuf(raw, DELETE_OPTIONS, "DeleteOptions", api_versions)
    else:
        options = (await negotiation.decode_off_loop(raw, content_type)).value
    record_request_object(request, options)  # kube's audit logs a delete's options
    return options
