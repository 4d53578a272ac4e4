"""The MutatingAdmissionPolicy admission plugin: the policies the generic policy source
holds, matched to each CREATE and UPDATE (``matchConstraints``, the binding's
``matchResources``, params), then :func:`.mutating.dispatch`; failures weighed by each
policy's ``failurePolicy`` into one 403 with kube's message and causes.
"""

from __future__ import annotations

import asyncio
from typing import Any

from kplane.api import AdmissionRequest, Operation, Registry, SharedInformerFactory, deny, errors
from kplane.plugins.admissionregistration.attributes import Attributes
from kplane.plugins.admissionregistration.matching import exempt
from kplane.plugins.admissionregistration.policy.authorizer import RequestAuthorizer
from kplane.plugins.admissionregistration.policy.generic import (
    ConfigurationError, Params, PolicySource, binding_matches, namespace_lookup)
from kplane.plugins.admissionregistration.policy.mutating import (
    PLUGIN, CompiledPolicy, Invocation, PolicyError, compile_policy, dispatch)
from kplane.plugins.admissionregistration.types import GROUP


class MutatingAdmissionPolicy:
    """The admission function; ``version``: the group version served (v1beta1 or v1alpha1)."""

    def __init__(self, informers: SharedInformerFactory, registry: Registry, version: str) -> None:
        self.source: PolicySource[CompiledPolicy] = PolicySource(
            informers, GROUP, version, "mutatingadmissionpolicies", "mutatingadmissionpolicybindings", compile_policy)
        self.params = Params(informers, registry)
        self.scheme = registry.scheme
        self.namespaces = namespace_lookup(registry)
        self.authorizers: Any = None  # the server's, for the ``authorizer`` variable

    async def __call__(self, request: AdmissionRequest) -> None:
        if request.operation not in (Operation.CREATE, Operation.UPDATE):
            return  # no object to mutate on DELETE
        attrs = Attributes(request)
        if exempt(attrs):
            return
        if not await self.source.ready():
            raise deny(request, "not yet ready to handle request")
        hooks = self.source.candidates(attrs)
        if not hooks:
            return
        failures: list[PolicyError] = []
        invocations: list[Invocation] = []
        for hook in hooks:
            spec = hook.policy.get("spec") or {}
            if hook.constraints is None:
                continue
            if hook.compiled is None:
                failures.append(PolicyError(hook.name, "", hook.error, hook.failure_policy, invalid=False))
                continue
            try:
                version = await hook.constraints_match(attrs, self.scheme, self.namespaces)
            except LookupError as err:
                failures.append(PolicyError(hook.name, "", f"failed to configure policy: {err}", hook.failure_policy,
                                            invalid=False))
                continue
            if version is None:
                continue
            for binding in hook.bindings:
                try:
                    if not await binding_matches(binding, attrs, self.scheme, self.namespaces):
                        continue
                    params = await self.params.collect(spec.get("paramKind"),
                                                       (binding.get("spec") or {}).get("paramRef"), attrs.namespace)
                except (LookupError, ConfigurationError) as err:
                    failures.append(PolicyError(hook.name, binding["metadata"]["name"],
                                                f"failed to configure binding: {err}", hook.failure_policy, invalid=False))
                    continue
                invocations.extend(Invocation(hook.policy, binding, param, version, hook.compiled) for param in params)
        if invocations:
            namespace = None
            if attrs.namespace and not (attrs.group == "" and attrs.resource == "namespaces"):
                namespace = await self.namespaces(attrs.namespace)
                if namespace is None:
                    raise errors.not_found("namespaces", "", attrs.namespace)
            authorizer = None
            if self.authorizers is not None and any(i.compiled.authorizes for i in invocations):
                authorizer = RequestAuthorizer(self.authorizers, request.ctx.user, asyncio.get_running_loop())
            failures.extend(await dispatch(attrs, invocations, namespace=namespace, authorizer=authorizer))
        refused = [f for f in failures if f.failure_policy != "Ignore"]
        if refused:
            raise _denial(request, refused)


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
