"""Wire schemas of flowcontrol.apiserver.k8s.io/v1 and their defaulting
(``pkg/apis/flowcontrol/v1/defaults.go``)."""

from __future__ import annotations

from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields

_META = "`metadata` is the standard object's metadata."
_SET = {"list_type": "set", "omitempty": False}


class UserSubjectSchema(Schema):
    """UserSubject holds detailed information for user-kind subject."""

    name = fields.Str(metadata={"omitempty": False, "description": "`name` is the username that matches, or \"*\" to match all usernames. Required."})


class GroupSubjectSchema(Schema):
    """GroupSubject holds detailed information for group-kind subject."""

    name = fields.Str(metadata={"omitempty": False, "description": (
        "name is the user group that matches, or \"*\" to match all user groups. Required.")})


class ServiceAccountSubjectSchema(Schema):
    """ServiceAccountSubject holds detailed information for service-account-kind subject."""

    namespace = fields.Str(metadata={"omitempty": False, "description": "`namespace` is the namespace of matching ServiceAccount objects. Required."})
    name = fields.Str(metadata={"omitempty": False, "description": (
        "`name` is the name of matching ServiceAccount objects, or \"*\" to match regardless of name. Required.")})


class SubjectSchema(Schema):
    """Subject matches the originator of a request, as identified by the request authentication system."""

    kind = fields.Str(metadata={"omitempty": False, "description": (
        "`kind` indicates which one of the other fields is non-empty: User, Group or ServiceAccount. Required.")})
    user = fields.Nested(UserSubjectSchema, metadata={"pointer": True, "description": "`user` matches based on username."})
    group = fields.Nested(GroupSubjectSchema, metadata={"pointer": True, "description": "`group` matches based on user group name."})
    service_account = fields.Nested(ServiceAccountSubjectSchema, metadata={"pointer": True, "description": "`serviceAccount` matches ServiceAccounts."})


class ResourcePolicyRuleSchema(Schema):
    """ResourcePolicyRule is a predicate that matches some resource requests, testing the request's verb and the
    target resource."""

    verbs = fields.List(fields.Str(), metadata={**_SET, "description": (
        "`verbs` is a list of matching verbs and may not be empty. \"*\" matches all verbs. Required.")})
    api_groups = fields.List(fields.Str(), metadata={**_SET, "description": (
        "`apiGroups` is a list of matching API groups and may not be empty. \"*\" matches all API groups. Required.")})
    resources = fields.List(fields.Str(), metadata={**_SET, "description": (
        "`resources` is a list of matching resources (lowercase and plural, with a subresource if desired, "
        "e.g. \"pods/log\") and may not be empty. \"*\" matches all resources. Required.")})
    cluster_scope = fields.Bool(metadata={"description": (
        "`clusterScope` indicates whether to match requests that do not specify a namespace.")})
    namespaces = fields.List(fields.Str(), metadata={"list_type": "set", "description": (
        "`namespaces` is a list of target namespaces that restricts matches; \"*\" matches every namespace.")})


class NonResourcePolicyRuleSchema(Schema):
    """NonResourcePolicyRule is a predicate that matches non-resource requests according to their verb and the
    target non-resource URL."""

    verbs = fields.List(fields.Str(), metadata={**_SET, "description": (
        "`verbs` is a list of matching verbs and may not be empty. \"*\" matches all verbs. Required.")})
    non_resource_urls = fields.List(fields.Str(), data_key="nonResourceURLs", metadata={**_SET, "description": (
        "`nonResourceURLs` is a set of url prefixes that a user should have access to and may not be empty; "
        "\"/healthz/*\" matches everything under /healthz/, \"*\" every URL. Required.")})


class PolicyRulesWithSubjectsSchema(Schema):
    """PolicyRulesWithSubjects prescribes a test that applies to a request to an apiserver: it matches when one
    subject and one of the rules match it."""

    subjects = fields.List(fields.Nested(SubjectSchema), metadata={"list_type": "atomic", "omitempty": False, "description": (
        "subjects is the list of normal user, serviceaccount, or group that this rule cares about. Required.")})
    resource_rules = fields.List(fields.Nested(ResourcePolicyRuleSchema), metadata={"list_type": "atomic", "description": (
        "`resourceRules` is a slice of ResourcePolicyRules that identify matching requests according to their verb "
        "and the target resource.")})
    non_resource_rules = fields.List(fields.Nested(NonResourcePolicyRuleSchema), metadata={"list_type": "atomic", "description": (
        "`nonResourceRules` is a list of NonResourcePolicyRules that identify matching requests according to their "
        "verb and the target non-resource URL.")})


class PriorityLevelConfigurationReferenceSchema(Schema):
    """PriorityLevelConfigurationReference contains information that points to the \"request-priority\" being used."""

    name = fields.Str(metadata={"omitempty": False, "description": (
        "`name` is the name of the priority level configuration being referenced Required.")})


