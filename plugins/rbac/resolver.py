"""What RBAC grants whom, from memory (``pkg/registry/rbac/validation``'s ``DefaultRuleResolver``
and ``plugin/pkg/auth/authorizer/rbac``).

The four RBAC resources come from the server's loopback informers. Bindings are indexed by the
subjects they name (a user, a group, a ServiceAccount's user name; RoleBindings also by their
namespace), so a decision looks up the bindings of the requester's name and groups, and the roles
they reference by key: it never scans all bindings and never asks the server. What it finds for a
requester (name, groups, namespace) is kept until any role or binding changes, so a run of
requests from one user pays the lookups once (``bench/auth_bench.py`` measures the decision).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import Iterator, Sequence
from typing import Any

from kplane.api import (
    NO_OPINION, Attributes, Decision, Handlers, Informer, Rules, SharedInformerFactory, UserInfo, Verdict, user,
)
from kplane.plugins.rbac import rules as rbac_rules
from kplane.plugins.rbac.types import GROUP

VERSION = "v1"
#: The informer index of bindings by subject: ``"<namespace>|<kind>:<name>"`` ("" for ClusterRoleBindings).
SUBJECT_INDEX = "rbac-subject"

#: How many requesters' bindings (by name, groups and namespace) the cache keeps between changes.
GRANTED_LIMIT = 4096

#: How long a decision waits for the informers' first list as the server starts.
SYNC_WAIT = 10.0

Obj = dict[str, Any]


def _subject_user(subject: Obj, namespace: str) -> tuple[str, str] | None:
    """The (kind, name) a subject stands for: a ServiceAccount is its user name (its namespace
    defaults to the binding's); None when it names nobody (kube's ``appliesToUser``)."""
    kind, name = subject.get("kind"), subject.get("name", "")
    if kind == "ServiceAccount":
        sa_namespace = subject.get("namespace") or namespace
        return ("User", user.service_account_username(sa_namespace, name)) if sa_namespace else None
    if kind in ("User", "Group"):
        return kind, name
    return None


def _subject_keys(binding: Obj) -> list[str]:
    namespace = binding["metadata"].get("namespace", "")
    keys = []
    for subject in binding.get("subjects") or ():
        found = _subject_user(subject, namespace)
        if found is not None:
            keys.append(f"{namespace}|{found[0]}:{found[1]}")
    return keys


def _keys_of(who: UserInfo, namespace: str) -> list[str]:
    return [f"{namespace}|User:{who.name}", *(f"{namespace}|Group:{g}" for g in who.groups)]


def _describe_subject(subject: Obj, namespace: str) -> str:
    kind, name = subject.get("kind", ""), subject.get("name", "")
    if kind == "ServiceAccount":
        return f'{kind} "{name}/{subject.get("namespace") or namespace}"'
    return f'{kind} "{name}"'


def _applies(who: UserInfo, subject: Obj, namespace: str) -> bool:
    found = _subject_user(subject, namespace)
    if found is None:
        return False
    kind, name = found
    return name == who.name if kind == "User" else name in who.groups


def describe_source(binding: Obj, who: UserInfo) -> str:
    """The binding of ``who`` a rule came from, as kube's describers tell it in an allowed
    decision's reason (with the first of its subjects that is ``who``)."""
    meta, ref = binding["metadata"], binding.get("roleRef") or {}
    namespace = meta.get("namespace", "")
    subject = next(s for s in binding.get("subjects") or () if _applies(who, s, namespace))
    of = f'{ref.get("kind", "")} "{ref.get("name", "")}" to {_describe_subject(subject, namespace)}'
    if namespace:
        return f'RoleBinding "{meta["name"]}/{namespace}" of {of}'
    return f'ClusterRoleBinding "{meta["name"]}" of {of}'


