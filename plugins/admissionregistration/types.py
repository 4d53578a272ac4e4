"""Internal types of admissionregistration.k8s.io (``pkg/apis/admissionregistration/types.go``):
webhook configurations, ValidatingAdmissionPolicy and MutatingAdmissionPolicy with their
bindings. One internal form serves every version: v1, v1beta1 and v1alpha1 have the same shape."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import Condition, LabelSelector, ObjectMeta

GROUP = "admissionregistration.k8s.io"
FAIL, IGNORE = "Fail", "Ignore"
FAILURE_POLICIES = [FAIL, IGNORE]
EQUIVALENT, EXACT = "Equivalent", "Exact"
MATCH_POLICIES = [EQUIVALENT, EXACT]
NEVER, IF_NEEDED = "Never", "IfNeeded"
REINVOCATION_POLICIES = [IF_NEEDED, NEVER]
ALL_SCOPES, CLUSTER_SCOPE, NAMESPACED_SCOPE = "*", "Cluster", "Namespaced"
SCOPES = [ALL_SCOPES, CLUSTER_SCOPE, NAMESPACED_SCOPE]
OPERATIONS = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"]
SIDE_EFFECTS = ["None", "NoneOnDryRun"]  # what v1 accepts (Unknown and Some are v1beta1's)
DENY, WARN, AUDIT = "Deny", "Warn", "Audit"
VALIDATION_ACTIONS = [AUDIT, DENY, WARN]
PARAMETER_NOT_FOUND_ACTIONS = [ALLOW := "Allow", DENY]
APPLY_CONFIGURATION, JSON_PATCH = "ApplyConfiguration", "JSONPatch"
PATCH_TYPES = [APPLY_CONFIGURATION, JSON_PATCH]
DEFAULT_TIMEOUT_SECONDS = 10


@dataclass(slots=True)
class RuleWithOperations:
    """kube's RuleWithOperations; as a policy's NamedRuleWithOperations ``resource_names`` is set too."""

    operations: list[str] | None = None
    api_groups: list[str] | None = None
    api_versions: list[str] | None = None
    resources: list[str] | None = None
    scope: str | None = None
    resource_names: list[str] | None = None


@dataclass(slots=True)
class ServiceReference:
    namespace: str = ""
    name: str = ""
    path: str | None = None
    port: int | None = None


@dataclass(slots=True)
class WebhookClientConfig:
    url: str | None = None
    service: ServiceReference | None = None
    ca_bundle: str | None = None  # base64, as on the wire


@dataclass(slots=True)
class MatchCondition:
    name: str = ""
    expression: str = ""


@dataclass(slots=True)
class Webhook:
    """A ValidatingWebhook, or a MutatingWebhook (which alone has ``reinvocation_policy``)."""

    name: str = ""
    client_config: WebhookClientConfig = field(default_factory=WebhookClientConfig)
    rules: list[RuleWithOperations] | None = None
    failure_policy: str | None = None
    match_policy: str | None = None
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    side_effects: str | None = None
    timeout_seconds: int | None = None
    admission_review_versions: list[str] | None = None
    reinvocation_policy: str | None = None
    match_conditions: list[MatchCondition] | None = None


@dataclass(slots=True)
class ValidatingWebhookConfiguration:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    webhooks: list[Webhook] | None = None


@dataclass(slots=True)
class MutatingWebhookConfiguration:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    webhooks: list[Webhook] | None = None


WebhookConfiguration = ValidatingWebhookConfiguration | MutatingWebhookConfiguration


@dataclass(slots=True)
class MatchResources:
    namespace_selector: LabelSelector | None = None
    object_selector: LabelSelector | None = None
    resource_rules: list[RuleWithOperations] | None = None
    exclude_resource_rules: list[RuleWithOperations] | None = None
    match_policy: str | None = None


@dataclass(slots=True)
class ParamKind:
    api_version: str | None = None
    kind: str | None = None


@dataclass(slots=True)
class Validation:
    expression: str = ""
    message: str | None = None
    reason: str | None = None
    message_expression: str | None = None


@dataclass(slots=True)
class AuditAnnotation:
    key: str = ""
    value_expression: str = ""


@dataclass(slots=True)
class Variable:
    name: str = ""
    expression: str = ""


@dataclass(slots=True)
class ValidatingAdmissionPolicySpec:
    param_kind: ParamKind | None = None
    match_constraints: MatchResources | None = None
    validations: list[Validation] | None = None
    failure_policy: str | None = None
    audit_annotations: list[AuditAnnotation] | None = None
    match_conditions: list[MatchCondition] | None = None
    variables: list[Variable] | None = None


@dataclass(slots=True)
class ExpressionWarning:
    field_ref: str = ""
    warning: str = ""


@dataclass(slots=True)
class TypeChecking:
    expression_warnings: list[ExpressionWarning] | None = None


@dataclass(slots=True)
class ValidatingAdmissionPolicyStatus:
    observed_generation: int | None = None
    type_checking: TypeChecking | None = None
    conditions: list[Condition] | None = None


@dataclass(slots=True)
class ValidatingAdmissionPolicy:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ValidatingAdmissionPolicySpec = field(default_factory=ValidatingAdmissionPolicySpec)
    status: ValidatingAdmissionPolicyStatus = field(default_factory=ValidatingAdmissionPolicyStatus)


@dataclass(slots=True)
class ParamRef:
    name: str | None = None
    namespace: str | None = None
    selector: LabelSelector | None = None
    parameter_not_found_action: str | None = None


@dataclass(slots=True)
class ValidatingAdmissionPolicyBindingSpec:
    policy_name: str | None = None
    param_ref: ParamRef | None = None
    match_resources: MatchResources | None = None
    validation_actions: list[str] | None = None


@dataclass(slots=True)
class ValidatingAdmissionPolicyBinding:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ValidatingAdmissionPolicyBindingSpec = field(default_factory=ValidatingAdmissionPolicyBindingSpec)


@dataclass(slots=True)
class ApplyConfiguration:
    expression: str | None = None


@dataclass(slots=True)
class JSONPatch:
    expression: str | None = None


@dataclass(slots=True)
class Mutation:
    patch_type: str = ""
    apply_configuration: ApplyConfiguration | None = None
    json_patch: JSONPatch | None = None


@dataclass(slots=True)
class MutatingAdmissionPolicySpec:
    param_kind: ParamKind | None = None
    match_constraints: MatchResources | None = None
    variables: list[Variable] | None = None
    mutations: list[Mutation] | None = None
    failure_policy: str | None = None
    match_conditions: list[MatchCondition] | None = None
    reinvocation_policy: str | None = None


@dataclass(slots=True)
class MutatingAdmissionPolicy:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: MutatingAdmissionPolicySpec = field(default_factory=MutatingAdmissionPolicySpec)


@dataclass(slots=True)
class MutatingAdmissionPolicyBindingSpec:
    policy_name: str | None = None
    param_ref: ParamRef | None = None
    match_resources: MatchResources | None = None


@dataclass(slots=True)
class MutatingAdmissionPolicyBinding:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: MutatingAdmissionPolicyBindingSpec = field(default_factory=MutatingAdmissionPolicyBindingSpec)
