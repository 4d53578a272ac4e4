"""The admission chain: mutating plugins, then validating plugins, on every write.

Plugins are functions of an :class:`AdmissionRequest`. A mutating plugin may change
``request.obj``, in place or by replacing it (the write goes on with ``request.obj``); a validating plugin must not, and rejects a request by raising an
:class:`~kplane.core.meta.errors.APIError` (usually :func:`deny`, a 403 as in Kubernetes).
Functions may be plain or ``async``.
"""

from __future__ import annotations

import enum
import inspect
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kplane.core.meta import errors

if TYPE_CHECKING:
    from kplane.core.registry.strategy import RequestContext
    from kplane.core.runtime.scheme import ResourceType


class Operation(str, enum.Enum):
    """What a write does to its object, as admission sees it (``admission.Operation``)."""

    CREATE = "CREATE"
    UPDATE = "UPDATE"
    DELETE = "DELETE"
    #: A connect subresource (``pods/exec``, ``attach``, ``portforward``, the proxies): ``obj`` is
    #: its options as a wire dict (``PodExecOptions``), ``old`` None. Only the plugins added with
    #: ``connect=True`` see these.
    CONNECT = "CONNECT"


@dataclass(slots=True)
class AdmissionRequest:
    """One write, as every admission plugin is handed it: what, where, the new and old objects."""

    operation: Operation
    resource: ResourceType
    subresource: str
    namespace: str
    name: str
    obj: Any  # the internal object being written (None for DELETE)
    old: Any  # the stored internal object (None for CREATE)
    ctx: RequestContext

    @property
    def dry_run(self) -> bool:
        return self.ctx.dry_run


AdmissionFunc = Callable[[AdmissionRequest], Awaitable[None] | None]


def deny(request: AdmissionRequest, why: str) -> errors.APIError:
    """The 403 Forbidden an admission plugin raises to reject a request."""
    rt = request.resource
    return errors.forbidden_error(rt.plural, rt.group, request.name, why)


#: Plugins that run after every other, in this order, whoever registers them first: the
#: cluster's own extensions (admissionregistration.k8s.io's policies and webhooks) see what the
#: plugins made of a request, and quota counts what all of them let through (the tail of
#: kube-apiserver's ``AllOrderedPlugins``).
LAST = ("MutatingAdmissionPolicy", "MutatingAdmissionWebhook", "ValidatingAdmissionPolicy",
        "ValidatingAdmissionWebhook", "ResourceQuota")


def _add(plugins: list[tuple[str, AdmissionFunc]], name: str, func: AdmissionFunc) -> None:
    plugins.append((name, func))
    plugins.sort(key=lambda entry: LAST.index(entry[0]) + 1 if entry[0] in LAST else 0)  # stable


class AdmissionChain:
    """Ordered admission plugins: registration order within each phase, except that the
    plugins named in :data:`LAST` run after the others, in that order."""

    def __init__(self) -> None:
        self.mutating: list[tuple[str, AdmissionFunc]] = []
        self.validating: list[tuple[str, AdmissionFunc]] = []
        self.connecting: set[str] = set()  # the plugins that handle CONNECT (kube's ``Handles``)

    def add_mutating(self, name: str, func: AdmissionFunc, *, connect: bool = False) -> None:
        _add(self.mutating, name, func)
        if connect:
            self.connecting.add(name)

    def add_validating(self, name: str, func: AdmissionFunc, *, connect: bool = False) -> None:
        _add(self.validating, name, func)
        if connect:
            self.connecting.add(name)

    async def mutate(self, request: AdmissionRequest) -> Any:
        """Run the mutating plugins; returns the object as they left it (``request.obj``)."""
        await _run(self.mutating, request, self.connecting)
        return request.obj

    async def validate(self, request: AdmissionRequest) -> None:
        await _run(self.validating, request, self.connecting)


async def _run(plugins: list[tuple[str, AdmissionFunc]], request: AdmissionRequest, connecting: set[str]) -> None:
    for name, func in plugins:
        if request.operation is Operation.CONNECT and name not in connecting:
            continue
        result = func(request)
        if inspect.isawaitable(result):
            await result
