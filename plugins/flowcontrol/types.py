"""Internal types of flowcontrol.apiserver.k8s.io (``pkg/apis/flowcontrol/types.go``): the
FlowSchemas that classify requests and the PriorityLevelConfigurations they go to."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta

GROUP = "flowcontrol.apiserver.k8s.io"
AUTO_UPDATE = "apf.kubernetes.io/autoupdate-spec"
DANGLING = "Dangling"
EXEMPT = "exempt"
CATCH_ALL = "catch-all"


@dataclass(slots=True)
class UserSubject:
    name: str = ""


@dataclass(slots=True)
class GroupSubject:
    name: str = ""


@dataclass(slots=True)
class ServiceAccountSubject:
    namespace: str = ""
    name: str = ""


@dataclass(slots=True)
class Subject:
    kind: str = ""
    user: UserSubject | None = None
    group: GroupSubject | None = None
    service_account: ServiceAccountSubject | None = None


@dataclass(slots=True)
class ResourcePolicyRule:
    verbs: list[str] = field(default_factory=list)
    api_groups: list[str] = field(default_factory=list)
    resources: list[str] = field(default_factory=list)
    cluster_scope: bool = False
    namespaces: list[str] = field(default_factory=list)


@dataclass(slots=True)
class NonResourcePolicyRule:
    verbs: list[str] = field(default_factory=list)
    non_resource_urls: list[str] = field(default_factory=list)


@dataclass(slots=True)
class PolicyRulesWithSubjects:
    subjects: list[Subject] = field(default_factory=list)
    resource_rules: list[ResourcePolicyRule] | None = None
    non_resource_rules: list[NonResourcePolicyRule] | None = None


@dataclass(slots=True)
class PriorityLevelConfigurationReference:
    name: str = ""


@dataclass(slots=True)
class FlowDistinguisherMethod:
    type: str = ""


@dataclass(slots=True)
class FlowSchemaSpec:
    priority_level_configuration: PriorityLevelConfigurationReference = field(default_factory=PriorityLevelConfigurationReference)
    matching_precedence: int = 0
    distinguisher_method: FlowDistinguisherMethod | None = None
    rules: list[PolicyRulesWithSubjects] | None = None


@dataclass(slots=True)
class FlowControlCondition:
    """FlowSchemaCondition and PriorityLevelConfigurationCondition, which have one shape."""

    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str = ""
    message: str = ""


@dataclass(slots=True)
class FlowControlStatus:
    conditions: list[FlowControlCondition] | None = None


@dataclass(slots=True)
class FlowSchema:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: FlowSchemaSpec = field(default_factory=FlowSchemaSpec)
    status: FlowControlStatus = field(default_factory=FlowControlStatus)


@dataclass(slots=True)
class QueuingConfiguration:
    queues: int = 0
    hand_size: int = 0
    queue_length_limit: int = 0


@dataclass(slots=True)
class LimitResponse:
    type: str = ""
    queuing: QueuingConfiguration | None = None


@dataclass(slots=True)
class LimitedPriorityLevelConfiguration:
    nominal_concurrency_shares: int | None = None
    limit_response: LimitResponse = field(default_factory=LimitResponse)
    lendable_percent: int | None = None
    borrowing_limit_percent: int | None = None


@dataclass(slots=True)
class ExemptPriorityLevelConfiguration:
    nominal_concurrency_shares: int | None = None
    lendable_percent: int | None = None


@dataclass(slots=True)
class PriorityLevelConfigurationSpec:
    type: str = ""
    limited: LimitedPriorityLevelConfiguration | None = None
    exempt: ExemptPriorityLevelConfiguration | None = None


@dataclass(slots=True)
class PriorityLevelConfiguration:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PriorityLevelConfigurationSpec = field(default_factory=PriorityLevelConfigurationSpec)
    status: FlowControlStatus = field(default_factory=FlowControlStatus)
