"""The admissionregistration.k8s.io API group: how a cluster extends admission without code in
the server - webhooks it calls over HTTPS and CEL policies it evaluates itself.

They run after every plugin's own admission, in kube-apiserver's order: MutatingAdmissionPolicy,
MutatingAdmissionWebhook, then (validating) ValidatingAdmissionPolicy, ValidatingAdmissionWebhook,
then ResourceQuota (``AdmissionChain`` keeps these names last, in that order).

* :mod:`.types`, ``v1/``, ``v1beta1/``, ``v1alpha1/``, :mod:`.strategy`, :mod:`.validation`,
  :mod:`.printers`: the kinds (webhook configurations, policies and their bindings).
* :mod:`.attributes`: one request as webhooks and policies see it, in the version they ask for.
* :mod:`.matching`: rules, ``matchPolicy``, namespace and object selectors (both use them).
* :mod:`.expressions`: the CEL of admission (``object``, ``oldObject``, ``request``, ...);
  :mod:`.matchconditions`: ``matchConditions``, for webhooks and policies alike.
* ``webhooks/``: calling webhooks; ``policy/``: evaluating policies.
"""

from __future__ import annotations

import dataclasses
from typing import Any
from weakref import WeakKeyDictionary

from kplane.api import (
    AdmissionChain, Authorizers, ControllerManager, Registry, Scheme, SharedInformerFactory, WebhookClient, hookimpl,
)
from kplane.plugins.admissionregistration import strategy, types
from kplane.plugins.admissionregistration.types import GROUP
from kplane.plugins.admissionregistration.v1 import defaults, schemas as v1
from kplane.plugins.admissionregistration.v1alpha1 import schemas as v1alpha1
from kplane.plugins.admissionregistration.v1beta1 import schemas as v1beta1
from kplane.plugins.admissionregistration.policy import mutating_admission, typechecking, validating
from kplane.plugins.admissionregistration.policy.generic import Params, PolicySource, namespace_lookup
from kplane.plugins.admissionregistration.webhooks.dispatcher import MutatingWebhooks, ValidatingWebhooks
from kplane.plugins.admissionregistration.webhooks.source import WebhookSource

__all__ = ["GROUP"]

#: v1 is served; v1beta1 (MutatingAdmissionPolicy as kube 1.34) and v1alpha1 (as 1.32) only
#: with ``--runtime-config admissionregistration.k8s.io/v1beta1=true`` (or ``v1alpha1``).
VERSIONS = ["v1", "v1beta1", "v1alpha1"]


@dataclasses.dataclass(slots=True)
class _Server:
    """One server's admission plugins (handed its authorizers, registered after admission, for
    the ``authorizer`` variable) and the webhook client they share."""

    client: WebhookClient
    plugins: list[Any]


