"""Protobuf table of apiregistration.k8s.io/v1 APIService.

Field numbers are those of ``k8s.io/kube-aggregator`` v0.32
``pkg/apis/apiregistration/v1/generated.proto`` (number 6, the old ``priority``, is retired);
see :mod:`kplane.core.runtime.protobuf` for the format.
"""

from __future__ import annotations

from kplane.api import OBJECT_META, TIME, Field, Message

SERVICE_REFERENCE = Message(
    "ServiceReference",
    {
        1: Field("namespace", "string"),
        2: Field("name", "string"),
        3: Field("port", "int32", pointer=True),
    },
)


API_SERVICE_SPEC = Message(
    "APIServiceSpec",
    {
        1: Field("service", SERVICE_REFERENCE),
        2: Field("group", "string"),
        3: Field("version", "string"),
        4: Field("insecureSkipTLSVerify", "bool"),
        5: Field("caBundle", "bytes"),
        7: Field("groupPriorityMinimum", "int32"),
        8: Field("versionPriority", "int32"),
    },
)


API_SERVICE_CONDITION = Message(
    "APIServiceCondition",
    {
        1: Field("type", "string"),
        2: Field("status", "string"),
        3: Field("lastTransitionTime", TIME),
        4: Field("reason", "string"),
        5: Field("message", "string"),
    },
)


API_SERVICE = Message(
    "APIService",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", API_SERVICE_SPEC),
        3: Field("status", Message("APIServiceStatus", {1: Field("conditions", API_SERVICE_CONDITION, repeated=True)})),
    },
)
