"""Wire schemas of admissionregistration.k8s.io/v1 (``k8s.io/api/admissionregistration/v1``):
the webhook configurations, ValidatingAdmissionPolicy and its binding. v1beta1 and v1alpha1
reuse the policy schemas; the MutatingAdmissionPolicy ones live in ``v1alpha1``."""

from __future__ import annotations

from kplane.api import ConditionSchema, LabelSelectorSchema, ObjectMetaSchema, Schema, fields

_ATOMIC = {"list_type": "atomic"}
_META = "Standard object metadata; More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata."


class RuleWithOperationsSchema(Schema):
    """RuleWithOperations is a tuple of Operations and Resources. It is recommended to make sure that all the
    tuple expansions are valid."""

    operations = fields.List(fields.Str(), metadata={**_ATOMIC, "description": (
        "Operations is the operations the admission hook cares about - CREATE, UPDATE, DELETE, CONNECT or * for "
        "all of those operations and any future admission operations that are added. If '*' is present, the length "
        "of the slice must be one. Required.")})
    api_groups = fields.List(fields.Str(), metadata={**_ATOMIC, "description": (
        "APIGroups is the API groups the resources belong to. '*' is all groups. If '*' is present, the length of "
        "the slice must be one. Required.")})
    api_versions = fields.List(fields.Str(), metadata={**_ATOMIC, "description": (
        "APIVersions is the API versions the resources belong to. '*' is all versions. If '*' is present, the "
        "length of the slice must be one. Required.")})
    resources = fields.List(fields.Str(), metadata={**_ATOMIC, "description": (
        "Resources is a list of resources this rule applies to. For example: 'pods' means pods. 'pods/log' means "
        "the log subresource of pods. '*' means all resources, but not subresources. 'pods/*' means all "
        "subresources of pods. '*/scale' means all scale subresources. '*/*' means all resources and their "
        "subresources.")})
    scope = fields.Str(metadata={"description": (
        "scope specifies the scope of this rule. Valid values are \"Cluster\", \"Namespaced\", and \"*\". "
        "Default is \"*\".")})


class NamedRuleWithOperationsSchema(RuleWithOperationsSchema):
    """NamedRuleWithOperations is a tuple of Operations and Resources with ResourceNames."""

    resource_names = fields.List(fields.Str(), metadata={**_ATOMIC, "description": (
        "ResourceNames is an optional white list of names that the rule applies to. An empty set means that "
        "everything is allowed.")})


class ServiceReferenceSchema(Schema):
    """ServiceReference holds a reference to Service.legacy.k8s.io"""

    namespace = fields.Str(metadata={"omitempty": False, "description": "`namespace` is the namespace of the service. Required"})
    name = fields.Str(metadata={"omitempty": False, "description": "`name` is the name of the service. Required"})
    path = fields.Str(metadata={"description": "`path` is an optional URL path which will be sent in any request to this service."})
    port = fields.Int32(metadata={"description": (
        "If specified, the port on the service that hosting webhook. Default to 443 for backward compatibility. "
        "`port` should be a valid port number (1-65535, inclusive).")})


class WebhookClientConfigSchema(Schema):
    """WebhookClientConfig contains the information to make a TLS connection with the webhook"""

    url = fields.Str(metadata={"description": (
        "`url` gives the location of the webhook, in standard URL form (`scheme://host:port/path`). Exactly one "
        "of `url` or `service` must be specified. The scheme must be \"https\"; fragments and query parameters "
        "are not allowed.")})
    service = fields.Nested(ServiceReferenceSchema, metadata={"pointer": True, "description": (
        "`service` is a reference to the service for this webhook. Either `service` or `url` must be specified.")})
    ca_bundle = fields.Bytes(metadata={"description": (
        "`caBundle` is a PEM encoded CA bundle which will be used to validate the webhook's server certificate. "
        "If unspecified, system trust roots on the apiserver are used.")})


class MatchConditionSchema(Schema):
    """MatchCondition represents a condition which must by fulfilled for a request to be sent to a webhook."""

    name = fields.Str(metadata={"omitempty": False, "description": (
        "Name is an identifier for this match condition, used for strategic merging of MatchConditions, as well "
        "as providing an identifier for logging purposes. Required.")})
    expression = fields.Str(metadata={"omitempty": False, "description": (
        "Expression represents the expression which will be evaluated by CEL. Must evaluate to bool. CEL "
        "expressions have access to 'object', 'oldObject', 'request' and 'authorizer'. Required.")})


_MATCH_CONDITIONS = fields.merge_by("name", description=(
    "MatchConditions is a list of conditions that must be met for a request to be sent to this webhook. Match "
    "conditions filter requests that have already been matched by the rules, namespaceSelector, and "
    "objectSelector. An empty list of matchConditions matches all requests. There are a maximum of 64 match "
    "conditions allowed."))


