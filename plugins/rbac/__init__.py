"""The rbac.authorization.k8s.io API group: Role, ClusterRole, RoleBinding and ClusterRoleBinding at
v1; the ``RBAC`` authorization mode deciding from them; privilege-escalation prevention; the
bootstrap policy reconciled on every start; and the ClusterRole aggregation controller.

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import (
    AdmissionChain, Authorizers, ControllerManager, Registry, Scheme, SharedInformerFactory, hookimpl,
)
from kplane.plugins.rbac import state, strategy, types
from kplane.plugins.rbac.bootstrap.reconcile import reconcile_bootstrap_policy
from kplane.plugins.rbac.controllers.aggregation import ClusterRoleAggregationController
from kplane.plugins.rbac.escalation import EscalationCheck
from kplane.plugins.rbac.resolver import RBACAuthorizer
from kplane.plugins.rbac.v1 import defaults, protobuf, schemas

GROUP = types.GROUP
MODE = "RBAC"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    for kind, plural, internal, schema, namespaced in (
        ("Role", "roles", types.Role, schemas.RoleSchema, True),
        ("ClusterRole", "clusterroles", types.ClusterRole, schemas.ClusterRoleSchema, False),
        ("RoleBinding", "rolebindings", types.RoleBinding, schemas.RoleBindingSchema, True),
        ("ClusterRoleBinding", "clusterrolebindings", types.ClusterRoleBinding, schemas.ClusterRoleBindingSchema, False),
    ):
        scheme.add_kind(group=GROUP, kind=kind, plural=plural, internal=internal, versions={"v1": schema},
                        storage_version="v1", namespaced=namespaced, plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "RoleBinding", defaults.default_binding)
    scheme.add_defaulter(GROUP, "v1", "ClusterRoleBinding", defaults.default_binding)
    for kind, message in protobuf.MESSAGES.items():  # kubectl create role|clusterrole|rolebinding|...
        scheme.add_protobuf(GROUP, "v1", kind, message)


@hookimpl
def kplane_register_strategies(registry: Registry, authorizers: Authorizers) -> None:
    registry.add_strategy(GROUP, "roles", strategy.RoleStrategy())
    registry.add_strategy(GROUP, "clusterroles", strategy.ClusterRoleStrategy())
    registry.add_strategy(GROUP, "rolebindings", strategy.RoleBindingStrategy())
    registry.add_strategy(GROUP, "clusterrolebindings", strategy.ClusterRoleBindingStrategy())
    state.of(registry).authorizers = authorizers


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry, informers: SharedInformerFactory | None) -> None:
    """Privilege-escalation prevention, which needs the policy cache (not in ``kplane plugins``)."""
    authorizers = state.of(registry).authorizers
    cache = state.cache(registry, informers) if informers is not None else None
    if cache is not None and authorizers is not None:
        chain.add_validating("RBACEscalation", EscalationCheck(registry, authorizers, cache))


@hookimpl
def kplane_register_authorizers(authorizers: Authorizers, registry: Registry, informers: SharedInformerFactory | None) -> None:
    cache = state.cache(registry, informers) if informers is not None else None
    if cache is not None:
        authorizers.add(MODE, RBACAuthorizer(cache))


@hookimpl
async def kplane_post_start(registry: Registry) -> None:
    await reconcile_bootstrap_policy(registry)


@hookimpl
def kplane_register_controllers(manager: ControllerManager) -> None:
    manager.add("clusterrole-aggregation", ClusterRoleAggregationController(manager.client_for("clusterrole-aggregation-controller"), manager.informers))
