"""What every kind of admission policy shares (kube's ``policy/generic`` and ``policy/matching``):
policies and bindings from the loopback informers, compiled once per change; the request's
candidates found by resource; ``matchConstraints`` and ``matchResources``; a binding's params.

A policy is compiled when its informer sees it change, by the kind's own ``compile`` (which never
raises: what does not compile is an error the policy carries to evaluation). Policies are indexed
by the (group, resource) pairs their ``resourceRules`` name, so a request only looks at the
policies that may match it, however many there are.
"""

from __future__ import annotations

import asyncio
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any, Generic, TypeVar

import orjson

from kplane.api import Handlers, Informer, Registry, SharedInformerFactory
from kplane.plugins.admissionregistration.attributes import Attributes
from kplane.plugins.admissionregistration.matching import (
    NamespaceLookup, matching_version, namespace_selector_matches, object_selector_matches, selector)

C = TypeVar("C")  # a kind's compiled policy

READY_SECONDS = 5.0  # how long a request waits for the policies to be listed
PARAM_SYNC_SECONDS = 1.0  # how long a request waits for a new param informer's first list, as kube


class ConfigurationError(Exception):
    """A policy or binding that cannot be applied to this request (``failed to configure ...``)."""


@dataclasses.dataclass(slots=True)
class Hook(Generic[C]):
    """One policy, compiled, with its bindings (``PolicyHook``), and what every request reads of
    its spec (which a policy replaced for its status or metadata keeps)."""

    policy: dict[str, Any]
    compiled: C | None  # None when compiling failed: ``error`` says why
    bindings: list[dict[str, Any]]
    error: str = ""
    name: str = dataclasses.field(init=False)
    failure_policy: str = dataclasses.field(init=False)
    constraints: Mapping[str, Any] | None = dataclasses.field(init=False)  # ``matchConstraints``
    _constraints_key: bytes = dataclasses.field(init=False)

    def __post_init__(self) -> None:
        spec = self.policy.get("spec") or {}
        self.name = self.policy["metadata"]["name"]
        self.failure_policy = spec.get("failurePolicy") or "Fail"
        self.constraints = spec.get("matchConstraints")
        self._constraints_key = _criteria_key(self.constraints or {})

    async def constraints_match(self, attrs: Attributes, scheme: Any, namespaces: NamespaceLookup) -> str | None:
        """:func:`criteria_match` of the policy's ``matchConstraints`` (None: no match)."""
        if self.constraints is None:
            return None
        return await criteria_match(self.constraints, attrs, scheme, namespaces, self._constraints_key)


def _keys(policy: Mapping[str, Any]) -> set[tuple[str, str]]:
    """The (group, resource) pairs a policy's rules name, ``*`` for a wildcard."""
    rules = ((policy.get("spec") or {}).get("matchConstraints") or {}).get("resourceRules") or ()
    out = set()
    for rule in rules:
        for group in rule.get("apiGroups") or ():
            for resource in rule.get("resources") or ():
                out.add((group, resource.partition("/")[0]))
    return out


async def informers_ready(*informers: Informer) -> bool:
    """Whether the configurations are known (kube's ``WaitForReady``): once the informers
    listed, waiting a little for them when they run. Before they start - the server's own
    writes while it starts - there is nothing to enforce yet."""
    if all(i.synced.is_set() for i in informers):
        return True
    if not all(i.started for i in informers):
        return True
    try:
        async with asyncio.timeout(READY_SECONDS):
            for informer in informers:
                await informer.synced.wait()
    except TimeoutError:
        return False
    return True


