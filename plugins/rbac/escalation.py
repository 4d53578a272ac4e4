"""Privilege-escalation prevention (``pkg/registry/rbac``'s ``escalation_check.go`` and the
``policybased`` storages of roles and bindings), as a validating admission plugin that sees who asks.

Nobody grants what they do not hold. A Role or ClusterRole may be written with rules its writer
does not hold only by a user allowed to ``escalate`` roles (a ClusterRole with an aggregationRule
needs every permission, since it can gather anything); a binding only by a user who holds every
permission of the role it references, in the binding's namespace, or who may ``bind`` that role.
Members of ``system:masters``, the server's own clients among them, pass; so does an update that
only changes what the garbage collector changes (owner references, finalizers).
"""

from __future__ import annotations

import asyncio
import copy
import dataclasses
from typing import Any

from kplane.api import (
    AdmissionRequest, Attributes, Authorizers, Operation, Registry, UserInfo, deny, errors, user,
)
from kplane.plugins.rbac import rules as rbac_rules
from kplane.plugins.rbac.resolver import PolicyCache, aggregate
from kplane.plugins.rbac.types import GROUP, ClusterRole

ROLES = ("roles", "clusterroles")
BINDINGS = ("rolebindings", "clusterrolebindings")
#: Everything: what a ClusterRole's aggregationRule may gather.
FULL_AUTHORITY = [{"verbs": ["*"], "apiGroups": ["*"], "resources": ["*"]}, {"verbs": ["*"], "nonResourceURLs": ["*"]}]
#: The most missing rules a refusal lists (the rest are counted).
MAX_LISTED = 100
AGGREGATION_NEEDS_ADMIN = "must have cluster-admin privileges to use the aggregationRule"


def _only_gc_fields(obj: Any, old: Any) -> bool:
    """``IsOnlyMutatingGCFields``: the update changes nothing but owner references and finalizers
    (and what the server itself keeps: resourceVersion, managedFields)."""
    meta = dataclasses.replace(obj.metadata, owner_references=old.metadata.owner_references,
                               finalizers=old.metadata.finalizers, self_link=old.metadata.self_link,
                               resource_version=old.metadata.resource_version,
                               managed_fields=old.metadata.managed_fields)
    mine = copy.copy(obj)
    mine.metadata = meta
    return bool(mine == old)


class EscalationCheck:
    """The admission plugin ``RBACEscalation`` of one server."""

    def __init__(self, registry: Registry, authorizers: Authorizers, cache: PolicyCache) -> None:
        self.registry = registry
        self.authorizers = authorizers
        self.cache = cache

    async def __call__(self, request: AdmissionRequest) -> None:
        rt = request.resource
        if rt.group != GROUP or request.subresource or request.operation not in (Operation.CREATE, Operation.UPDATE):
            return
        who = request.ctx.user
        if user.SYSTEM_MASTERS in who.groups:  # EscalationAllowed
            return
        if request.old is not None and _only_gc_fields(request.obj, request.old):
            return
        if rt.plural in ROLES:
            await self._check_role(request, who)
        elif rt.plural in BINDINGS:
            await self._check_binding(request, who)

    async def _allowed(self, who: UserInfo, verb: str, resource: str, namespace: str, name: str) -> bool:
        attributes = Attributes(who, verb, True, namespace=namespace, api_group=GROUP, api_version="*",
                                resource=resource, name=name)
        return (await self.authorizers.authorize(attributes)).allowed

    async def _check_role(self, request: AdmissionRequest, who: UserInfo) -> None:
        name = request.name if request.operation is Operation.UPDATE else ""  # the URL's, as RequestInfo's
        if await self._allowed(who, "escalate", request.resource.plural, request.namespace, name):
            return
        obj = request.obj
        await self._confirm_no_escalation(request, who, [rbac_rules.to_wire(r) for r in obj.rules or ()])
        if isinstance(obj, ClusterRole) and (obj.aggregation_rule is not None or
                                             (request.old is not None and request.old.aggregation_rule is not None)):
            if await self._not_held(who, request.namespace, FULL_AUTHORITY):
                raise deny(request, AGGREGATION_NEEDS_ADMIN)

    async def _check_binding(self, request: AdmissionRequest, who: UserInfo) -> None:
        ref = request.obj.role_ref
        resource = {"ClusterRole": "clusterroles", "Role": "roles"}.get(ref.kind)
        if resource is not None and await self._allowed(who, "bind", resource, request.namespace, ref.name):
            return
        await self._confirm_no_escalation(request, who, await self._referenced_rules(ref.kind, ref.name, request.namespace))

    async def _referenced_rules(self, kind: str, name: str, namespace: str) -> list[dict[str, Any]]:
        """The rules of the role a binding references, read from storage (a role just created counts)."""
        plural = {"Role": "roles", "ClusterRole": "clusterroles"}.get(kind)
        if plural is None:
            raise errors.bad_request(f'unsupported role reference kind: "{kind}"')
        store = self.registry.store(GROUP, plural)
        role = await store.get_internal(namespace if kind == "Role" else "", name) if store is not None else None
        if role is None:
            raise errors.not_found(plural, GROUP, name)
        return [rbac_rules.to_wire(r) for r in role.rules or ()]

    async def _not_held(self, who: UserInfo, namespace: str, wanted: list[dict[str, Any]]) -> tuple[list[dict[str, Any]], list[str]] | None:
        """What of ``wanted`` ``who`` does not hold in ``namespace`` (and the resolution errors), or None."""
        await self.cache.wait_synced()
        held, problems = self.cache.rules_of(who, namespace)
        # In a thread: thousands of pieces against hundreds of held rules take a while.
        lacking = await asyncio.to_thread(rbac_rules.missing, held, wanted)
        return (lacking, problems) if lacking else None

    async def _confirm_no_escalation(self, request: AdmissionRequest, who: UserInfo, wanted: list[dict[str, Any]]) -> None:
        """``ConfirmNoEscalation``: 403 listing the rules ``who`` would grant without holding them."""
        found = await self._not_held(who, request.namespace, wanted)
        if found is None:
            return
        lacking, problems = found
        described = sorted({rbac_rules.compact_string(r) for r in rbac_rules.compact(lacking)})
        if len(described) > MAX_LISTED:  # kube lists them all; a hostile role must not make the answer huge
            described = [*described[:MAX_LISTED], f"... and {len(described) - MAX_LISTED} more"]
        message = (f'user "{who.name}" (groups={rbac_rules.go_quoted(who.groups)}) is attempting to grant RBAC '
                   "permissions not currently held:\n" + "\n".join(described))
        if problems:
            message += f"; resolution errors: [{aggregate(problems)}]"
        raise deny(request, message)