class ValidatingWebhookSchema(Schema):
    """ValidatingWebhook describes an admission webhook and the resources and operations it applies to."""

    name = fields.Str(metadata={"omitempty": False, "description": (
        "The name of the admission webhook. Name should be fully qualified, e.g., imagepolicy.kubernetes.io, "
        "where \"imagepolicy\" is the name of the webhook, and kubernetes.io is the name of the organization. "
        "Required.")})
    client_config = fields.Nested(WebhookClientConfigSchema, metadata={"description": (
        "ClientConfig defines how to communicate with the hook. Required")})
    rules = fields.List(fields.Nested(RuleWithOperationsSchema), metadata={**_ATOMIC, "description": (
        "Rules describes what operations on what resources/subresources the webhook cares about. The webhook "
        "cares about an operation if it matches _any_ Rule. Webhooks are never called for "
        "ValidatingWebhookConfiguration and MutatingWebhookConfiguration objects.")})
    failure_policy = fields.Str(metadata={"description": (
        "FailurePolicy defines how unrecognized errors from the admission endpoint are handled - allowed "
        "values are Ignore or Fail. Defaults to Fail.")})
    match_policy = fields.Str(metadata={"description": (
        "matchPolicy defines how the \"rules\" list is used to match incoming requests. Allowed values are "
        "\"Exact\" or \"Equivalent\". Defaults to \"Equivalent\"")})
    namespace_selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True, "description": (
        "NamespaceSelector decides whether to run the webhook on an object based on whether the namespace "
        "for that object matches the selector. Default to the empty LabelSelector, which matches everything.")})
    object_selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True, "description": (
        "ObjectSelector decides whether to run the webhook based on if the object has matching labels. "
        "Default to the empty LabelSelector, which matches everything.")})
    side_effects = fields.Str(metadata={"description": (
        "SideEffects states whether this webhook has side effects. Acceptable values are: None, NoneOnDryRun. "
        "Requests with the dryRun attribute will be auto-rejected if they match a webhook with "
        "sideEffects == Unknown or Some.")})
    timeout_seconds = fields.Int32(metadata={"description": (
        "TimeoutSeconds specifies the timeout for this webhook. After the timeout passes, the webhook call "
        "will be ignored or the API call will fail based on the failure policy. The timeout value must be "
        "between 1 and 30 seconds. Default to 10 seconds.")})
    admission_review_versions = fields.List(fields.Str(), metadata={**_ATOMIC, "omitempty": False, "description": (
        "AdmissionReviewVersions is an ordered list of preferred `AdmissionReview` versions the Webhook "
        "expects. API server will try to use first version in the list which it supports.")})
    match_conditions = fields.List(fields.Nested(MatchConditionSchema), metadata=_MATCH_CONDITIONS)


class MutatingWebhookSchema(ValidatingWebhookSchema):
    """MutatingWebhook describes an admission webhook and the resources and operations it applies to."""

    reinvocation_policy = fields.Str(metadata={"description": (
        "reinvocationPolicy indicates whether this webhook should be called multiple times as part of a single "
        "admission evaluation. Allowed values are \"Never\" and \"IfNeeded\". Defaults to \"Never\".")})


class ValidatingWebhookConfigurationSchema(Schema):
    """ValidatingWebhookConfiguration describes the configuration of and admission webhook that accept or reject
    and object without changing it."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    webhooks = fields.List(fields.Nested(ValidatingWebhookSchema), metadata=fields.merge_by("name", description=(
        "Webhooks is a list of webhooks and the affected resources and operations.")))


class MutatingWebhookConfigurationSchema(Schema):
    """MutatingWebhookConfiguration describes the configuration of and admission webhook that accept or reject
    and may change the object."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    webhooks = fields.List(fields.Nested(MutatingWebhookSchema), metadata=fields.merge_by("name", description=(
        "Webhooks is a list of webhooks and the affected resources and operations.")))


# -- ValidatingAdmissionPolicy ------------------------------------------------------------------