class FlowDistinguisherMethodSchema(Schema):
    """FlowDistinguisherMethod specifies the method of a flow distinguisher."""

    type = fields.Str(metadata={"omitempty": False, "description": (
        "`type` is the type of flow distinguisher method: ByUser or ByNamespace. Required.")})


class FlowSchemaSpecSchema(Schema):
    """FlowSchemaSpec describes how the FlowSchema's specification looks like."""

    priority_level_configuration = fields.Nested(PriorityLevelConfigurationReferenceSchema, metadata={"omitempty": False, "description": (
        "`priorityLevelConfiguration` should reference a PriorityLevelConfiguration in the cluster. If the reference "
        "cannot be resolved, the FlowSchema will be ignored and marked as invalid in its status. Required.")})
    matching_precedence = fields.Int32(metadata={"description": (
        "`matchingPrecedence` is used to choose among the FlowSchemas that match a given request. The chosen "
        "FlowSchema is among those with the numerically lowest (which we take to be logically highest) "
        "MatchingPrecedence. Each MatchingPrecedence value must be ranged in [1,10000]. Note that if the precedence "
        "is not specified, it will be set to 1000 as default.")})
    distinguisher_method = fields.Nested(FlowDistinguisherMethodSchema, metadata={"pointer": True, "description": (
        "`distinguisherMethod` defines how to compute the flow distinguisher for requests that match this schema. "
        "`nil` specifies that the distinguisher is disabled and thus will always be the empty string.")})
    rules = fields.List(fields.Nested(PolicyRulesWithSubjectsSchema), metadata={"list_type": "atomic", "description": (
        "`rules` describes which requests will match this flow schema. This FlowSchema matches a request if and only "
        "if at least one member of rules matches the request. if it is an empty slice, there will be no requests "
        "matching the FlowSchema.")})


class FlowControlConditionSchema(Schema):
    """A condition of a FlowSchema or PriorityLevelConfiguration."""

    type = fields.Str(metadata={"description": "`type` is the type of the condition. Required."})
    status = fields.Str(metadata={"description": "`status` is the status of the condition. Can be True, False, Unknown. Required."})
    last_transition_time = fields.Time(metadata={"description": (
        "`lastTransitionTime` is the last time the condition transitioned from one status to another.")})
    reason = fields.Str(metadata={"description": "`reason` is a unique, one-word, CamelCase reason for the condition's last transition."})
    message = fields.Str(metadata={"description": "`message` is a human-readable message indicating details about last transition."})


class FlowControlStatusSchema(Schema):
    """The current status of the object."""

    conditions = fields.List(fields.Nested(FlowControlConditionSchema), metadata=fields.merge_by("type", description=(
        "`conditions` is a list of the current states of the object.")))


