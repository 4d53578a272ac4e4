"""Wire schemas of admissionregistration.k8s.io/v1alpha1: MutatingAdmissionPolicy and its
binding as kube 1.32 has them (v1beta1, kube 1.34, has the same shape), and the
ValidatingAdmissionPolicy kinds, whose shape is v1's."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields
from kplane.plugins.admissionregistration.v1.schemas import (
    MatchConditionSchema, MatchResourcesSchema, ParamKindSchema, ParamRefSchema, ValidatingAdmissionPolicyBindingSchema,
    ValidatingAdmissionPolicySchema, VariableSchema,
)

__all__ = ["MutatingAdmissionPolicyBindingSchema", "MutatingAdmissionPolicySchema", "ValidatingAdmissionPolicyBindingSchema",
           "ValidatingAdmissionPolicySchema"]

_META = "Standard object metadata; More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata."


class ApplyConfigurationSchema(Schema):
    """ApplyConfiguration defines the desired configuration values of an object."""

    expression = fields.Str(metadata={"description": (
        "expression will be evaluated by CEL to create an apply configuration: an object of the matched kind, "
        "`Object{spec: Object.spec{...}}`, merged into the request's object with the structural merge rules of "
        "server-side apply. The expression may use 'object', 'oldObject', 'request', 'params', "
        "'namespaceObject', 'variables' and 'authorizer'.")})


class JSONPatchSchema(Schema):
    """JSONPatch defines a JSON Patch."""

    expression = fields.Str(metadata={"description": (
        "expression will be evaluated by CEL to create a JSON patch (RFC 6902): a list of "
        "`JSONPatch{op: ..., path: ..., value: ...}` applied to the request's object.")})


class MutationSchema(Schema):
    """Mutation specifies the CEL expression which is used to apply the Mutation."""

    patch_type = fields.Str(metadata={"omitempty": False, "description": (
        "patchType indicates the patch strategy used. Allowed values are \"ApplyConfiguration\" and "
        "\"JSONPatch\". Required.")})
    apply_configuration = fields.Nested(ApplyConfigurationSchema, metadata={"pointer": True, "description": (
        "applyConfiguration defines the desired configuration values of an object. Required when patchType is "
        "ApplyConfiguration.")})
    json_patch = fields.Nested(JSONPatchSchema, metadata={"pointer": True, "description": (
        "jsonPatch defines a JSON patch operation to perform a mutation to the object. Required when patchType "
        "is JSONPatch.")})


class MutatingAdmissionPolicySpecSchema(Schema):
    """MutatingAdmissionPolicySpec is the specification of the desired behavior of the admission policy."""

    param_kind = fields.Nested(ParamKindSchema, metadata={"pointer": True, "description": (
        "paramKind specifies the kind of resources used to parameterize this policy.")})
    match_constraints = fields.Nested(MatchResourcesSchema, metadata={"pointer": True, "description": (
        "matchConstraints specifies what resources this policy is designed to validate. Only CREATE and UPDATE "
        "requests are supported. Required.")})
    variables = fields.List(fields.Nested(VariableSchema), metadata={"list_type": "atomic", "description": (
        "variables contain definitions of variables that can be used in composition of other expressions.")})
    mutations = fields.List(fields.Nested(MutationSchema), metadata={"list_type": "atomic", "description": (
        "mutations contain operations to perform on matching objects. mutations may not be empty; a minimum of "
        "one mutation is required. mutations are evaluated in order.")})
    failure_policy = fields.Str(metadata={"description": (
        "failurePolicy defines how to handle failures for the admission policy. Allowed values are Ignore or "
        "Fail. Defaults to Fail.")})
    match_conditions = fields.List(fields.Nested(MatchConditionSchema), metadata=fields.merge_by("name", description=(
        "matchConditions is a list of conditions that must be met for a request to be validated. There are a "
        "maximum of 64 match conditions allowed.")))
    reinvocation_policy = fields.Str(metadata={"description": (
        "reinvocationPolicy indicates whether mutations may be called multiple times per "
        "MutatingAdmissionPolicyBinding as part of a single admission evaluation. Allowed values are \"Never\" "
        "and \"IfNeeded\". Required.")})


class MutatingAdmissionPolicySchema(Schema):
    """MutatingAdmissionPolicy describes the definition of an admission mutation policy that mutates the object
    coming into admission chain."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(MutatingAdmissionPolicySpecSchema, metadata={"description": (
        "Specification of the desired behavior of the MutatingAdmissionPolicy.")})


class MutatingAdmissionPolicyBindingSpecSchema(Schema):
    """MutatingAdmissionPolicyBindingSpec is the specification of the MutatingAdmissionPolicyBinding."""

    policy_name = fields.Str(metadata={"description": (
        "policyName references a MutatingAdmissionPolicy name which the MutatingAdmissionPolicyBinding binds to. "
        "Required.")})
    param_ref = fields.Nested(ParamRefSchema, metadata={"pointer": True, "description": (
        "paramRef specifies the parameter resource used to configure the admission control policy.")})
    match_resources = fields.Nested(MatchResourcesSchema, metadata={"pointer": True, "description": (
        "matchResources limits what resources match this binding and may be mutated by it. Only CREATE and "
        "UPDATE requests are supported.")})


class MutatingAdmissionPolicyBindingSchema(Schema):
    """MutatingAdmissionPolicyBinding binds the MutatingAdmissionPolicy with parametrized resources."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(MutatingAdmissionPolicyBindingSpecSchema, metadata={"description": (
        "Specification of the desired behavior of the MutatingAdmissionPolicyBinding.")})
