"""Protobuf tables of rbac.authorization.k8s.io/v1, which ``kubectl create role|clusterrole|rolebinding|
clusterrolebinding`` send.

Field numbers are those of ``k8s.io/api`` v0.32 ``rbac/v1/generated.proto``; see
:mod:`kplane.core.runtime.protobuf` for the format.
"""

from __future__ import annotations

from kplane.api import LABEL_SELECTOR, OBJECT_META, Field, Message

POLICY_RULE = Message(
    "PolicyRule",
    {
        1: Field("verbs", "string", repeated=True),
        2: Field("apiGroups", "string", repeated=True),
        3: Field("resources", "string", repeated=True),
        4: Field("resourceNames", "string", repeated=True),
        5: Field("nonResourceURLs", "string", repeated=True),
    },
)

AGGREGATION_RULE = Message("AggregationRule", {1: Field("clusterRoleSelectors", LABEL_SELECTOR, repeated=True)})

SUBJECT = Message(
    "Subject",
    {1: Field("kind", "string"), 2: Field("apiGroup", "string"), 3: Field("name", "string"), 4: Field("namespace", "string")},
)

ROLE_REF = Message("RoleRef", {1: Field("apiGroup", "string"), 2: Field("kind", "string"), 3: Field("name", "string")})

ROLE = Message("Role", {1: Field("metadata", OBJECT_META), 2: Field("rules", POLICY_RULE, repeated=True)})

CLUSTER_ROLE = Message(
    "ClusterRole",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("rules", POLICY_RULE, repeated=True),
        3: Field("aggregationRule", AGGREGATION_RULE, pointer=True),
    },
)

ROLE_BINDING = Message(
    "RoleBinding",
    {1: Field("metadata", OBJECT_META), 2: Field("subjects", SUBJECT, repeated=True), 3: Field("roleRef", ROLE_REF)},
)

CLUSTER_ROLE_BINDING = Message(
    "ClusterRoleBinding",
    {1: Field("metadata", OBJECT_META), 2: Field("subjects", SUBJECT, repeated=True), 3: Field("roleRef", ROLE_REF)},
)

MESSAGES = {"Role": ROLE, "ClusterRole": CLUSTER_ROLE, "RoleBinding": ROLE_BINDING, "ClusterRoleBinding": CLUSTER_ROLE_BINDING}