_servers: WeakKeyDictionary[Registry, _Server] = WeakKeyDictionary()


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    policies = {"v1beta1": v1beta1, "v1alpha1": v1alpha1}
    for kind, plural, schema in (("ValidatingWebhookConfiguration", "validatingwebhookconfigurations",
                                  v1.ValidatingWebhookConfigurationSchema),
                                 ("MutatingWebhookConfiguration", "mutatingwebhookconfigurations",
                                  v1.MutatingWebhookConfigurationSchema)):
        scheme.add_kind(group=GROUP, kind=kind, plural=plural, internal=getattr(types, kind), versions={"v1": schema},
                        storage_version="v1", namespaced=False, categories=["api-extensions"], plugin=plugin_name)
    for kind, plural in (("ValidatingAdmissionPolicy", "validatingadmissionpolicies"),
                         ("ValidatingAdmissionPolicyBinding", "validatingadmissionpolicybindings")):
        versions = {"v1": getattr(v1, f"{kind}Schema")} | {v: getattr(m, f"{kind}Schema") for v, m in policies.items()}
        scheme.add_kind(group=GROUP, kind=kind, plural=plural, internal=getattr(types, kind), versions=versions,
                        storage_version="v1", namespaced=False, categories=["api-extensions"], plugin=plugin_name)
    for kind, plural in (("MutatingAdmissionPolicy", "mutatingadmissionpolicies"),
                         ("MutatingAdmissionPolicyBinding", "mutatingadmissionpolicybindings")):
        scheme.add_kind(group=GROUP, kind=kind, plural=plural, internal=getattr(types, kind),
                        versions={v: getattr(m, f"{kind}Schema") for v, m in policies.items()},
                        storage_version="v1beta1", namespaced=False, categories=["api-extensions"], plugin=plugin_name)
    scheme.set_version_priority(GROUP, VERSIONS)
    for version in VERSIONS[1:]:
        scheme.set_served_by_default(GROUP, version, False)


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:

    scheme.add_defaulter(GROUP, "v1", "ValidatingWebhookConfiguration", defaults.default_validating_webhook_configuration)
    scheme.add_defaulter(GROUP, "v1", "MutatingWebhookConfiguration", defaults.default_mutating_webhook_configuration)
    for version in VERSIONS:
        scheme.add_defaulter(GROUP, version, "ValidatingAdmissionPolicy", defaults.default_policy)
        binding = defaults.default_binding_v1alpha1 if version == "v1alpha1" else defaults.default_binding
        scheme.add_defaulter(GROUP, version, "ValidatingAdmissionPolicyBinding", binding)
        if version != "v1":
            scheme.add_defaulter(GROUP, version, "MutatingAdmissionPolicy", defaults.default_policy)
            scheme.add_defaulter(GROUP, version, "MutatingAdmissionPolicyBinding", binding)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:

    for plural, made in (("validatingwebhookconfigurations", strategy.ValidatingWebhookConfigurationStrategy()),
                         ("mutatingwebhookconfigurations", strategy.MutatingWebhookConfigurationStrategy()),
                         ("validatingadmissionpolicies", strategy.ValidatingAdmissionPolicyStrategy()),
                         ("validatingadmissionpolicybindings", strategy.ValidatingAdmissionPolicyBindingStrategy()),
                         ("mutatingadmissionpolicies", strategy.MutatingAdmissionPolicyStrategy()),
                         ("mutatingadmissionpolicybindings", strategy.MutatingAdmissionPolicyBindingStrategy())):
        registry.add_strategy(GROUP, plural, made)
    registry.add_strategy(GROUP, "validatingadmissionpolicies", strategy.ValidatingAdmissionPolicyStatusStrategy(),
                          subresource="status")


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry, informers: SharedInformerFactory | None) -> None:
    if informers is None:
        return
    namespaces = namespace_lookup(registry)
    client = WebhookClient(informers.informer("", "v1", "services").indexer.get)
    policies = validating.ValidatingAdmissionPolicyPlugin(
        PolicySource(informers, GROUP, "v1", "validatingadmissionpolicies", "validatingadmissionpolicybindings",
                     validating.compile_policy), Params(informers, registry), registry, namespaces)
    mutating = MutatingWebhooks(WebhookSource(informers, "mutatingwebhookconfigurations"), client, registry, namespaces)
    validating_hooks = ValidatingWebhooks(WebhookSource(informers, "validatingwebhookconfigurations"), client, registry, namespaces)
    chain.add_validating("ValidatingAdmissionPolicy", policies)
    chain.add_mutating("MutatingAdmissionWebhook", mutating, connect=True)
    chain.add_validating("ValidatingAdmissionWebhook", validating_hooks, connect=True)
    made = _Server(client, [policies, mutating, validating_hooks])
    policy_version = next((v for v in ("v1beta1", "v1alpha1") if registry.scheme.served(GROUP, v)), None)
    if policy_version is not None:  # MutatingAdmissionPolicy is beta: off by default
        mutating_policies = mutating_admission.MutatingAdmissionPolicy(informers, registry, policy_version)
        chain.add_mutating(mutating_admission.PLUGIN, mutating_policies)
        made.plugins.append(mutating_policies)
    _servers[registry] = made


@hookimpl
def kplane_register_authorizers(authorizers: Authorizers, registry: Registry) -> None:
    for plugin in _servers[registry].plugins if registry in _servers else ():
        plugin.authorizers = authorizers


@hookimpl
async def kplane_shutdown(registry: Registry) -> None:
    made = _servers.pop(registry, None)
    if made is not None:
        await made.client.close()


@hookimpl
def kplane_register_controllers(manager: ControllerManager) -> None:
    """kube-controller-manager's ``validatingadmissionpolicy-status``: the policies' type checking."""
    client = manager.client_for("validatingadmissionpolicy-status-controller")
    manager.add("validatingadmissionpolicy-status", typechecking.TypeChecking(client, manager.informers))