class FlowSchemaSchema(Schema):
    """FlowSchema defines the schema of a group of flows. Note that a flow is made up of a set of inbound API
    requests with similar attributes and is identified by a pair of strings: the name of the FlowSchema and a
    \"flow distinguisher\"."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(FlowSchemaSpecSchema, metadata={"description": (
        "`spec` is the specification of the desired behavior of a FlowSchema.")})
    status = fields.Nested(FlowControlStatusSchema, metadata={"description": "`status` is the current status of a FlowSchema."})


class QueuingConfigurationSchema(Schema):
    """QueuingConfiguration holds the configuration parameters for queuing."""

    queues = fields.Int32(metadata={"omitempty": False, "description": (
        "`queues` is the number of queues for this priority level. The queues exist independently at each "
        "apiserver. The value must be positive. Setting it to 1 effectively precludes shufflesharding and thus "
        "makes the distinguisher method of associated flow schemas irrelevant. This field has a default value of 64.")})
    hand_size = fields.Int32(metadata={"omitempty": False, "description": (
        "`handSize` is a small positive number that configures the shuffle sharding of requests into queues. When "
        "enqueuing a request at this priority level the request's flow identifier (a string pair) is hashed and the "
        "hash value is used to shuffle the list of queues and deal a hand of the size specified here. handSize must "
        "be no larger than `queues`. This field has a default value of 8.")})
    queue_length_limit = fields.Int32(metadata={"omitempty": False, "description": (
        "`queueLengthLimit` is the maximum number of requests allowed to be waiting in a given queue of this "
        "priority level at a time; excess requests are rejected. This value must be positive. If not specified, "
        "it will be defaulted to 50.")})


class LimitResponseSchema(Schema):
    """LimitResponse defines how to handle requests that can not be executed right now."""

    type = fields.Str(metadata={"omitempty": False, "description": (
        "`type` is \"Queue\" or \"Reject\". \"Queue\" means that requests that can not be executed upon arrival are "
        "held in a queue until they can be executed or a queuing limit is reached. \"Reject\" means that requests "
        "that can not be executed upon arrival are rejected. Required.")})
    queuing = fields.Nested(QueuingConfigurationSchema, metadata={"pointer": True, "description": (
        "`queuing` holds the configuration parameters for queuing. This field may be non-empty only if `type` is "
        "`\"Queue\"`.")})


class LimitedPriorityLevelConfigurationSchema(Schema):
    """LimitedPriorityLevelConfiguration specifies how to handle requests that are subject to limits."""

    nominal_concurrency_shares = fields.Int32(allow_none=True, metadata={"description": (
        "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) "
        "of this level: the number of execution seats available at this priority level. If not specified, this "
        "field defaults to a value of 30. Setting this field to zero supports the construction of a \"jail\" for "
        "this priority level that is used to hold some request(s)")})
    limit_response = fields.Nested(LimitResponseSchema, metadata={"description": (
        "`limitResponse` indicates what to do with requests that can not be executed right now")})
    lendable_percent = fields.Int32(metadata={"description": (
        "`lendablePercent` prescribes the fraction of the level's NominalCL that can be borrowed by other priority "
        "levels. The value of this field must be between 0 and 100, inclusive, and it defaults to 0.")})
    borrowing_limit_percent = fields.Int32(metadata={"description": (
        "`borrowingLimitPercent`, if present, configures a limit on how many seats this priority level can borrow "
        "from other priority levels, as a percentage of its NominalCL; if absent, there is no limit.")})


class ExemptPriorityLevelConfigurationSchema(Schema):
    """ExemptPriorityLevelConfiguration describes the configurable aspects of the handling of exempt requests."""

    nominal_concurrency_shares = fields.Int32(metadata={"description": (
        "`nominalConcurrencyShares` (NCS) contributes to the computation of the NominalConcurrencyLimit (NominalCL) "
        "of this level. The default value of this field is zero.")})
    lendable_percent = fields.Int32(metadata={"description": (
        "`lendablePercent` prescribes the fraction of the level's NominalCL that can be borrowed by other priority "
        "levels. This value of this field must be between 0 and 100, inclusive, and it defaults to 0.")})


class PriorityLevelConfigurationSpecSchema(Schema):
    """PriorityLevelConfigurationSpec specifies the configuration of a priority level."""

    type = fields.Str(metadata={"omitempty": False, "description": (
        "`type` indicates whether this priority level is subject to limitation on request execution. A value of "
        "`\"Exempt\"` means that requests of this priority level are not subject to a limit (and thus are never "
        "queued) and do not detract from the capacity made available to other priority levels. A value of "
        "`\"Limited\"` means that (a) requests of this priority level _are_ subject to limits and (b) some of the "
        "server's limited capacity is made available exclusively to this priority level. Required.")})
    limited = fields.Nested(LimitedPriorityLevelConfigurationSchema, metadata={"pointer": True, "description": (
        "`limited` specifies how requests are handled for a Limited priority level. This field must be non-empty "
        "if and only if `type` is `\"Limited\"`.")})
    exempt = fields.Nested(ExemptPriorityLevelConfigurationSchema, metadata={"pointer": True, "description": (
        "`exempt` specifies how requests are handled for an exempt priority level. This field MUST be empty if "
        "`type` is `\"Limited\"`.")})


class PriorityLevelConfigurationSchema(Schema):
    """PriorityLevelConfiguration represents the configuration of a priority level."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(PriorityLevelConfigurationSpecSchema, metadata={"description": (
        "`spec` is the specification of the desired behavior of a \"request-priority\".")})
    status = fields.Nested(FlowControlStatusSchema, metadata={"description": (
        "`status` is the current status of a \"request-priority\".")})


def _ensure(parent: dict[str, Any], key: str) -> dict[str, Any]:
    if parent.get(key) is None:
        parent[key] = {}
    return parent[key]


def default_flow_schema(flow_schema: dict[str, Any]) -> None:
    """``SetDefaults_FlowSchemaSpec``: matchingPrecedence 1000."""
    spec = _ensure(flow_schema, "spec")
    if not spec.get("matching_precedence"):
        spec["matching_precedence"] = 1000


def default_priority_level(level: dict[str, Any]) -> None:
    """v1's defaults: a Limited level's nominalConcurrencyShares 30 when unset (0 stays: a "jail"),
    lendablePercent 0; queuing 64 queues, hand 8, length 50; an exempt level's shares and lendable 0."""
    spec = _ensure(level, "spec")
    if (limited := spec.get("limited")) is not None:
        if limited.get("nominal_concurrency_shares") is None:
            limited["nominal_concurrency_shares"] = 30
        if limited.get("lendable_percent") is None:
            limited["lendable_percent"] = 0
        queuing = (limited.get("limit_response") or {}).get("queuing")
        if queuing is not None:
            for key, value in (("hand_size", 8), ("queues", 64), ("queue_length_limit", 50)):
                if not queuing.get(key):
                    queuing[key] = value
    if (exempt := spec.get("exempt")) is not None:
        for key in ("nominal_concurrency_shares", "lendable_percent"):
            if exempt.get(key) is None:
                exempt[key] = 0
