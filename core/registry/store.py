"""The generic registry Store: one resource's create/get/list/update/delete/watch.

This is k8s.io/apiserver's ``registry.Store``: everything every kind shares lives here (system
metadata, generateName, optimistic concurrency, dry run (writes to a
:class:`~kplane.core.registry.dryrun.DryRunStorage`), preconditions, finalizers, selectors,
pagination, watch semantics) and the kind's own rules come from its
:class:`~kplane.core.registry.strategy.Strategy`. Objects cross this layer's boundary as internal
objects on the way in and as :class:`~kplane.core.registry.stored.StoredObject` (the storage version)
on the way out; the HTTP layer converts those to the version a client asked for.
"""

from __future__ import annotations

import asyncio
import base64
import binascii
import dataclasses
import functools
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

import orjson

from kplane.core.meta import clock, errors, rand
from kplane.core.meta.deleteoptions import DeleteOptions
from kplane.core.meta.selectors import META_FIELDS, FieldSelectorExpr, LabelSelectorExpr, exact_name, field_values
from kplane.core.meta.validation import FINALIZER_FOREGROUND, FINALIZER_ORPHAN, validate_object_meta, validate_object_meta_update
from kplane.core.registry.admission import AdmissionChain, AdmissionRequest, Operation
from kplane.core.registry import storeerr
from kplane.core.registry.dryrun import DryRunStorage
from kplane.core.registry.options import ListOptions, WatchOptions
from kplane.core.registry.rest import Served, UpdateFunc
from kplane.core.registry.stored import StoredObject, storage_bytes
from kplane.core.registry.strategy import RequestContext, Strategy
from kplane.core.runtime.scheme import ResourceType
from kplane.core.storage import interface as st
from kplane.core.storage.keys import resource_prefix
from kplane.core.storage.watchqueue import EventQueue, batched

GENERATE_NAME_ATTEMPTS = 8
MAX_GRACE_SECONDS = 100 * 365 * 86400  # a longer grace period (an int64 of seconds) is as good as forever


@dataclass(slots=True)
class ListPage:
    """One page of a LIST: its objects (a resource served without storage answers internal
    ones), the resourceVersion it was read at, and the token of the next page."""

    items: list[StoredObject]
    resource_version: str
    continue_: str = ""
    remaining_item_count: int | None = None


@dataclass(slots=True)
class WatchEvent:
    type: str  # ADDED, MODIFIED or DELETED
    obj: StoredObject
    # Shared by every watcher of the same storage event (see storage WatchEvent.memo): the HTTP
    # layer keeps each encoding of the event here, so it is encoded once per version and format.
    memo: dict[Any, Any] = dataclasses.field(default_factory=dict)


class EventStream(AsyncIterator[WatchEvent]):
    """A watch's events, the objects it starts with (as ADDED) first: a batch of everything
    ready at a time (``batch``), or one at a time as an async iterator.

    Raises a 410 APIError when the revision is compacted, and a 503 or 504 one
    (:mod:`~kplane.core.registry.storeerr`) when storage fails, mid-stream too. A watcher too
    slow to keep up simply ends: the client watches again from its last resourceVersion.
    """

    __slots__ = ("_plural", "_since", "_initial", "_stream", "_key", "_filter", "_pending", "_sink")

    def __init__(self, plural: str, since: int, initial: list[StoredObject], stream: EventQueue, prefix: str,
                 filter_: Callable[[st.WatchEvent], WatchEvent | None]) -> None:
        self._plural = plural
        self._since = since
        self._initial = [WatchEvent("ADDED", obj) for obj in initial]
        self._stream = stream
        self._key = None if prefix.endswith("/") else prefix  # one object watched by name
        self._filter = filter_
        self._pending: list[WatchEvent] = []  # what __anext__ has yet to hand out
        self._sink: Callable[[WatchEvent], bool] | None = None  # see ``deliver``

    async def batch(self, timeout: float | None) -> list[WatchEvent]:
        """What is ready (at least one event unless ``timeout`` seconds pass first, or every
        event that came was filtered out: then ``[]``); StopAsyncIteration at the end."""
        if self._initial:
            events, self._initial = self._initial, []
            return events
        try:
            stored = await self._stream.batch(timeout)
        except st.UnavailableError as err:  # an outage mid-stream, or closing
            raise storeerr.outage(f"watch {self._plural}", err) from None
        except st.CompactedError as err:
            raise storeerr.too_old(self._since, err.compacted) from None
        except st.WatcherOverflowError:
            await self.aclose()
            raise StopAsyncIteration from None
        shown = self._shown
        return [out for event in stored if (out := shown(event)) is not None]

    def deliver(self, sink: Callable[[WatchEvent], bool]) -> bool:
        """Hand the watch's live events, filtered, straight to ``sink`` while nothing waits for
        ``batch`` (see EventQueue.deliver); False, and nothing done, while events it has read
        (the objects it starts with) are still to be taken."""
        if self._initial or self._pending:
            return False
        self._sink = sink
        self._stream.deliver(self._offer)
        return True

    def _shown(self, event: st.WatchEvent) -> WatchEvent | None:
        """What the watch shows of a storage event: None for another object's (when watching
        one by name) or one the registry's filter drops."""
        if self._key is not None and event.kv.key != self._key:
            return None
        return self._filter(event)

    def _offer(self, event: st.WatchEvent) -> bool:
        """The stream's sink: an event the watch does not show is taken (dropped) here."""
        out = self._shown(event)
        return True if out is None else self._sink(out)  # type: ignore[misc]

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> WatchEvent:
        while not self._pending:
            self._pending = await self.batch(None)
        return self._pending.pop(0)

    async def aclose(self) -> None:
        with storeerr.interpreted(f"watch {self._plural}"):  # closing may fail as reading does
            await self._stream.aclose()  # type: ignore[attr-defined]


