"""Wire schemas of authorization.k8s.io/v1 (``k8s.io/api/authorization/v1``)."""

from __future__ import annotations

from kplane.api import LabelSelectorRequirementSchema, ObjectMetaSchema, Schema, fields


class FieldSelectorRequirementSchema(Schema):
    """One condition on a field."""

    key = fields.Str(metadata={"omitempty": False, "description": "The field selector key the requirement applies to."})
    operator = fields.Str(metadata={"omitempty": False, "description": (
        "The key's relationship to the values: In, NotIn, Exists or DoesNotExist (the list may grow)."
    )})
    values = fields.List(fields.Str(), metadata={"map_type": "atomic", "description": (
        "The values for In and NotIn (at least one); must be empty for Exists and DoesNotExist."
    )})


class FieldSelectorAttributesSchema(Schema):
    """Access limited by a field selector: a raw selector or its requirements, not both."""

    raw_selector = fields.Str(metadata={"description": "The field selector as a query parameter would hold it."})
    requirements = fields.List(fields.Nested(FieldSelectorRequirementSchema), metadata={"map_type": "atomic", "description": (
        "The parsed field selector: all requirements must be met."
    )})


class LabelSelectorAttributesSchema(Schema):
    """Access limited by a label selector: a raw selector or its requirements, not both."""

    raw_selector = fields.Str(metadata={"description": "The label selector as a query parameter would hold it."})
    requirements = fields.List(fields.Nested(LabelSelectorRequirementSchema), metadata={"map_type": "atomic", "description": (
        "The parsed label selector: all requirements must be met."
    )})


class ResourceAttributesSchema(Schema):
    """The attributes of a request for a resource, as authorizers see them."""

    namespace = fields.Str(metadata={"description": (
        "The namespace of the action. Empty: cluster-scoped resources, or every namespace for namespaced ones "
        "(in a SubjectAccessReview or SelfSubjectAccessReview); defaulted for LocalSubjectAccessReviews."
    )})
    verb = fields.Str(metadata={"description": "A Kubernetes resource API verb: get, list, watch, create, ...; \"*\": all."})
    group = fields.Str(metadata={"description": "The API group of the resource; \"*\": all."})
    version = fields.Str(metadata={"description": "The API version of the resource; \"*\": all."})
    resource = fields.Str(metadata={"description": "One of the existing resource types; \"*\": all."})
    subresource = fields.Str(metadata={"description": "One of the existing subresources; \"\": none."})
    name = fields.Str(metadata={"description": "The name of the resource asked for; \"\": all."})
    field_selector = fields.Nested(FieldSelectorAttributesSchema, metadata={"pointer": True, "description": (
        "Limits access by field. It can only limit access, not broaden it."
    )})
    label_selector = fields.Nested(LabelSelectorAttributesSchema, metadata={"pointer": True, "description": (
        "Limits access by label. It can only limit access, not broaden it."
    )})


class NonResourceAttributesSchema(Schema):
    """The attributes of a request for a path that is no resource (``/healthz``, discovery)."""

    path = fields.Str(metadata={"description": "The URL path of the request."})
    verb = fields.Str(metadata={"description": "The standard HTTP verb, lower-cased."})


class SelfSubjectAccessReviewSpecSchema(Schema):
    """The request to review for the requesting user; exactly one of the attributes is set."""

    resource_attributes = fields.Nested(ResourceAttributesSchema, metadata={"pointer": True, "description": (
        "The request for a resource; exactly one of resourceAttributes and nonResourceAttributes is set."
    )})
    non_resource_attributes = fields.Nested(NonResourceAttributesSchema, metadata={"pointer": True, "description": (
        "The request for a path that is no resource."
    )})


class SubjectAccessReviewSpecSchema(SelfSubjectAccessReviewSpecSchema):
    """The request to review, and whose it is (at least one of user and groups)."""

    user = fields.Str(metadata={"description": (
        "The user to test for. With a user but no groups, the question is what the user could do in no group."
    )})
    groups = fields.List(fields.Str(), metadata={"map_type": "atomic", "description": "The groups to test for."})
    extra = fields.Dict(keys=fields.Str(), values=fields.List(fields.Str()), metadata={"description": (
        "The user's extra information from the authenticator, an input to authorizers."
    )})
    uid = fields.Str(metadata={"description": "The UID of the user."})


class SubjectAccessReviewStatusSchema(Schema):
    """The decision."""

    allowed = fields.Bool(metadata={"omitempty": False, "description": "The action would be allowed."})
    denied = fields.Bool(metadata={"description": (
        "The action would be denied. With allowed and denied both false, no authorizer had an opinion. Never "
        "true with allowed."
    )})
    reason = fields.Str(metadata={"description": "Why the request was allowed or denied."})
    evaluation_error = fields.Str(metadata={"description": (
        "An error during the check; a decision may still have been reached despite it."
    )})