class MatchResourcesSchema(Schema):
    """MatchResources decides whether to run the admission control policy on an object based on whether it meets
    the match criteria. The exclude rules take precedence over include rules (if a resource matches both, it is
    excluded)"""

    namespace_selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True, "description": (
        "NamespaceSelector decides whether to run the admission control policy on an object based on whether "
        "the namespace for that object matches the selector. Default to the empty LabelSelector, which matches "
        "everything.")})
    object_selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True, "description": (
        "ObjectSelector decides whether to run the validation based on if the object has matching labels. "
        "Default to the empty LabelSelector, which matches everything.")})
    resource_rules = fields.List(fields.Nested(NamedRuleWithOperationsSchema), metadata={**_ATOMIC, "description": (
        "ResourceRules describes what operations on what resources/subresources the ValidatingAdmissionPolicy "
        "matches. The policy cares about an operation if it matches _any_ Rule.")})
    exclude_resource_rules = fields.List(fields.Nested(NamedRuleWithOperationsSchema), metadata={**_ATOMIC, "description": (
        "ExcludeResourceRules describes what operations on what resources/subresources the "
        "ValidatingAdmissionPolicy should not care about. The exclude rules take precedence over include rules.")})
    match_policy = fields.Str(metadata={"description": (
        "matchPolicy defines how the \"MatchResources\" list is used to match incoming requests. Allowed values "
        "are \"Exact\" or \"Equivalent\". Defaults to \"Equivalent\"")})


class ParamKindSchema(Schema):
    """ParamKind is a tuple of Group Kind and Version."""

    api_version = fields.Str(metadata={"description": (
        "APIVersion is the API group version the resources belong to. In format of \"group/version\". Required.")})
    kind = fields.Str(metadata={"description": "Kind is the API kind the resources belong to. Required."})


class ValidationSchema(Schema):
    """Validation specifies the CEL expression which is used to apply the validation."""

    expression = fields.Str(metadata={"omitempty": False, "description": (
        "Expression represents the expression which will be evaluated by CEL. CEL expressions have access to "
        "'object', 'oldObject', 'request', 'params', 'namespaceObject', 'variables' and 'authorizer'. Required.")})
    message = fields.Str(metadata={"description": (
        "Message represents the message displayed when validation fails. If unspecified, the message is "
        "\"failed rule: {Rule}\".")})
    reason = fields.Str(metadata={"description": (
        "Reason represents a machine-readable description of why this validation failed: \"Unauthorized\", "
        "\"Forbidden\", \"Invalid\" or \"RequestEntityTooLarge\". If not set, StatusReasonInvalid is used.")})
    message_expression = fields.Str(metadata={"description": (
        "messageExpression declares a CEL expression that evaluates to the validation failure message that is "
        "returned when this rule fails. It must evaluate to a string.")})


class AuditAnnotationSchema(Schema):
    """AuditAnnotation describes how to produce an audit annotation for an API request."""

    key = fields.Str(metadata={"omitempty": False, "description": (
        "key specifies the audit annotation key. The audit annotation keys of a ValidatingAdmissionPolicy must "
        "be unique. The key must be a qualified name ([A-Za-z0-9][-A-Za-z0-9_.]*) no more than 63 bytes in "
        "length. Required.")})
    value_expression = fields.Str(metadata={"omitempty": False, "description": (
        "valueExpression represents the expression which is evaluated by CEL to produce an audit annotation "
        "value. The expression must evaluate to either a string or null value. Required.")})


class VariableSchema(Schema):
    """Variable is the definition of a variable that is used for composition."""

    name = fields.Str(metadata={"omitempty": False, "description": (
        "Name is the name of the variable. The name must be a valid CEL identifier and unique among all "
        "variables. The variable can be accessed in other expressions through `variables`.")})
    expression = fields.Str(metadata={"omitempty": False, "description": (
        "Expression is the expression that will be evaluated as the value of the variable.")})


_POLICY_MATCH_CONDITIONS = fields.merge_by("name", description=(
    "MatchConditions is a list of conditions that must be met for a request to be validated. An empty list of "
    "matchConditions matches all requests. There are a maximum of 64 match conditions allowed."))


class ValidatingAdmissionPolicySpecSchema(Schema):
    """ValidatingAdmissionPolicySpec is the specification of the desired behavior of the AdmissionPolicy."""

    param_kind = fields.Nested(ParamKindSchema, metadata={"pointer": True, "description": (
        "ParamKind specifies the kind of resources used to parameterize this policy. If absent, there are no "
        "parameters for this policy and the param CEL variable will not be provided to validation expressions.")})
    match_constraints = fields.Nested(MatchResourcesSchema, metadata={"pointer": True, "description": (
        "MatchConstraints specifies what resources this policy is designed to validate. Required.")})
    validations = fields.List(fields.Nested(ValidationSchema), metadata={**_ATOMIC, "description": (
        "Validations contain CEL expressions which is used to apply the validation.")})
    failure_policy = fields.Str(metadata={"description": (
        "failurePolicy defines how to handle failures for the admission policy. Allowed values are Ignore or "
        "Fail. Defaults to Fail.")})
    audit_annotations = fields.List(fields.Nested(AuditAnnotationSchema), metadata={**_ATOMIC, "description": (
        "auditAnnotations contains CEL expressions which are used to produce audit annotations for the audit "
        "event of the API request.")})
    match_conditions = fields.List(fields.Nested(MatchConditionSchema), metadata=_POLICY_MATCH_CONDITIONS)
    variables = fields.List(fields.Nested(VariableSchema), metadata={**_ATOMIC, "description": (
        "Variables contain definitions of variables that can be used in composition of other expressions.")})


