"""The configuration kube-apiserver creates and keeps (``apiserver/pkg/apis/flowcontrol/bootstrap``
of Kubernetes 1.32): the mandatory objects, which must exist for every request to be classified
(``exempt`` and ``catch-all``, whose specs cannot change but for ``exempt``'s ``spec.exempt``),
and the suggested ones, which an operator may change or delete. Written fully defaulted, so
defaulting changes none of them."""

from __future__ import annotations

from kplane.plugins.flowcontrol.types import (
    CATCH_ALL, EXEMPT, ExemptPriorityLevelConfiguration, FlowDistinguisherMethod, FlowSchema, FlowSchemaSpec,
    GroupSubject, LimitedPriorityLevelConfiguration, LimitResponse, NonResourcePolicyRule, PolicyRulesWithSubjects,
    PriorityLevelConfiguration, PriorityLevelConfigurationReference, PriorityLevelConfigurationSpec,
    QueuingConfiguration, ResourcePolicyRule, ServiceAccountSubject, Subject, UserSubject,
)
from kplane.api import ObjectMeta

ALL = "*"
CONTROLLER_MANAGER = "system:kube-controller-manager"
SCHEDULER = "system:kube-scheduler"


def _level(name: str, shares: int, lendable: int, queuing: tuple[int, int, int] | None) -> PriorityLevelConfiguration:
    """A Limited level; ``queuing`` is (queues, handSize, queueLengthLimit), None to Reject."""
    response = (LimitResponse("Queue", QueuingConfiguration(*queuing)) if queuing else LimitResponse("Reject"))
    limited = LimitedPriorityLevelConfiguration(nominal_concurrency_shares=shares, limit_response=response, lendable_percent=lendable)
    return PriorityLevelConfiguration(ObjectMeta(name=name), PriorityLevelConfigurationSpec("Limited", limited=limited))


def _groups(*names: str) -> list[Subject]:
    return [Subject("Group", group=GroupSubject(name)) for name in names]


def _users(*names: str) -> list[Subject]:
    return [Subject("User", user=UserSubject(name)) for name in names]


def _kube_system_accounts(*names: str) -> list[Subject]:
    return [Subject("ServiceAccount", service_account=ServiceAccountSubject("kube-system", name)) for name in names]


def _resources(verbs: list[str], groups: list[str], resources: list[str], namespaces: list[str],
               cluster_scope: bool) -> ResourcePolicyRule:
    return ResourcePolicyRule(verbs, groups, resources, cluster_scope, namespaces)


def _everything(subjects: list[Subject]) -> PolicyRulesWithSubjects:
    """Every request of ``subjects``: any verb on any resource anywhere, and any other URL."""
    return PolicyRulesWithSubjects(subjects, [_resources([ALL], [ALL], [ALL], [ALL], True)],
                                   [NonResourcePolicyRule([ALL], [ALL])])


def _schema(name: str, level: str, precedence: int, distinguisher: str | None,
            *rules: PolicyRulesWithSubjects) -> FlowSchema:
    method = FlowDistinguisherMethod(distinguisher) if distinguisher else None
    spec = FlowSchemaSpec(PriorityLevelConfigurationReference(level), precedence, method, list(rules))
    return FlowSchema(ObjectMeta(name=name), spec)


def _leader_election(namespaces: list[str]) -> list[ResourcePolicyRule]:
    return [_resources(["get", "create", "update"], [""], ["endpoints", "configmaps"], namespaces, False),
            _resources(["get", "create", "update"], ["coordination.k8s.io"], ["leases"], [ALL], False)]


MANDATORY_LEVELS: dict[str, PriorityLevelConfiguration] = {
    EXEMPT: PriorityLevelConfiguration(ObjectMeta(name=EXEMPT), PriorityLevelConfigurationSpec(
        "Exempt", exempt=ExemptPriorityLevelConfiguration(nominal_concurrency_shares=0, lendable_percent=0))),
    CATCH_ALL: _level(CATCH_ALL, 5, 0, None),
}
MANDATORY_SCHEMAS: dict[str, FlowSchema] = {
    EXEMPT: _schema(EXEMPT, EXEMPT, 1, None, _everything(_groups("system:masters"))),
    CATCH_ALL: _schema(CATCH_ALL, CATCH_ALL, 10000, "ByUser", _everything(_groups("system:unauthenticated", "system:authenticated"))),
}
SUGGESTED_LEVELS: dict[str, PriorityLevelConfiguration] = {level.metadata.name or "": level for level in (
    _level("system", 30, 33, (64, 6, 50)),
    _level("node-high", 40, 25, (64, 6, 50)),
    _level("leader-election", 10, 0, (16, 4, 50)),
    _level("workload-high", 40, 50, (128, 6, 50)),
    _level("workload-low", 100, 90, (128, 6, 50)),
    _level("global-default", 20, 50, (128, 6, 50)),
)}
SUGGESTED_SCHEMAS: dict[str, FlowSchema] = {schema.metadata.name or "": schema for schema in (
    _schema("system-nodes", "system", 500, "ByUser", _everything(_groups("system:nodes"))),
    _schema("system-node-high", "node-high", 400, "ByUser", PolicyRulesWithSubjects(_groups("system:nodes"), [
        _resources([ALL], [""], ["nodes", "nodes/status"], [ALL], True),
        _resources([ALL], ["coordination.k8s.io"], ["leases"], [ALL], False)])),
    _schema("probes", EXEMPT, 2, None, PolicyRulesWithSubjects(
        _groups("system:unauthenticated", "system:authenticated"),
        non_resource_rules=[NonResourcePolicyRule(["get"], ["/healthz", "/readyz", "/livez"])])),
    _schema("system-leader-election", "leader-election", 100, "ByUser", PolicyRulesWithSubjects(
        _users(CONTROLLER_MANAGER, SCHEDULER) + _kube_system_accounts(ALL), _leader_election(["kube-system"]))),
    _schema("workload-leader-election", "leader-election", 200, "ByUser", PolicyRulesWithSubjects(
        _kube_system_accounts(ALL), _leader_election([ALL]))),
    _schema("endpoint-controller", "workload-high", 150, "ByUser", PolicyRulesWithSubjects(
        _users(CONTROLLER_MANAGER) + _kube_system_accounts("endpoint-controller", "endpointslicemirroring-controller"),
        [_resources(["get", "create", "update"], [""], ["endpoints"], [ALL], False)])),
    _schema("kube-controller-manager", "workload-high", 800, "ByNamespace", _everything(_users(CONTROLLER_MANAGER))),
    _schema("kube-scheduler", "workload-high", 800, "ByNamespace", _everything(_users(SCHEDULER))),
    _schema("kube-system-service-accounts", "workload-high", 900, "ByNamespace", _everything(_kube_system_accounts(ALL))),
    _schema("service-accounts", "workload-low", 9000, "ByUser", _everything(_groups("system:serviceaccounts"))),
    _schema("global-default", "global-default", 9900, "ByUser", _everything(_groups("system:unauthenticated", "system:authenticated"))),
)}