def in_batches(events: AsyncIterator[WatchEvent]) -> EventStream | EventQueue:
    """A Watcher's events with ``batch``: a Store's as they are, any other's read by a task of
    their own (bounded like a storage watch)."""
    return events if isinstance(events, EventStream) else batched(events)  # type: ignore[arg-type]


class _FinishDeletion(Exception):
    """Raised inside an update when the last finalizer of a deleting object goes: delete instead."""

    def __init__(self, kv: st.KeyValue) -> None:
        self.kv = kv


class Store(Served):
    """Create, read, update, delete and watch one resource (or, wrapped by the object serving
    it, one of its subresources): it has every resource capability of :mod:`~kplane.core.registry.rest`."""

    def __init__(
        self,
        resource: ResourceType,
        strategy: Strategy,
        storage: st.Storage,
        admission: AdmissionChain,
        *,
        subresource: str = "",
    ) -> None:
        self.resource = resource
        self.strategy = strategy
        self.storage = storage
        self.admission = admission
        self.subresource = subresource
        self.prefix = resource_prefix(resource.group, resource.plural)
        self.field_paths = dict(strategy.selectable_fields or META_FIELDS)
        self.verbs = strategy.verbs
        self.kind, self.schema, self.protobuf = strategy.response_kind, strategy.response_schema, strategy.response_protobuf
        self.returns_deleted = strategy.return_deleted_object

    # -- keys and errors --------------------------------------------------------------------
    def key(self, namespace: str, name: str) -> str:
        return f"{self.prefix}{namespace}/{name}" if self.resource.namespaced else self.prefix + name

    def _list_prefix(self, namespace: str) -> str:
        return f"{self.prefix}{namespace}/" if self.resource.namespaced and namespace else self.prefix

    def _not_found(self, name: str) -> errors.APIError:
        return errors.not_found(self.resource.plural, self.resource.group, name)

    def _conflict(self, name: str, why: str = errors.OBJECT_MODIFIED) -> errors.APIError:
        return errors.conflict(self.resource.plural, self.resource.group, name, why)

    def _invalid(self, name: str, problems: list[errors.FieldError]) -> errors.APIError:
        return errors.invalid_object(self.resource.kind, self.resource.group, name, problems)

    # -- reads ------------------------------------------------------------------------------
    @storeerr.interpreting
    async def get(self, ctx: RequestContext, name: str) -> StoredObject:
        key = self.key(ctx.namespace, name)
        kv = await (self.storage.get_recent(key) if ctx.any_recent else self.storage.get(key))
        if kv is None:
            raise self._not_found(name)
        return StoredObject.from_kv(kv)

    @storeerr.interpreting
    async def get_internal(self, namespace: str, name: str) -> Any | None:
        """The internal object, or None: for admission plugins and other stores."""
        kv = await self.storage.get(self.key(namespace, name))
        if kv is None:
            return None
        return self._internal(kv)

    @storeerr.interpreting
    async def get_recent(self, namespace: str, name: str) -> dict[str, Any] | None:
        """The stored wire form (the storage version), or None, as of a recent revision: the
        watch cache answers from memory what it holds. What admission reads of a Namespace or
        a ServiceAccount on every create, as kube's plugins read their informers' listers."""
        kv = await self.storage.get_recent(self.key(namespace, name))
        return None if kv is None else StoredObject.from_kv(kv).obj

    def _internal(self, kv: st.KeyValue) -> Any:
        """A new internal object from a stored value, the caller's to change."""
        return self.resource.internalize(StoredObject.from_kv(kv).obj, self.resource.storage_version)

    async def _as_written_in(self, ctx: RequestContext, kv: st.KeyValue) -> tuple[dict[str, Any], str]:
        """A stored object as the wire form an update starts from, and its version: in the
        request's version when the kind converts asynchronously (a conversion webhook), so its
        strategy compares the old and new objects in one version, as Kubernetes decodes the old
        object into the request's version; else as stored."""
        rt, wire = self.resource, StoredObject.from_kv(kv).obj
        version = ctx.version if ctx.version in rt.versions else rt.storage_version
        if rt.converts_async(version):
            return (await rt.convert_many([wire], version))[0], version
        return wire, rt.storage_version

    def matches(self, obj: dict[str, Any], labels: LabelSelectorExpr | None, fields: FieldSelectorExpr | None) -> bool:
        if labels is not None and not labels.matches(obj["metadata"].get("labels")):
            return False
        if fields is not None and not fields.matches(field_values(obj, self.field_paths)):
            return False
        return True

    def check_field_selector(self, fields: FieldSelectorExpr | None) -> None:
        if fields is not None:
            fields.validate(self.field_paths, own_labels=bool(self.strategy.selectable_fields))

    @storeerr.interpreting
    async def list(self, ctx: RequestContext, opts: ListOptions) -> ListPage:
        self.check_field_selector(opts.field_selector)
        revision, start_after, min_revision = await self._list_start(ctx, opts)
        name = exact_name(opts.field_selector) if opts.field_selector else None
        if name is not None and (ctx.namespace or not self.resource.namespaced):
            return await self._list_one(ctx, opts, name, revision, min_revision)
        prefix = self._list_prefix(ctx.namespace)
        filtered = opts.label_selector is not None or opts.field_selector is not None
        items: list[StoredObject] = []
        while True:
            want = opts.limit - len(items) if opts.limit else 0
            try:
                page = await self.storage.list(prefix, revision=revision, limit=want, start_after=start_after,
                                               min_revision=min_revision)
            except st.CompactedError:
                raise storeerr.continue_expired() if opts.continue_ else storeerr.too_old(revision) from None
            except st.FutureRevisionError as err:
                raise storeerr.too_large(err) from None
            revision, min_revision = page.revision, None  # later pages: the first one's snapshot
            for kv in page.items:
                # Matched against a decoded copy that is dropped at once: thousands of decoded
                # objects kept alive until the answer is written cost more in garbage collection
                # than decoding again the few that need it (Tables, other versions).
                if not filtered or self.matches(StoredObject.from_kv(kv).obj, opts.label_selector, opts.field_selector):
                    items.append(StoredObject.from_kv(kv))
            if page.items:
                start_after = page.items[-1].key
            if not page.more or not opts.limit or len(items) >= opts.limit:
                break
        token = _encode_continue(revision, start_after[len(prefix):]) if opts.limit and page.more else ""
        return ListPage(items, str(revision), token)

    async def _list_one(self, ctx: RequestContext, opts: ListOptions, name: str, revision: int,
                        min_revision: int | None) -> ListPage:
        """``fieldSelector=metadata.name=X`` in a namespace: one key read, not a scan."""
        if revision or min_revision:
            try:
                page = await self.storage.list(self.key(ctx.namespace, name), revision=revision, limit=1,
                                               min_revision=min_revision)
            except st.CompactedError:
                raise storeerr.too_old(revision) from None
            except st.FutureRevisionError as err:
                raise storeerr.too_large(err) from None
            revision = page.revision
            kv = page.items[0] if page.items and page.items[0].key == self.key(ctx.namespace, name) else None
        else:
            kv = await self.storage.get(self.key(ctx.namespace, name))
            revision = await self.storage.current_revision()
        items = []
        if kv is not None:
            stored = StoredObject.from_kv(kv)
            if self.matches(stored.obj, opts.label_selector, opts.field_selector):
                items.append(stored)
        return ListPage(items, str(revision))

    async def _list_start(self, ctx: RequestContext, opts: ListOptions) -> tuple[int, str, int | None]:
        """From the options: the snapshot revision (0: latest), the key to continue after, and the
        oldest revision the answer may come from (None: it must be a consistent, latest read).

        As kube-apiserver: ``resourceVersion`` unset is a consistent read, "0" is whatever the
        watch cache holds, "N" (NotOlderThan) anything at least as new as N, Exact exactly N.
        """
        problems = []
        if opts.resource_version_match and not opts.resource_version:
            problems.append(errors.forbidden("resourceVersionMatch", "resourceVersionMatch is forbidden unless resourceVersion is provided"))
        if opts.continue_ and opts.resource_version and opts.resource_version != "0":
            problems.append(errors.forbidden("resourceVersion", "specifying resource version is not allowed when using continue"))
        if opts.resource_version_match not in ("", "Exact", "NotOlderThan"):
            problems.append(errors.not_supported("resourceVersionMatch", opts.resource_version_match, ["Exact", "NotOlderThan"]))
        if opts.resource_version_match == "Exact" and opts.resource_version == "0":
            problems.append(errors.forbidden("resourceVersionMatch", 'resourceVersionMatch "exact" is forbidden for resourceVersion "0"'))
        if problems:
            raise errors.invalid_object("ListOptions", "meta.k8s.io", "", problems)
        if opts.continue_:
            return *_decode_continue(opts.continue_, self._list_prefix(ctx.namespace)), None
        if not opts.resource_version:
            return 0, "", None
        revision = _parse_rv(opts.resource_version)
        if opts.resource_version_match == "Exact":
            return revision, "", None
        # NotOlderThan: the storage raises FutureRevisionError for a revision it has not reached
        # (the watch cache first waits for it a while, as kube-apiserver's cacher does).
        return 0, "", revision

    # -- writes -----------------------------------------------------------------------------
    def _writes_to(self, ctx: RequestContext) -> st.Storage:
        """Where a write goes: the storage, or for a dry run a :class:`DryRunStorage` over it,
        which checks and answers writes as the storage would but keeps none."""
        return DryRunStorage(self.storage) if ctx.dry_run else self.storage

    @storeerr.interpreting
    async def create(self, ctx: RequestContext, obj: Any) -> StoredObject:
        meta = obj.metadata
        storage = self._writes_to(ctx)
        self._check_namespace(ctx, obj)
        if meta.resource_version:
            raise errors.bad_request("resourceVersion should not be set on objects to be created")
        meta.uid = rand.new_uid()
        meta.creation_timestamp = clock.now()
        meta.deletion_timestamp = meta.deletion_grace_period_seconds = meta.self_link = None
        obj = await self.admission.mutate(self._admission(Operation.CREATE, ctx, obj, None))
        meta = obj.metadata
        generated = not meta.name and bool(meta.generate_name)
        for _ in range(GENERATE_NAME_ATTEMPTS if generated else 1):
            if generated:
                meta.name = self.strategy.generate_name(meta.generate_name)
            wire = await self._prepare_create(ctx, obj)
            key = self.key(meta.namespace or "", meta.name)
            try:
                kv = await storage.create(key, storage_bytes(wire))
            except st.KeyExistsError:
                continue
            return StoredObject.from_wire(wire, kv.mod_revision)
        error = errors.already_exists(self.resource.plural, self.resource.group, meta.name)
        if generated:  # NewGenerateNameConflict
            error.message += ", the server was not able to generate a unique name for the object"
            error.details["retryAfterSeconds"] = 1
        raise error

    async def _run(self, validation: Callable[..., list[errors.FieldError]], *args: Any) -> list[errors.FieldError]:
        """A strategy's validation, in a worker thread when it says so (``validates_in_thread``)."""
        if self.strategy.validates_in_thread:
            return await asyncio.to_thread(validation, *args)
        return validation(*args)

    async def _prepare_create(self, ctx: RequestContext, obj: Any) -> dict[str, Any]:
        """``rest.BeforeCreate`` and validating admission; returns the storage-version wire form."""
        meta = obj.metadata
        self.strategy.prepare_for_create(ctx, obj)
        problems = await self._run(self.strategy.validate, ctx, obj) + validate_object_meta(
            meta, namespaced=self.resource.namespaced, name_validator=self.strategy.name_validator
        )
        if problems:
            raise self._invalid(meta.name or meta.generate_name or "", problems)
        ctx.warnings += self.strategy.warnings_on_create(ctx, obj)
        self.strategy.canonicalize(obj)
        await self.admission.validate(self._admission(Operation.CREATE, ctx, obj, None))
        return await self.resource.storage_form(obj)

    @storeerr.interpreting
    async def update(
        self, ctx: RequestContext, name: str, updater: UpdateFunc, *, force_allow_create: bool = False
    ) -> tuple[StoredObject, bool]:
        """Apply ``updater`` (old internal object -> new one) with compare-and-swap, retried on
        conflicts that the request itself did not pin. Returns the stored object and whether it
        was created."""
        key = self.key(ctx.namespace, name)
        storage = self._writes_to(ctx)
        while True:  # a retry only follows another writer's success, so this ends
            kv = await storage.get(key)
            if kv is None:
                if not (self.strategy.allow_create_on_update or force_allow_create) or self.subresource:
                    raise self._not_found(name)
                if ctx.authorize_create is not None:
                    await ctx.authorize_create()  # a write that creates must be allowed to create
                obj = await updater(None)
                self._check_name(obj, name)
                obj.metadata.resource_version = None
                try:
                    return await self.create(ctx, obj), True
                except errors.APIError as err:
                    if err.reason == errors.StatusReason.ALREADY_EXISTS:
                        continue  # lost a race with another creator: update what it made
                    raise
            try:
                result = await self._update_existing(ctx, storage, name, kv, updater)
            except _FinishDeletion as done:
                result = await self._finish_deletion(storage, done.kv)
            if result is not None:
                return result, False

    async def _update_existing(
        self, ctx: RequestContext, storage: st.Storage, name: str, kv: st.KeyValue, updater: UpdateFunc
    ) -> StoredObject | None:
        """One attempt; None when another writer won the race and the caller should retry."""
        rt = self.resource
        wire, version = await self._as_written_in(ctx, kv)
        old = rt.internalize(wire, version)
        obj = await updater(rt.internalize(wire, version))
        self._check_name(obj, name)
        self._check_namespace(ctx, obj)
        meta, old_meta = obj.metadata, old.metadata
        # resourceVersion "0" is none at all, as kube-apiserver's versioner parses it (ParseUint)
        pinned = meta.resource_version not in (None, "", "0")
        if not pinned and not self.strategy.allow_unconditional_update:
            # kube-apiserver names the resource here, not the kind (its TODO in Store.Update)
            raise errors.invalid_object(self.resource.plural, self.resource.group, name, [
                errors.invalid("metadata.resourceVersion", errors.Uint64(0), "must be specified for an update")])
        if pinned and meta.resource_version != old_meta.resource_version:
            raise self._conflict(name)
        if meta.uid and meta.uid != old_meta.uid:
            raise self._conflict(name, f"Precondition failed: UID in precondition: {meta.uid}, UID in object meta: {old_meta.uid}")
        meta.uid = old_meta.uid
        meta.resource_version = old_meta.resource_version
        meta.generation = old_meta.generation
        meta.creation_timestamp = old_meta.creation_timestamp
        meta.deletion_timestamp = old_meta.deletion_timestamp
        meta.deletion_grace_period_seconds = old_meta.deletion_grace_period_seconds
        meta.self_link = None
        obj = await self.admission.mutate(self._admission(Operation.UPDATE, ctx, obj, old))
        meta = obj.metadata
        self.strategy.prepare_for_update(ctx, obj, old)
        problems = validate_object_meta_update(meta, old_meta) + await self._run(self.strategy.validate_update, ctx, obj, old)
        if problems:
            raise self._invalid(name, problems)
        ctx.warnings += self.strategy.warnings_on_update(ctx, obj, old)
        self.strategy.canonicalize(obj)
        await self.admission.validate(self._admission(Operation.UPDATE, ctx, obj, old))
        wire = await rt.storage_form(obj)
        value = storage_bytes(wire)
        if value == kv.value and not kv.stale:  # a no-op keeps the resourceVersion (a stale one re-encrypts)
            return StoredObject.from_kv(kv)
        if _deleted_by_update(old_meta, meta) and not self.strategy.prepare_for_delete(ctx, obj):
            raise _FinishDeletion(kv)
        try:
            new_kv = await storage.update(kv.key, value, expected_revision=kv.mod_revision)
        except (st.ConflictError, st.KeyNotFoundError):
            return None  # the retry re-runs the updater on the fresh object; a pinned RV then conflicts
        return StoredObject.from_wire(wire, new_kv.mod_revision)

    @storeerr.interpreting
    async def delete(self, ctx: RequestContext, name: str, opts: DeleteOptions) -> tuple[StoredObject, bool]:
        """Delete, or start deleting: an object with finalizers, or one its strategy gives a grace
        period (:meth:`Strategy.grace_period`), is only marked with a deletionTimestamp and stays
        until they are done. Returns the object and whether it is gone (``registry.Store.Delete``).
        ``opts`` are valid (:meth:`DeleteOptions.check`: the HTTP layer checks a request's once)."""
        key = self.key(ctx.namespace, name)
        storage = self._writes_to(ctx)
        marked: StoredObject | None = None  # what this call wrote, once it marked the object
        while True:  # a retry only follows another writer's success, so this ends
            kv = await storage.get(key)
            if kv is None:
                if marked is not None:  # removed meanwhile by another deleter: done all the same
                    return marked, True
                raise self._not_found(name)
            obj = self._internal(kv)
            self._check_preconditions(name, obj, opts)
            await self.admission.validate(self._admission(Operation.DELETE, ctx, None, obj))
            graceful, pending = self._before_delete(ctx, obj, opts)
            if pending:  # already terminating within the grace asked for: nothing changes
                return StoredObject.from_kv(kv), False
            meta = obj.metadata
            meta.finalizers = _gc_finalizers(meta.finalizers, opts.policy)
            keep = self.strategy.prepare_for_delete(ctx, obj) or bool(meta.finalizers)
            if not graceful and not keep:
                result = await self._finish_deletion(storage, kv)
                if result is not None:
                    return result, True
                continue
            if not graceful:
                _mark_as_deleting(meta)
            wire = await self.resource.storage_form(obj)
            value = storage_bytes(wire)
            if value == kv.value and not kv.stale:
                written, marked = kv, StoredObject.from_wire(wire, kv.mod_revision)
            else:
                try:
                    written = await storage.update(key, value, expected_revision=kv.mod_revision)
                except (st.ConflictError, st.KeyNotFoundError):
                    continue
                marked = StoredObject.from_wire(wire, written.mod_revision)
                if opts.preconditions.resource_version is not None:  # a retry must not trip on this write
                    written_rv = marked.obj["metadata"]["resourceVersion"]
                    opts = dataclasses.replace(opts, preconditions=dataclasses.replace(opts.preconditions, resource_version=written_rv))
            if keep or meta.deletion_grace_period_seconds:
                return marked, False
            result = await self._finish_deletion(storage, written)
            if result is not None:
                return result, True

    def _before_delete(self, ctx: RequestContext, obj: Any, opts: DeleteOptions) -> tuple[bool, bool]:
        """``rest.BeforeDelete``: whether to delete gracefully (the deletionTimestamp and
        deletionGracePeriodSeconds are set on ``obj`` then), and whether a graceful deletion is
        pending already, which a later delete may only shorten."""
        meta = obj.metadata
        requested = opts.grace_period_seconds
        if requested is not None and requested < 0:  # negative means the shortest graceful wait
            requested = 1
        now = datetime.now(UTC)
        if meta.deletion_timestamp is not None:
            current = meta.deletion_grace_period_seconds
            if not current:  # marked to wait for finalizers only, or to go now
                return False, False
            if requested is None or requested >= current:
                return False, True
            moment = clock.parse(meta.deletion_timestamp) - _grace(current) + _grace(requested)
            if moment < now:  # already past the shorter grace: now, and still graceful unless 0
                moment, requested = now, min(requested, 1)
            meta.deletion_timestamp, meta.deletion_grace_period_seconds = clock.at(moment), requested
            return True, False
        period = self.strategy.grace_period(ctx, obj, requested)
        if period is None:
            return False, False
        meta.deletion_timestamp = clock.at(now + _grace(period))
        meta.deletion_grace_period_seconds = period
        if meta.generation:
            meta.generation += 1
        return True, False

    async def _finish_deletion(self, storage: st.Storage, kv: st.KeyValue) -> StoredObject | None:
        """Remove the key if it is still at ``kv``'s revision; None when it changed meanwhile."""
        try:
            gone = await storage.delete(kv.key, expected_revision=kv.mod_revision)
        except (st.ConflictError, st.KeyNotFoundError):
            return None
        return StoredObject.from_kv(gone)

    @storeerr.interpreting
    async def delete_collection(self, ctx: RequestContext, list_opts: ListOptions, opts: DeleteOptions) -> ListPage:
        """Delete every match, one by one (not atomic, as in Kubernetes); the answer is the list
        as it was read before the deletes, as ``Store.DeleteCollection`` answers (its
        resourceVersion, and with ``limit`` its continue token: only that page is deleted)."""
        page = await self.list(ctx, list_opts)
        for item in page.items:
            meta = item.obj["metadata"]
            item_ctx = dataclasses.replace(ctx, namespace=meta.get("namespace", ""), name=meta["name"])
            try:
                await self.delete(item_ctx, meta["name"], opts)
            except errors.APIError as err:
                if err.code != 404:
                    raise
        return page

    def _check_preconditions(self, name: str, obj: Any, opts: DeleteOptions) -> None:
        """Worded as ``rest.BeforeDelete`` words them (on the kind, as Kubernetes names it there)."""
        meta, kind, wanted = obj.metadata, self.resource.kind, opts.preconditions
        if wanted.uid is not None and wanted.uid != meta.uid:
            raise errors.conflict(kind, self.resource.group, name,
                                  f"the UID in the precondition ({wanted.uid}) does not match the UID in record ({meta.uid}). "
                                  "The object might have been deleted and then recreated")
        if wanted.resource_version is not None and wanted.resource_version != meta.resource_version:
            raise errors.conflict(kind, self.resource.group, name,
                                  f"the ResourceVersion in the precondition ({wanted.resource_version}) does not match "
                                  f"the ResourceVersion in record ({meta.resource_version}). The object might have been modified")

    def _check_name(self, obj: Any, name: str) -> None:
        if obj.metadata.name != name:
            raise errors.bad_request("the name of the object (%s) does not match the name on the URL (%s)" % (obj.metadata.name, name))

    def _check_namespace(self, ctx: RequestContext, obj: Any) -> None:
        meta = obj.metadata
        if not self.resource.namespaced:
            meta.namespace = None
            return
        if meta.namespace and meta.namespace != ctx.namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
        meta.namespace = ctx.namespace

    def _admission(self, op: Operation, ctx: RequestContext, obj: Any, old: Any) -> AdmissionRequest:
        name = (obj or old).metadata.name or ""
        return AdmissionRequest(op, self.resource, self.subresource, ctx.namespace, name, obj, old, ctx)

    # -- watch ------------------------------------------------------------------------------
    @storeerr.interpreting
    async def watch(self, ctx: RequestContext, opts: WatchOptions) -> AsyncIterator[WatchEvent]:
        """Events after ``resourceVersion``; with "" or "0", the current objects first as ADDED.

        Raises a 410 APIError before the first event when the version is compacted, and a 503 or
        504 one (:mod:`~kplane.core.registry.storeerr`) when storage fails, mid-stream too.
        """
        self.check_field_selector(opts.field_selector)
        labels, fields = opts.label_selector, opts.field_selector
        prefix = self._list_prefix(ctx.namespace)
        name = exact_name(fields) if fields else None
        if name is not None and (ctx.namespace or not self.resource.namespaced):
            prefix = self.key(ctx.namespace, name)
        initial: list[StoredObject] = []
        if opts.resource_version in ("", "0"):  # "0": the watch cache's current state will do
            page = await self.storage.list(prefix, min_revision=0 if opts.resource_version == "0" else None)
            initial = [o for o in map(StoredObject.from_kv, page.items) if self.matches(o.obj, labels, fields)]
            since = page.revision
        else:
            since = _parse_rv(opts.resource_version)
        filter_ = functools.partial(self._filter, labels=labels, fields=fields)
        stream = self.storage.watch(prefix, from_revision=since)
        return EventStream(self.resource.plural, since, initial, batched(stream), prefix, filter_)

    def _filter(self, event: st.WatchEvent, *, labels: LabelSelectorExpr | None, fields: FieldSelectorExpr | None) -> WatchEvent | None:
        """Selectors turn MODIFIED into ADDED/DELETED when an object enters or leaves the set."""
        stored = event.memo.get(StoredObject)
        if stored is None:  # decoded once per event, however many watchers share it
            stored = event.memo[StoredObject] = StoredObject.from_kv(event.kv)
        if labels is None and fields is None:  # the same for every watcher without selectors
            shared = event.memo.get(WatchEvent)
            if shared is None:
                shared = event.memo[WatchEvent] = WatchEvent(event.type.value, stored, event.memo)
            return shared
        now = self.matches(stored.obj, labels, fields)
        if event.type == st.EventType.ADDED:
            return WatchEvent("ADDED", stored, event.memo) if now else None
        if event.type == st.EventType.DELETED:
            return WatchEvent("DELETED", stored, event.memo) if now else None
        old = StoredObject(event.prev_value, event.revision) if event.prev_value is not None else None
        before = old is not None and self.matches(old.obj, labels, fields)
        if now:
            return WatchEvent("MODIFIED" if before else "ADDED", stored, event.memo)
        if before:  # leaving the selection: DELETED with the last matching state, for everyone alike
            return WatchEvent("DELETED", old, event.memo)  # type: ignore[arg-type]
        return None