class PolicySource(Generic[C]):
    """One kind of policy and its bindings as the informers see them (``policy/generic``'s source)."""

    def __init__(self, informers: SharedInformerFactory, group: str, version: str, policies: str, bindings: str,
                 compile_policy: Callable[[dict[str, Any]], C]) -> None:
        self._compile = compile_policy
        self.policy_informer = informers.informer(group, version, policies)
        self.binding_informer = informers.informer(group, version, bindings)
        self._hooks: dict[str, Hook[C]] = {}
        self._bindings: dict[str, dict[str, Any]] = {}
        self._index: dict[tuple[str, str], list[Hook[C]]] = {}
        self.policy_informer.add_handlers(Handlers(on_add=self._put_policy, on_update=lambda _, new: self._put_policy(new),
                                                   on_delete=self._drop_policy))
        self.binding_informer.add_handlers(Handlers(on_add=self._put_binding, on_update=lambda _, new: self._put_binding(new),
                                                    on_delete=self._drop_binding))

    async def ready(self) -> bool:
        """Whether the policies are known (see :func:`informers_ready`)."""
        return await informers_ready(self.policy_informer, self.binding_informer)

    # -- the informers' changes ---------------------------------------------------------------
    def _put_policy(self, policy: dict[str, Any]) -> None:
        name = policy["metadata"]["name"]
        old = self._hooks.get(name)
        if old is not None and old.policy.get("spec") == policy.get("spec"):
            old.policy = policy  # status or metadata only: nothing to compile
            return
        try:
            hook = Hook(policy, self._compile(policy), self._bindings_of(name))
        except Exception as err:  # noqa: BLE001 - a policy the compiler chokes on fails as configured, never silently
            hook = Hook(policy, None, self._bindings_of(name), f"the policy could not be compiled: {err}")
        self._hooks[name] = hook
        self._reindex()

    def _drop_policy(self, policy: dict[str, Any]) -> None:
        self._hooks.pop(policy["metadata"]["name"], None)
        self._reindex()

    def _bindings_of(self, policy_name: str) -> list[dict[str, Any]]:
        found = [b for b in self._bindings.values() if (b.get("spec") or {}).get("policyName") == policy_name]
        return sorted(found, key=lambda b: b["metadata"]["name"])

    def _put_binding(self, binding: dict[str, Any]) -> None:
        old = self._bindings.get(binding["metadata"]["name"])
        self._bindings[binding["metadata"]["name"]] = binding
        self._rebind(binding, old)

    def _drop_binding(self, binding: dict[str, Any]) -> None:
        self._bindings.pop(binding["metadata"]["name"], None)
        self._rebind(binding, None)

    def _rebind(self, *bindings: dict[str, Any] | None) -> None:
        for binding in bindings:
            hook = self._hooks.get(((binding or {}).get("spec") or {}).get("policyName") or "")
            if hook is not None:
                hook.bindings = self._bindings_of(hook.name)

    def _reindex(self) -> None:
        index: dict[tuple[str, str], list[Hook[C]]] = {}
        for name in sorted(self._hooks):
            for key in _keys(self._hooks[name].policy):
                index.setdefault(key, []).append(self._hooks[name])
        self._index = index

    # -- a request's candidates ---------------------------------------------------------------
    def candidates(self, attrs: Attributes) -> list[Hook[C]]:
        """The policies with bindings whose rules may name the request's resource, by name."""
        found: dict[str, Hook[C]] = {}
        for key in ((attrs.group, attrs.resource), (attrs.group, "*"), ("*", attrs.resource), ("*", "*")):
            for hook in self._index.get(key, ()):
                if hook.bindings:
                    found[hook.name] = hook
        return [found[name] for name in sorted(found)]


# -- matching (``policy/matching``) -----------------------------------------------------------

def _criteria_key(criteria: Mapping[str, Any]) -> bytes:
    return orjson.dumps(criteria, option=orjson.OPT_SORT_KEYS)


async def criteria_match(criteria: Mapping[str, Any], attrs: Attributes, scheme: Any,
                         namespaces: NamespaceLookup, key: bytes | None = None) -> str | None:
    """The version the request is seen in when ``criteria`` (a policy's ``matchConstraints`` or
    a binding's ``matchResources``) match it, else None. No ``resourceRules``: every resource,
    in the request's own version. Raises LookupError (an unknown namespace). Criteria alike
    (many policies on one resource) are matched once per request: ``key`` is theirs, if known."""
    key = ("criteria", key or _criteria_key(criteria))
    if key not in attrs.memo:
        attrs.memo[key] = await _criteria_match(criteria, attrs, scheme, namespaces)
    return attrs.memo[key]


