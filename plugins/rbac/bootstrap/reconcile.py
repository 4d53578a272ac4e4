"""Reconciling the bootstrap policy on every start (kube's ``registry/rbac/reconciliation``): the
ClusterRoles and their bindings, then the Roles and RoleBindings of kube-system (that namespace
made first if need be).

A missing role or binding is created; an existing one gets the labels, annotations, rules,
aggregation selectors and subjects it lacks, and keeps everything else (what users added stays).
A binding whose roleRef differs is made again. An object annotated
``rbac.authorization.kubernetes.io/autoupdate: "false"`` is left as it is. Every write is a
guarded one, so servers starting together on one storage converge instead of overwriting each other.
"""

from __future__ import annotations

import copy
import logging
from typing import Any

from kplane.api import APIError, DeleteOptions, Registry, RequestContext, UserInfo, user
from kplane.plugins.rbac import rules as rbac_rules
from kplane.plugins.rbac.bootstrap import controller_policy, policy
from kplane.plugins.rbac.types import GROUP

log = logging.getLogger(__name__)

#: Whom the reconciliation writes as: the server itself.
SERVER = UserInfo(user.APISERVER, groups=(user.SYSTEM_MASTERS,))
ATTEMPTS = 5


def _merged(expected: dict[str, str] | None, existing: dict[str, str] | None) -> dict[str, str] | None:
    """Expected keys added, existing values kept."""
    merged = {**(expected or {}), **(existing or {})}
    return merged or None


def _protected(obj: Any) -> bool:
    return (obj.metadata.annotations or {}).get(policy.AUTOUPDATE) == "false"


def _reconcile_meta(result: Any, expected: Any) -> None:
    result.metadata.labels = _merged(expected.metadata.labels, result.metadata.labels)
    result.metadata.annotations = _merged(expected.metadata.annotations, result.metadata.annotations)


def reconciled_role(existing: Any, expected: Any) -> Any | None:
    """``computeReconciledRole`` (union): ``existing`` with what it lacks, or None when it lacks nothing."""
    result = copy.deepcopy(existing)
    _reconcile_meta(result, expected)
    held = [rbac_rules.to_wire(r) for r in existing.rules or ()]
    lacking = rbac_rules.missing(held, [rbac_rules.to_wire(r) for r in expected.rules or ()])
    if lacking:
        result.rules = [*(existing.rules or ()), *(rbac_rules.from_wire(r) for r in lacking)]
    wanted = getattr(expected, "aggregation_rule", None)
    if wanted is not None:
        if result.aggregation_rule is None:
            result.aggregation_rule = copy.deepcopy(wanted)
        else:
            selectors = result.aggregation_rule.cluster_role_selectors or []
            result.aggregation_rule.cluster_role_selectors = selectors + [
                s for s in wanted.cluster_role_selectors or () if s not in selectors]
    return None if result == existing else result


def reconciled_binding(existing: Any, expected: Any) -> Any | None:
    """``computeReconciledRoleBinding`` (union): the subjects it lacks added, or None."""
    result = copy.deepcopy(existing)
    _reconcile_meta(result, expected)
    subjects = result.subjects or []
    lacking = [s for s in expected.subjects or () if s not in subjects]
    if lacking:
        result.subjects = subjects + lacking
    return None if result == existing else result


BINDINGS = ("clusterrolebindings", "rolebindings")


async def _reconcile(registry: Registry, plural: str, wire: dict[str, Any]) -> None:
    store = registry.store(GROUP, plural)
    if store is None:  # the group is not served (--runtime-config)
        return
    name, namespace = wire["metadata"]["name"], wire["metadata"].get("namespace", "")
    ctx = RequestContext(group=GROUP, version="v1", resource=plural, namespace=namespace, name=name, user=SERVER)
    reconcile = reconciled_binding if plural in BINDINGS else reconciled_role

    async def keep_reconciling(current: Any) -> Any:  # inside the guarded write: on what is stored then
        return (reconcile(current, expected) or current) if current is not None else expected

    for _ in range(ATTEMPTS):
        expected = store.resource.internalize(copy.deepcopy(wire), "v1")
        existing = await store.get_internal(namespace, name)
        try:
            if existing is None:
                await store.create(ctx, expected)
                log.info("created %s %s", plural, name)
            elif _protected(existing):
                return
            elif plural in BINDINGS and existing.role_ref != expected.role_ref:
                await store.delete(ctx, name, DeleteOptions())  # the roleRef cannot change: make it again
                continue
            elif reconcile(existing, expected) is not None:
                await store.update(ctx, name, keep_reconciling)
                log.info("reconciled %s %s", plural, name)
            return
        except APIError as err:  # another server wrote it first: look again
            if err.code not in (404, 409):
                raise
    log.warning("could not reconcile %s %s: other writers kept changing it", plural, name)


async def reconcile_bootstrap_policy(registry: Registry) -> None:
    """Every bootstrap ClusterRole, then every ClusterRoleBinding (a binding names its role)."""
    for role in (*policy.CLUSTER_ROLES, *controller_policy.CLUSTER_ROLES):
        await _reconcile(registry, "clusterroles", role)
    for binding in (*policy.CLUSTER_ROLE_BINDINGS, *controller_policy.CLUSTER_ROLE_BINDINGS):
        await _reconcile(registry, "clusterrolebindings", binding)
    for namespace in sorted({obj["metadata"]["namespace"] for obj in (*policy.ROLES, *policy.ROLE_BINDINGS)}):
        if not await _ensure_namespace(registry, namespace):
            return  # no Namespaces served here: no namespaced roles either
    for role in policy.ROLES:
        await _reconcile(registry, "roles", role)
    for binding in policy.ROLE_BINDINGS:
        await _reconcile(registry, "rolebindings", binding)


async def _ensure_namespace(registry: Registry, name: str) -> bool:
    """The namespace exists (made if need be, as kube's policy reconciliation does); False
    when this server serves no Namespaces."""
    store = registry.store("", "namespaces")
    if store is None:
        return False
    if await store.get_internal("", name) is None:
        namespace = store.resource.internalize({"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name}}, "v1")
        try:
            await store.create(RequestContext(version="v1", resource="namespaces", name=name, user=SERVER), namespace)
        except APIError as err:  # another server (or the core plugin) made it first
            if err.code != 409:
                raise
    return True