def _deleted_by_update(old_meta: Any, meta: Any) -> bool:
    """``ShouldDeleteDuringUpdate``: an update that takes the last finalizer off an object marked
    for deletion finishes it, unless the object is still in a grace period (a terminating pod
    whose kubelet reports its status)."""
    return bool(old_meta.deletion_timestamp) and not meta.finalizers and not old_meta.deletion_grace_period_seconds


def _mark_as_deleting(meta: Any) -> None:
    """``markAsDeleting``: deleting now (or sooner than a pending grace allowed), waiting only for
    finalizers; the first mark bumps a set generation, as the spec's meaning changed."""
    if meta.deletion_timestamp is None and meta.generation:
        meta.generation += 1
    now = clock.now()
    if meta.deletion_timestamp is None or clock.parse(meta.deletion_timestamp) > clock.parse(now):
        meta.deletion_timestamp = now
    meta.deletion_grace_period_seconds = 0


def _gc_finalizers(finalizers: list[str] | None, policy: str) -> list[str] | None:
    """The finalizers that ask the garbage collector for ``policy``: ``orphan`` for Orphan,
    ``foregroundDeletion`` for Foreground, neither for Background; no policy keeps what is there."""
    wanted = {"Orphan": FINALIZER_ORPHAN, "Foreground": FINALIZER_FOREGROUND}.get(policy)
    if not policy:
        return finalizers
    kept = [f for f in finalizers or () if f not in (FINALIZER_ORPHAN, FINALIZER_FOREGROUND)]
    if wanted:
        kept.append(wanted)
    return kept or None


def _parse_rv(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise errors.bad_request(f'invalid resource version "{text}"')
    return value


def _encode_continue(revision: int, start_after: str) -> str:
    raw = orjson.dumps({"v": "meta.k8s.io/v1", "rv": revision, "start": start_after})
    return base64.urlsafe_b64encode(raw).decode().rstrip("=")


def _decode_continue(token: str, prefix: str) -> tuple[int, str]:
    try:
        data = orjson.loads(base64.urlsafe_b64decode(token + "=" * (-len(token) % 4)))
        revision, start = int(data["rv"]), str(data["start"])
    except (binascii.Error, ValueError, KeyError, TypeError, orjson.JSONDecodeError):
        raise errors.bad_request("continue key is not valid: incorrect encoded start resourceVersion (version meta.k8s.io/v1)") from None
    if revision <= 0 or ".." in start.split("/"):
        raise errors.bad_request("continue key is not valid: the resource version is invalid")
    return revision, prefix + start


def _grace(seconds: int) -> timedelta:
    """A grace period as a timedelta, capped: a timedelta holds less than an int64 of seconds."""
    return timedelta(seconds=min(seconds, MAX_GRACE_SECONDS))