async def _criteria_match(criteria: Mapping[str, Any], attrs: Attributes, scheme: Any,
                          namespaces: NamespaceLookup) -> str | None:
    in_namespaces = criteria.get("namespaceSelector")
    if in_namespaces and (in_namespaces.get("matchLabels") or in_namespaces.get("matchExpressions")) and \
            not await namespace_selector_matches(in_namespaces, attrs, attrs.version, namespaces):
        return None
    if not object_selector_matches(criteria.get("objectSelector"), attrs, attrs.version):
        return None
    rules = criteria.get("resourceRules") or ()
    exclude = criteria.get("excludeResourceRules") or ()
    if not rules:
        return None if exclude and _excluded(exclude, criteria.get("matchPolicy"), scheme, attrs) else attrs.version
    return matching_version(rules, criteria.get("matchPolicy"), scheme, attrs, exclude)


def _excluded(exclude: Iterable[Mapping[str, Any]], match_policy: str | None, scheme: Any, attrs: Attributes) -> bool:
    return matching_version(exclude, match_policy, scheme, attrs) is not None


async def binding_matches(binding: Mapping[str, Any], attrs: Attributes, scheme: Any, namespaces: NamespaceLookup) -> bool:
    """Whether a binding's ``matchResources`` (none: all the policy matches) cover the request."""
    criteria = (binding.get("spec") or {}).get("matchResources")
    if criteria is None:
        return True
    return await criteria_match(criteria, attrs, scheme, namespaces) is not None


def namespace_lookup(registry: Registry) -> NamespaceLookup:
    """Namespaces as v1 wire dicts (v1, their only version, is how they are stored), as of a
    recent revision: the watch cache's (a request's namespace exists by admission)."""
    async def lookup(name: str) -> dict[str, Any] | None:
        store = registry.store("", "namespaces")
        return await store.get_recent("", name) if store is not None and name else None
    return lookup


# -- params (``CollectParams``) -----------------------------------------------------------------

def _param_kind_text(param_kind: Mapping[str, Any]) -> str:
    return f"&ParamKind{{APIVersion:{param_kind.get('apiVersion', '')},Kind:{param_kind.get('kind', '')},}}"


class Params:
    """Param objects of any kind, from informers made the first time a policy names the kind."""

    def __init__(self, informers: SharedInformerFactory, registry: Registry) -> None:
        self._informers = informers
        self._registry = registry

    def _informer(self, param_kind: Mapping[str, Any]) -> tuple[Informer, bool] | None:
        group, _, version = str(param_kind.get("apiVersion") or "").rpartition("/")
        rt = self._registry.scheme.by_kind(group, str(param_kind.get("kind") or ""))
        if rt is None or version not in rt.versions or not rt.serves(version):
            return None
        informer = self._informers.informer(group, version, rt.plural)
        self._informers.start()  # starts it if new
        return informer, rt.namespaced

    async def collect(self, param_kind: Mapping[str, Any] | None, param_ref: Mapping[str, Any] | None,
                      namespace: str) -> list[dict[str, Any] | None]:
        """The params to evaluate a binding with: ``[None]`` without paramKind or paramRef, none
        (``[]``) when not found and ``parameterNotFoundAction`` allows it. Raises
        ConfigurationError with kube's words."""
        if param_kind is None or param_ref is None:
            return [None]
        found = self._informer(param_kind)
        if found is None:
            raise ConfigurationError(f"paramKind kind `{_param_kind_text(param_kind)}` not known")
        informer, namespaced = found
        lister = informer.lister()
        if namespaced:
            in_namespace = param_ref.get("namespace") or namespace
            if not in_namespace:
                raise ConfigurationError("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
            lister = lister.namespaced(in_namespace)
        elif param_ref.get("namespace"):
            raise ConfigurationError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
        try:
            await asyncio.wait_for(asyncio.shield(informer.synced.wait()), PARAM_SYNC_SECONDS)
        except TimeoutError:
            raise ConfigurationError(f"paramKind kind `{_param_kind_text(param_kind)}` not yet synced to use for admission") from None
        params: list[dict[str, Any] | None]
        if param_ref.get("name"):
            one = lister.get(param_ref["name"])
            params = [one] if one is not None else []
        elif param_ref.get("selector") is not None:
            params = list(lister.list(selector(param_ref["selector"])))
        else:
            raise ConfigurationError("one of name or selector must be provided")
        if not params and param_ref.get("parameterNotFoundAction") == "Deny":
            raise ConfigurationError("no params found for policy binding with `Deny` parameterNotFoundAction")
        typed = {"apiVersion": param_kind.get("apiVersion"), "kind": param_kind.get("kind")}
        return [p if "kind" in p else typed | p for p in params if p is not None]
