"""Protobuf tables of apps/v1 Deployment (``kubectl create deployment``) and ReplicaSet.

Field numbers are those of ``k8s.io/api`` ``apps/v1/generated.proto`` (v0.32, plus the
``terminatingReplicas`` counts our schemas already serve); see :mod:`kplane.core.runtime.protobuf` for
the format. The pod template comes from core/v1's tables.
"""

from __future__ import annotations

from kplane.api import INT_OR_STRING, LABEL_SELECTOR, OBJECT_META, TIME, Field, Message
from kplane.plugins.core.v1.protobuf import POD_TEMPLATE_SPEC

ROLLING_UPDATE_DEPLOYMENT = Message(
    "RollingUpdateDeployment", {1: Field("maxUnavailable", INT_OR_STRING), 2: Field("maxSurge", INT_OR_STRING)}
)

DEPLOYMENT_STRATEGY = Message(
    "DeploymentStrategy", {1: Field("type", "string"), 2: Field("rollingUpdate", ROLLING_UPDATE_DEPLOYMENT)}
)

DEPLOYMENT_SPEC = Message(
    "DeploymentSpec",
    {
        1: Field("replicas", "int32", pointer=True),
        2: Field("selector", LABEL_SELECTOR),
        3: Field("template", POD_TEMPLATE_SPEC),
        4: Field("strategy", DEPLOYMENT_STRATEGY),
        5: Field("minReadySeconds", "int32"),
        6: Field("revisionHistoryLimit", "int32", pointer=True),
        7: Field("paused", "bool"),
        9: Field("progressDeadlineSeconds", "int32", pointer=True),
    },
)

DEPLOYMENT_CONDITION = Message(
    "DeploymentCondition",
    {
        1: Field("type", "string"),
        2: Field("status", "string"),
        6: Field("lastUpdateTime", TIME),
        7: Field("lastTransitionTime", TIME),
        4: Field("reason", "string"),
        5: Field("message", "string"),
    },
)

DEPLOYMENT_STATUS = Message(
    "DeploymentStatus",
    {
        1: Field("observedGeneration", "int64"),
        2: Field("replicas", "int32"),
        3: Field("updatedReplicas", "int32"),
        7: Field("readyReplicas", "int32"),
        4: Field("availableReplicas", "int32"),
        5: Field("unavailableReplicas", "int32"),
        9: Field("terminatingReplicas", "int32", pointer=True),
        6: Field("conditions", DEPLOYMENT_CONDITION, repeated=True),
        8: Field("collisionCount", "int32", pointer=True),
    },
)

DEPLOYMENT = Message(
    "Deployment",
    {1: Field("metadata", OBJECT_META), 2: Field("spec", DEPLOYMENT_SPEC), 3: Field("status", DEPLOYMENT_STATUS)},
)

REPLICA_SET_SPEC = Message(
    "ReplicaSetSpec",
    {
        1: Field("replicas", "int32", pointer=True),
        4: Field("minReadySeconds", "int32"),
        2: Field("selector", LABEL_SELECTOR),
        3: Field("template", POD_TEMPLATE_SPEC),
    },
)


REPLICA_SET_CONDITION = Message(
    "ReplicaSetCondition",
    {
        1: Field("type", "string"),
        2: Field("status", "string"),
        3: Field("lastTransitionTime", TIME),
        4: Field("reason", "string"),
        5: Field("message", "string"),
    },
)


REPLICA_SET_STATUS = Message(
    "ReplicaSetStatus",
    {
        1: Field("replicas", "int32"),
        2: Field("fullyLabeledReplicas", "int32"),
        4: Field("readyReplicas", "int32"),
        5: Field("availableReplicas", "int32"),
        3: Field("observedGeneration", "int64"),
        7: Field("terminatingReplicas", "int32", pointer=True),
        6: Field("conditions", REPLICA_SET_CONDITION, repeated=True),
    },
)


REPLICA_SET = Message(
    "ReplicaSet",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", REPLICA_SET_SPEC),
        3: Field("status", REPLICA_SET_STATUS),
    },
)
