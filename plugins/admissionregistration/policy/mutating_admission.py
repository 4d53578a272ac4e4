"""The MutatingAdmissionPolicy admission plugin: policies and bindings from the loopback
informers, matched to each CREATE and UPDATE (``matchConstraints``, the binding's
``matchResources``, params), then :func:`.mutating.dispatch`; failures weighed by each
policy's ``failurePolicy`` into one 403 with kube's message and causes.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from typing import Any

from kplane.api import (
    AdmissionRequest, Informer, Operation, Scheme, SharedInformerFactory, deny, errors, wait_synced,
)
from kplane.plugins.admissionregistration import matching
from kplane.plugins.admissionregistration.attributes import Attributes
from kplane.plugins.admissionregistration.policy.mutating import (
    PLUGIN, Invocation, PolicyError, PolicyEvaluator, compile_policy, dispatch,
)
from kplane.plugins.admissionregistration.types import GROUP

READY_TIMEOUT = 10.0  # seconds to wait for the first list of policies and bindings (kube's admission.Handler)
PARAMS_TIMEOUT = 1.0  # seconds to wait for a params informer's first list (kube's CollectParams)


class MutatingAdmissionPolicy:
    """The admission function; ``version``: the group version served (v1beta1 or v1alpha1)."""

    def __init__(self, scheme: Scheme, informers: SharedInformerFactory, version: str) -> None:
        self.scheme = scheme
        self.informers = informers
        self.policies = informers.informer(GROUP, version, "mutatingadmissionpolicies")
        self.bindings = informers.informer(GROUP, version, "mutatingadmissionpolicybindings")
        self.namespaces = informers.informer("", "v1", "namespaces")
        self._compiled: dict[str, tuple[str, PolicyEvaluator]] = {}  # name -> (resourceVersion, compiled)

    # -- the policies, compiled once per resourceVersion ------------------------------------------
    def _evaluator(self, policy: Mapping[str, Any]) -> PolicyEvaluator:
        meta = policy.get("metadata") or {}
        name, rv = meta.get("name") or "", meta.get("resourceVersion") or ""
        known = self._compiled.get(name)
        if known is None or known[0] != rv:
            known = self._compiled[name] = (rv, compile_policy(policy.get("spec") or {}))
        return known[1]

    async def _namespace(self, name: str) -> dict[str, Any] | None:
        found = self.namespaces.lister().get(name)
        if found is None and not self.namespaces.synced.is_set():
            try:
                found = await self.informers.client.resource("", "v1", "namespaces").get(name)
            except Exception:  # noqa: BLE001 - not found or unreachable: the selectors' LookupError
                return None
        return found

    # -- admission ------------------------------------------------------------------------------
    async def __call__(self, request: AdmissionRequest) -> None:
        if request.operation not in (Operation.CREATE, Operation.UPDATE):
            return  # no object to mutate on DELETE
        attrs = Attributes(request)
        if matching.exempt(attrs):
            return
        if not (self.policies.synced.is_set() and self.bindings.synced.is_set()):
            self.informers.start()  # writes of the server's own start-up come before the informers' start
        try:
            async with asyncio.timeout(READY_TIMEOUT):
                await wait_synced(self.policies, self.bindings)
        except TimeoutError:
            raise deny(request, "not yet ready to handle request") from None
        policies = sorted(self.policies.lister().list(), key=lambda p: (p.get("metadata") or {}).get("name") or "")
        if not policies:
            return
        bindings: dict[str, list[dict[str, Any]]] = {}
        for binding in self.bindings.lister().list():
            bindings.setdefault((binding.get("spec") or {}).get("policyName") or "", []).append(binding)
        failures: list[PolicyError] = []
        invocations: list[Invocation] = []
        for policy in policies:
            name = (policy.get("metadata") or {}).get("name") or ""
            bound = bindings.get(name)
            if not bound:
                continue
            spec = policy.get("spec") or {}
            fail = spec.get("failurePolicy") or "Fail"
            try:
                version = await self._matches(spec.get("matchConstraints"), attrs, None)
            except LookupError as err:
                failures.append(PolicyError(name, "", f"failed to configure policy: {err}", fail, invalid=False))
                continue
            if version is None:
                continue
            evaluator = self._evaluator(policy)
            for binding in sorted(bound, key=lambda b: (b.get("metadata") or {}).get("name") or ""):
                bname = (binding.get("metadata") or {}).get("name") or ""
                bspec = binding.get("spec") or {}
                try:
                    if bspec.get("matchResources") and await self._matches(bspec["matchResources"], attrs, version) is None:
                        continue
                    params = await self._params(spec.get("paramKind"), bspec.get("paramRef"), attrs)
                except LookupError as err:
                    failures.append(PolicyError(name, bname, f"failed to configure binding: {err}", fail, invalid=False))
                    continue
                invocations.extend(Invocation(policy, binding, param, version, evaluator) for param in params)
        if invocations:
            namespace = None
            if attrs.namespace and not (attrs.group == "" and attrs.resource == "namespaces"):
                namespace = await self._namespace(attrs.namespace)
                if namespace is None:
                    raise errors.not_found("namespaces", "", attrs.namespace)
            failures.extend(dispatch(attrs, invocations, namespace=namespace))
        refused = [f for f in failures if f.failure_policy != "Ignore"]
        if refused:
            raise _denial(request, refused)

    async def _matches(self, match: Mapping[str, Any] | None, attrs: Attributes, version: str | None) -> str | None:
        """The version a ``MatchResources`` sees the request in, or None when it does not match
        it. ``version``: the policy's, for a binding (whose rules, if any, must cover the
        request too; its selectors see the object in the policy's version).
        Raises LookupError when the namespace selector cannot find the namespace."""
        match = match or {}
        rules = match.get("resourceRules") or ()
        if version is None or rules:
            found = matching.matching_version(rules, match.get("matchPolicy"), self.scheme, attrs,
                                              match.get("excludeResourceRules") or ())
            if found is None:
                return None
            version = version or found
        elif match.get("excludeResourceRules") and matching.matching_version(
                match["excludeResourceRules"], match.get("matchPolicy"), self.scheme, attrs):
            return None
        if not matching.object_selector_matches(match.get("objectSelector"), attrs, version):
            return None
        if not await matching.namespace_selector_matches(match.get("namespaceSelector"), attrs, version,
                                                         self._namespace):
            return None
        return version

    async def _params(self, kind: Mapping[str, Any] | None, ref: Mapping[str, Any] | None,
                      attrs: Attributes) -> list[dict[str, Any] | None]:
        """A binding's params (kube's ``CollectParams``): ``[None]`` without paramKind or
        paramRef; else the objects ``paramRef`` names or selects, from an informer made on demand."""
        if not kind or not ref:
            return [None]
        api_version, kind_name = str(kind.get("apiVersion") or ""), str(kind.get("kind") or "")
        group, _, version = api_version.rpartition("/")
        described = f"{api_version}, Kind={kind_name}"
        rt = self.scheme.by_kind(group, kind_name)
        if rt is None or not rt.serves(version):
            raise LookupError(f"paramKind kind `{described}` not known")
        informer = self.informers.informer(group, version, rt.plural)
        self.informers.start()
        if not await _synced(informer):
            raise LookupError(f"paramKind kind `{described}` not yet synced to use for admission")
        lister = informer.lister()
        if rt.namespaced:
            namespace = ref.get("namespace") or attrs.namespace
            if not namespace:
                raise LookupError("cannot use namespaced paramRef in policy binding that matches cluster-scoped resources")
            lister = lister.namespaced(namespace)
        elif ref.get("namespace"):
            raise LookupError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`")
        if ref.get("name"):
            found = lister.get(ref["name"])
            params = [found] if found is not None else []
        else:
            params = sorted(lister.list(matching.selector(ref.get("selector"))),
                            key=lambda p: (p.get("metadata") or {}).get("name") or "")
        if not params and ref.get("parameterNotFoundAction") == "Deny":
            raise LookupError("no params found for policy binding with `Deny` parameterNotFoundAction")
        return list(params)


async def _synced(informer: Informer) -> bool:
    try:
        async with asyncio.timeout(PARAMS_TIMEOUT):
            await informer.synced.wait()
    except TimeoutError:
        return False
    return True


def _denial(request: AdmissionRequest, refused: list[PolicyError]) -> errors.APIError:
    """kube's answer to failed policies: 403, the first failure's message (reason Invalid, as
    kube's mutation errors carry), every failure a cause."""
    err = deny(request, "admission request denied by policy")
    err.message = str(refused[0])
    if refused[0].invalid:
        err.reason = errors.StatusReason.INVALID
    err.details = {**err.details, "causes": [{"message": str(f)} for f in refused]}
    return err


__all__ = ["PLUGIN", "MutatingAdmissionPolicy"]