class ExpressionWarningSchema(Schema):
    """ExpressionWarning is a warning information that targets a specific expression."""

    field_ref = fields.Str(metadata={"omitempty": False, "description": (
        "The path to the field that refers the expression. For example, the reference to the expression of the "
        "first item of validations is \"spec.validations[0].expression\"")})
    warning = fields.Str(metadata={"omitempty": False, "description": (
        "The content of type checking information in a human-readable form.")})


class TypeCheckingSchema(Schema):
    """TypeChecking contains results of type checking the expressions in the ValidatingAdmissionPolicy"""

    expression_warnings = fields.List(fields.Nested(ExpressionWarningSchema), metadata={**_ATOMIC, "description": (
        "The type checking warnings for each expression.")})


class ValidatingAdmissionPolicyStatusSchema(Schema):
    """ValidatingAdmissionPolicyStatus represents the status of an admission validation policy."""

    observed_generation = fields.Int(metadata={"description": "The generation observed by the controller."})
    type_checking = fields.Nested(TypeCheckingSchema, metadata={"pointer": True, "description": (
        "The results of type checking for each expression. Presence of this field indicates the completion of "
        "the type checking.")})
    conditions = fields.List(fields.Nested(ConditionSchema), metadata=fields.merge_by("type", description=(
        "The conditions represent the latest available observations of a policy's current state.")))


class ValidatingAdmissionPolicySchema(Schema):
    """ValidatingAdmissionPolicy describes the definition of an admission validation policy that accepts or
    rejects an object without changing it."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(ValidatingAdmissionPolicySpecSchema, metadata={"description": (
        "Specification of the desired behavior of the ValidatingAdmissionPolicy.")})
    status = fields.Nested(ValidatingAdmissionPolicyStatusSchema, metadata={"description": (
        "The status of the ValidatingAdmissionPolicy, including warnings that are useful to determine if the "
        "policy behaves in the expected way. Populated by the system. Read-only.")})


class ParamRefSchema(Schema):
    """ParamRef describes how to locate the params to be used as input to expressions of rules applied by a
    policy binding."""

    name = fields.Str(metadata={"description": (
        "name is the name of the resource being referenced. One of `name` or `selector` must be set, but `name` "
        "and `selector` are mutually exclusive properties.")})
    namespace = fields.Str(metadata={"description": (
        "namespace is the namespace of the referenced resource. Allows limiting the search for params to a "
        "specific namespace. Applies to both `name` and `selector` fields.")})
    selector = fields.Nested(LabelSelectorSchema, metadata={"pointer": True, "description": (
        "selector can be used to match multiple param objects based on their labels. Supply selector: {} to "
        "match all resources of the ParamKind.")})
    parameter_not_found_action = fields.Str(metadata={"description": (
        "`parameterNotFoundAction` controls the behavior of the binding when the resource exists, and name or "
        "selector is valid, but there are no parameters matched by the binding. Allowed values are `Allow` or "
        "`Deny`.")})


class ValidatingAdmissionPolicyBindingSpecSchema(Schema):
    """ValidatingAdmissionPolicyBindingSpec is the specification of the ValidatingAdmissionPolicyBinding."""

    policy_name = fields.Str(metadata={"description": (
        "PolicyName references a ValidatingAdmissionPolicy name which the ValidatingAdmissionPolicyBinding "
        "binds to. Required.")})
    param_ref = fields.Nested(ParamRefSchema, metadata={"pointer": True, "description": (
        "paramRef specifies the parameter resource used to configure the admission control policy.")})
    match_resources = fields.Nested(MatchResourcesSchema, metadata={"pointer": True, "description": (
        "MatchResources declares what resources match this binding and will be validated by it. If this is "
        "unset, all resources matched by the policy are validated by this binding.")})
    validation_actions = fields.List(fields.Str(), metadata={"list_type": "set", "description": (
        "validationActions declares how Validations of the referenced ValidatingAdmissionPolicy are enforced: "
        "Deny, Warn and/or Audit. Required.")})


class ValidatingAdmissionPolicyBindingSchema(Schema):
    """ValidatingAdmissionPolicyBinding binds the ValidatingAdmissionPolicy with paramerized resources."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(ValidatingAdmissionPolicyBindingSpecSchema, metadata={"description": (
        "Specification of the desired behavior of the ValidatingAdmissionPolicyBinding.")})