class PolicyCache:
    """Roles and bindings of one server, indexed for decisions (``AuthorizationRuleResolver``)."""

    def __init__(self, informers: SharedInformerFactory) -> None:
        self.roles = informers.informer(GROUP, VERSION, "roles")
        self.cluster_roles = informers.informer(GROUP, VERSION, "clusterroles")
        self.role_bindings = self._indexed(informers.informer(GROUP, VERSION, "rolebindings"))
        self.cluster_role_bindings = self._indexed(informers.informer(GROUP, VERSION, "clusterrolebindings"))
        self.informers = (self.roles, self.cluster_roles, self.role_bindings, self.cluster_role_bindings)
        # What ``granted`` found, by requester and namespace, until any role or binding changes.
        self._granted: dict[tuple[str, tuple[str, ...], str], list[tuple[Obj, Sequence[Obj] | str]]] = {}
        forget = Handlers.for_any(lambda _: self._granted.clear())
        for informer in self.informers:
            informer.add_handlers(forget)

    @staticmethod
    def _indexed(informer: Informer) -> Informer:
        informer.indexer.add_indexer(SUBJECT_INDEX, _subject_keys)
        return informer

    @property
    def synced(self) -> bool:
        return all(i.synced.is_set() for i in self.informers)

    async def wait_synced(self) -> None:
        """Until every informer has listed, for at most :data:`SYNC_WAIT` seconds: requests that
        come as the server starts are decided on the whole policy, not on none of it."""
        if self.synced:
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*(i.synced.wait() for i in self.informers)), SYNC_WAIT)

    def role_rules(self, ref: Obj, namespace: str) -> Sequence[Obj]:
        """``GetRoleReferenceRules``: the rules of the role a binding in ``namespace`` references;
        raises LookupError naming what is missing, as kube's listers word it."""
        kind, name = ref.get("kind"), ref.get("name", "")
        if kind == "Role":
            role = self.roles.indexer.get(f"{namespace}/{name}")
            if role is None:
                raise LookupError(f'role.{GROUP} "{name}" not found')
        elif kind == "ClusterRole":
            role = self.cluster_roles.indexer.get(name)
            if role is None:
                raise LookupError(f'clusterrole.{GROUP} "{name}" not found')
        else:
            raise LookupError(f'unsupported role reference kind: "{kind}"')
        return role.get("rules") or ()

    def _bindings(self, who: UserInfo, namespace: str) -> Iterator[Obj]:
        """The bindings naming ``who`` (a binding of several of its names comes once)."""
        seen: set[str] = set()
        for informer, scope in ((self.cluster_role_bindings, ""), (self.role_bindings, namespace)):
            if informer is self.role_bindings and not namespace:
                break
            for key in _keys_of(who, scope):
                for binding in informer.indexer.by_index(SUBJECT_INDEX, key):
                    uid = f'{scope}/{binding["metadata"]["name"]}'
                    if uid not in seen:
                        seen.add(uid)
                        yield binding

    def granted(self, who: UserInfo, namespace: str) -> list[tuple[Obj, Sequence[Obj] | str]]:
        """``VisitRulesFor`` a binding at a time: each binding granting ``who`` something in
        ``namespace`` (ClusterRoleBindings first) with the rules of its role, or the error
        resolving that role. Kept until the policy changes: a user's requests come in runs, and
        this lookup is most of a decision. The rules are the cache's, not to be changed."""
        key = (who.name, who.groups, namespace)
        found = self._granted.get(key)
        if found is None:
            if len(self._granted) >= GRANTED_LIMIT:
                self._granted.clear()
            found = self._granted[key] = list(self._resolve(who, namespace))
        return found

    def _resolve(self, who: UserInfo, namespace: str) -> Iterator[tuple[Obj, Sequence[Obj] | str]]:
        for binding in self._bindings(who, namespace):
            try:
                yield binding, self.role_rules(binding.get("roleRef") or {}, binding["metadata"].get("namespace", ""))
            except LookupError as err:
                yield binding, str(err)

    def rules_of(self, who: UserInfo, namespace: str) -> tuple[list[Obj], list[str]]:
        """``RulesFor``: every rule granted to ``who`` in ``namespace``, and the resolution errors."""
        found: list[Obj] = []
        errors: list[str] = []
        for _, rules in self.granted(who, namespace):
            if isinstance(rules, str):
                errors.append(rules)
            else:
                found += rules
        return found, errors


def aggregate(errors: list[str]) -> str:
    """``utilerrors.NewAggregate(...).Error()``: one message, or ``[a, b]``."""
    return errors[0] if len(errors) == 1 else "[" + ", ".join(errors) + "]"


class RBACAuthorizer:
    """The ``RBAC`` authorization mode: allows what some binding of the requester grants; else has
    no opinion (the next mode decides), with the errors met on the way as its reason."""

    def __init__(self, cache: PolicyCache) -> None:
        self.cache = cache

    async def authorize(self, attributes: Attributes) -> Verdict:
        await self.cache.wait_synced()
        errors: list[str] = []
        for binding, rules in self.cache.granted(attributes.user, attributes.namespace):
            if isinstance(rules, str):
                errors.append(rules)
            elif any(rbac_rules.allows(attributes, rule) for rule in rules):
                return Verdict(Decision.ALLOW, f"RBAC: allowed by {describe_source(binding, attributes.user)}")
        return Verdict(Decision.NO_OPINION, f"RBAC: {aggregate(errors)}") if errors else NO_OPINION

    async def rules_for(self, who: UserInfo, namespace: str) -> Rules:
        await self.cache.wait_synced()
        found, errors = self.cache.rules_of(who, namespace)
        resource, non_resource = rbac_rules.review_rules(found)
        return Rules(resource, non_resource, incomplete=bool(errors), errors=[aggregate(errors)] if errors else [])

