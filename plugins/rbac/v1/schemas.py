"""Wire schemas of rbac.authorization.k8s.io/v1 (``k8s.io/api/rbac/v1``): Go writes ``rules``,
``verbs``, ``roleRef`` and a subject's ``kind`` and ``name`` even when empty."""

from __future__ import annotations

from kplane.api import LabelSelectorSchema, ObjectMetaSchema, Schema, fields

_ATOMIC = {"list_type": "atomic"}


def _strings(description: str, *, omitempty: bool = True, data_key: str | None = None) -> fields.List:
    meta = {**_ATOMIC, "description": description}
    if not omitempty:
        meta["omitempty"] = False
    return fields.List(fields.Str(), data_key=data_key, metadata=meta)


class PolicyRuleSchema(Schema):
    """What a rule allows: verbs on resources of API groups, optionally only the named ones, or verbs on
    non-resource URL paths (ClusterRoles only)."""

    verbs = _strings("Verbs the rule allows, e.g. get, list, watch, create; '*' is every verb.", omitempty=False)
    api_groups = _strings('API groups of the resources; "" is the core group, \'*\' every group.')
    resources = _strings("Resources the rule applies to; '*' is every resource, 'pods/log' a subresource, "
                         "'*/scale' that subresource of every resource.")
    resource_names = _strings("Names of the objects the rule applies to; empty means every object.")
    non_resource_urls = _strings("Partial URLs a user may reach, such as /healthz; a trailing '*' matches "
                                 "every path with that prefix. Only in ClusterRoles bound by ClusterRoleBindings.",
                                 data_key="nonResourceURLs")


class AggregationRuleSchema(Schema):
    """How a ClusterRole gathers the rules of other ClusterRoles."""

    cluster_role_selectors = fields.List(fields.Nested(LabelSelectorSchema), metadata={**_ATOMIC, "description": (
        "Selectors of the ClusterRoles whose rules this one gets; a ClusterRole matching any of them counts. "
        "The controller owns this role's rules when set."
    )})


_RULES_DESCRIPTION = "The rules of this role."


class RoleSchema(Schema):
    """A namespaced set of rules, granted in its namespace by RoleBindings."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    rules = fields.List(fields.Nested(PolicyRuleSchema), metadata={**_ATOMIC, "omitempty": False,
                                                                   "description": _RULES_DESCRIPTION})


class ClusterRoleSchema(Schema):
    """A cluster-wide set of rules, granted by ClusterRoleBindings everywhere or by RoleBindings in one
    namespace."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    rules = fields.List(fields.Nested(PolicyRuleSchema), metadata={**_ATOMIC, "omitempty": False, "description": (
        "The rules of this role. With an aggregationRule the controller writes them and changes made here "
        "are overwritten."
    )})
    aggregation_rule = fields.Nested(AggregationRuleSchema, metadata={"pointer": True, "description": (
        "Makes this role the union of the rules of the ClusterRoles it selects."
    )})


class SubjectSchema(Schema):
    """Whom a binding grants its role to: a User, a Group or a ServiceAccount."""

    kind = fields.Str(metadata={"omitempty": False, "description": "User, Group or ServiceAccount."})
    api_group = fields.Str(metadata={"description": (
        'The group of the subject\'s kind: "" for ServiceAccount, rbac.authorization.k8s.io for User and Group.'
    )})
    name = fields.Str(metadata={"omitempty": False, "description": "The name of the subject."})
    namespace = fields.Str(metadata={"description": (
        "The namespace of a ServiceAccount; in a RoleBinding, empty means the binding's namespace."
    )})


class RoleRefSchema(Schema):
    """The role a binding grants. It cannot change: delete the binding and make a new one."""

    api_group = fields.Str(metadata={"omitempty": False, "description": "rbac.authorization.k8s.io."})
    kind = fields.Str(metadata={"omitempty": False, "description": "Role or ClusterRole."})
    name = fields.Str(metadata={"omitempty": False, "description": "The name of the role."})


class RoleBindingSchema(Schema):
    """Grants the rules of a Role, or of a ClusterRole, to subjects in the binding's namespace."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    subjects = fields.List(fields.Nested(SubjectSchema), metadata={**_ATOMIC, "description": (
        "Whom the role is granted to."
    )})
    role_ref = fields.Nested(RoleRefSchema, metadata={"description": (
        "A Role in the binding's namespace or a ClusterRole. Immutable."
    )})


class ClusterRoleBindingSchema(Schema):
    """Grants the rules of a ClusterRole to subjects in every namespace and at the cluster scope."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    subjects = fields.List(fields.Nested(SubjectSchema), metadata={**_ATOMIC, "description": (
        "Whom the role is granted to."
    )})
    role_ref = fields.Nested(RoleRefSchema, metadata={"description": "A ClusterRole. Immutable."})