_METADATA = "Standard object metadata."
_SPEC = "The request being evaluated."
_DECISION = "Filled in by the server: whether the request is allowed."


class SubjectAccessReviewSchema(Schema):
    """SubjectAccessReview checks whether or not a user or group can perform an action. Nothing is stored."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _METADATA})
    spec = fields.Nested(SubjectAccessReviewSpecSchema, metadata={"description": _SPEC})
    status = fields.Nested(SubjectAccessReviewStatusSchema, metadata={"description": _DECISION})


class LocalSubjectAccessReviewSchema(Schema):
    """LocalSubjectAccessReview checks whether or not a user or group can perform an action in a given
    namespace, so that reviewing can be granted per namespace. spec.resourceAttributes.namespace must be the
    namespace of the request."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _METADATA})
    spec = fields.Nested(SubjectAccessReviewSpecSchema, metadata={"description": _SPEC})
    status = fields.Nested(SubjectAccessReviewStatusSchema, metadata={"description": _DECISION})


class SelfSubjectAccessReviewSchema(Schema):
    """SelfSubjectAccessReview checks whether or not the requesting user can perform an action (kubectl auth
    can-i). Leaving spec.resourceAttributes.namespace empty means in all namespaces."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _METADATA})
    spec = fields.Nested(SelfSubjectAccessReviewSpecSchema, metadata={"description": _SPEC})
    status = fields.Nested(SubjectAccessReviewStatusSchema, metadata={"description": _DECISION})


class ResourceRuleSchema(Schema):
    """What the user may do to resources."""

    verbs = fields.List(fields.Str(), metadata={"map_type": "atomic", "omitempty": False, "description": (
        "Kubernetes resource API verbs: get, list, watch, create, ...; \"*\": all."
    )})
    api_groups = fields.List(fields.Str(), metadata={"map_type": "atomic", "description": (
        "The API groups of the resources; \"*\": all."
    )})
    resources = fields.List(fields.Str(), metadata={"map_type": "atomic", "description": (
        "The resources; \"*\": all in the groups, \"*/foo\": the subresource foo of all of them."
    )})
    resource_names = fields.List(fields.Str(), metadata={"map_type": "atomic", "description": (
        "The names the rule applies to; empty: every name."
    )})


class NonResourceRuleSchema(Schema):
    """What the user may do to paths."""

    verbs = fields.List(fields.Str(), metadata={"map_type": "atomic", "omitempty": False, "description": (
        "Non-resource verbs: get, post, put, delete, patch, head, options; \"*\": all."
    )})
    non_resource_urls = fields.List(fields.Str(), data_key="nonResourceURLs", metadata={"map_type": "atomic", "description": (
        "Partial URLs; a \"*\" only as the final step of a path, \"*\" alone: all."
    )})


class SelfSubjectRulesReviewSpecSchema(Schema):
    """The namespace to list the rules of."""

    namespace = fields.Str(metadata={"description": "The namespace to evaluate rules for. Required."})


class SubjectRulesReviewStatusSchema(Schema):
    """What the user may do; possibly incomplete, depending on the authorization modes."""

    resource_rules = fields.List(fields.Nested(ResourceRuleSchema), metadata={"map_type": "atomic", "omitempty": False,
                                                                               "description": (
        "What the user may do to resources; order insignificant, may hold duplicates, may be incomplete."
    )})
    non_resource_rules = fields.List(fields.Nested(NonResourceRuleSchema), metadata={"map_type": "atomic", "omitempty": False,
                                                                                      "description": (
        "What the user may do to paths; order insignificant, may hold duplicates, may be incomplete."
    )})
    incomplete = fields.Bool(metadata={"omitempty": False, "description": (
        "An authorizer (such as a webhook) could not list all it allows."
    )})
    evaluation_error = fields.Str(metadata={"description": "Why the rules may be incomplete."})


class SelfSubjectRulesReviewSchema(Schema):
    """SelfSubjectRulesReview lists what the requesting user may do in a namespace (kubectl auth can-i
    --list). It may be incomplete depending on the authorization modes: it is for UIs, not for authorization
    decisions."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _METADATA})
    spec = fields.Nested(SelfSubjectRulesReviewSpecSchema, metadata={"description": _SPEC})
    status = fields.Nested(SubjectRulesReviewStatusSchema, metadata={"description": (
        "Filled in by the server: what the user may do."
    )})
