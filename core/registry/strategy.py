"""The strategy protocol: the small per-resource class that gives a kind its behaviour.

The generic :class:`~kplane.core.registry.store.Store` owns everything common to all kinds (system
metadata, resourceVersion, concurrency, finalizers, dry run); a strategy says only what differs,
through the hooks of k8s.io/apiserver's ``RESTCreateStrategy``/``RESTUpdateStrategy``. Every hook
has a sensible default, so a minimal strategy is a subclass with nothing in it.

Strategies work on internal objects (dataclasses with a ``metadata`` ObjectMeta).
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol, runtime_checkable

from kplane.core.authn.user import ANONYMOUS_USER, UserInfo
from kplane.core.meta import rand
from kplane.core.meta.errors import FieldError
from kplane.core.meta.selectors import FieldPath
from kplane.core.meta.validation import is_dns1123_subdomain
from kplane.core.registry.printing import DEFAULT_COLUMNS, Column
from kplane.core.registry.rest import VERBS
from kplane.core.runtime.gvk import GroupVersionKind
from kplane.core.runtime.protobuf import Message

#: What a resource supports unless its strategy says otherwise (kube-apiserver's generic Store).
RESOURCE_VERBS = frozenset(VERBS)
#: What a subresource that reads and writes its parent supports (a ``StatusREST``).
SUBRESOURCE_VERBS = frozenset({"get", "patch", "update"})

@dataclass(slots=True)
class RequestContext:
    """What a strategy may know about the request beyond the object (``genericapirequest``)."""

    group: str = ""
    version: str = ""
    resource: str = ""
    subresource: str = ""
    namespace: str = ""
    name: str = ""
    dry_run: bool = False
    field_manager: str = ""
    #: Who asks (``genericapirequest.UserFrom``): the HTTP layer sets the user the request acts as;
    #: a context made in code for an internal write names its user itself.
    user: UserInfo = ANONYMOUS_USER
    #: Whether that user may also create what an update or patch would create (raises a 403):
    #: the HTTP layer's authorizer, asked only then; None for writes made in code.
    authorize_create: Callable[[], Awaitable[None]] | None = None
    warnings: list[str] = field(default_factory=list)  # collected and sent as Warning headers
    #: Audit annotations admission adds (``key: value``), in the request's audit event.
    audit_annotations: dict[str, str] = field(default_factory=dict)
    #: How the HTTP layer makes the internal object of a write from its wire form in the storage
    #: version (``old``: the stored object's), recording the write in managedFields. A subresource
    #: of a kind of its own that writes its parent (scale) decodes the parent's new state with it.
    decode: Callable[[dict[str, Any], dict[str, Any]], Any] | None = None
    #: A GET's ``?resourceVersion=0``: any recent state will do, which the watch cache answers
    #: from memory (kube's cacher.Get); otherwise the GET reads the storage.
    any_recent: bool = False


class Strategy:
    """Defaults for every hook; override what your kind needs."""

    #: PUT of a missing object creates it.
    allow_create_on_update: bool = False
    #: PUT without metadata.resourceVersion overwrites (True) or is refused with 422 (False).
    allow_unconditional_update: bool = True
    #: The field selector labels of a kind with labels of its own, every one (metadata.name and
    #: metadata.namespace too, where the kind takes them), as its Go field label conversion
    #: function lists them; each maps to the JSON path it reads in the storage version, or to a
    #: function of the object, e.g. ``{"metadata.name": "metadata.name", "status.phase":
    #: "status.phase"}``. Empty: metadata.name and metadata.namespace only, and another label is
    #: refused with the message of ``DefaultMetaV1FieldSelectorConversion``.
    selectable_fields: Mapping[str, FieldPath] = {}
    #: Validates metadata.name; returns problem descriptions (k8s ``ValidateNameFunc``).
    name_validator: Callable[[str], list[str]] = staticmethod(is_dns1123_subdomain)
    #: Top-level or dotted paths this strategy overwrites on a write (``GetResetFields``), so no
    #: field manager owns them; None: ``status`` on a resource, ``spec`` on its status.
    reset_fields: tuple[str, ...] | None = None
    #: A finished DELETE answers with the deleted object (as for Pods) instead of a Status.
    return_deleted_object: bool = False
    #: Warning headers answering every request to the resource in the version this strategy is
    #: registered for (a deprecated version's, see ``Registry.add_strategy(version=)``).
    version_warnings: tuple[str, ...] = ()
    #: What ``kubectl get`` shows (see :mod:`kplane.core.registry.printing`).
    columns: Sequence[Column] = DEFAULT_COLUMNS
    #: The Kubernetes verbs clients may use on this resource or subresource, of those the object
    #: serving it has the capabilities for (:mod:`kplane.core.registry.rest`): the router answers
    #: any other with 405 and discovery lists exactly these. None: all of them, which is
    #: :data:`RESOURCE_VERBS` for a resource; for a subresource ``create`` when it is a
    #: :class:`PostSubresource`, else :data:`SUBRESOURCE_VERBS`.
    verbs: frozenset[str] | None = None
    #: The kind a subresource takes or answers when it is not its parent's (``pods/binding``
    #: takes a core/v1 Binding); discovery's ``kind`` / ``responseKind``.
    response_kind: GroupVersionKind | None = None
    #: The schema of ``response_kind``, for OpenAPI's request and response bodies.
    response_schema: type | None = None
    #: The protobuf table of ``response_kind`` (see :mod:`kplane.core.runtime.protobuf`), so bodies of
    #: that kind are accepted as ``application/vnd.kubernetes.protobuf`` too.
    response_protobuf: Message | None = None

    #: ``validate`` and ``validate_update`` can take long (a CustomResourceDefinition's schema of
    #: thousands of nodes) and read nothing but their arguments: the Store runs them in a worker
    #: thread, so the event loop keeps serving other requests meanwhile.
    validates_in_thread: bool = False

    def prepare_for_create(self, ctx: RequestContext, obj: Any) -> None:
        """Normalise a new object before validation (e.g. clear status, set generation 1)."""

    def validate(self, ctx: RequestContext, obj: Any) -> list[FieldError]:
        """Field errors of a new object; ObjectMeta is validated by the Store. Must not mutate."""
        return []

    def warnings_on_create(self, ctx: RequestContext, obj: Any) -> list[str]:
        return []

    def canonicalize(self, obj: Any) -> None:
        """Last normalisation before the object is stored."""

    def prepare_for_update(self, ctx: RequestContext, obj: Any, old: Any) -> None:
        """Normalise an update (e.g. keep old status, bump generation when the spec changed)."""

    def validate_update(self, ctx: RequestContext, obj: Any, old: Any) -> list[FieldError]:
        """Field errors of an update, e.g. immutable fields. Must not mutate."""
        return []

    def warnings_on_update(self, ctx: RequestContext, obj: Any, old: Any) -> list[str]:
        return []

    def prepare_for_delete(self, ctx: RequestContext, obj: Any) -> bool:
        """Called as deletion starts; return True to keep the object (marked as deleting) until
        something else finishes it, as namespaces do. Finalizers keep it regardless."""
        return False

    def grace_period(self, ctx: RequestContext, obj: Any, requested: int | None) -> int | None:
        """``CheckGracefulDelete``: the seconds ``obj`` is given to terminate before it is removed
        (``requested``: the DeleteOptions' gracePeriodSeconds, None when not set), or None when
        this kind is removed at once. The Store then marks the object with a deletionTimestamp
        that far ahead and leaves the removal to whoever terminates it (for Pods, the kubelet)."""
        return None

    def generate_name(self, base: str) -> str:
        """A name for ``metadata.generateName``: the prefix plus five random characters."""
        return base + rand.random_string(5)


@runtime_checkable
class PostSubresource(Protocol):
    """A subresource strategy that takes POST (verb ``create``) instead of GET/PUT/PATCH, as
    ``pods/binding`` does: it turns the posted object (a kind of its own) into the parent's next
    state, or raises. The registry serves it with a
    :class:`~kplane.core.registry.subresources.PostREST`."""

    def apply_post(self, ctx: RequestContext, body: Any, obj: Any) -> Any: ...
