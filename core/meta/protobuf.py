"""Protobuf tables of the shared apimachinery types, for the kinds' own tables to embed.

Field numbers are those of ``k8s.io/apimachinery`` ``pkg/apis/meta/v1/generated.proto``,
``pkg/util/intstr/generated.proto`` and ``pkg/api/resource/generated.proto``; see
:mod:`kplane.core.runtime.protobuf` for the table format and the JSON rules.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

from kplane.core.runtime.protobuf import Field, Message, ProtobufError


def _time(decoded: dict[str, Any]) -> str | None:
    """RFC 3339 in whole seconds, as metav1.Time writes JSON (it drops nanos, so do we).

    Zero seconds is the unset time kubectl sends as ``creationTimestamp``: left out, as JSON
    clients leave out ``null``.
    """
    seconds = decoded.get("seconds", 0)
    if not seconds:
        return None
    try:
        return datetime.fromtimestamp(seconds, UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
    except (OverflowError, OSError, ValueError):
        raise ProtobufError(f"Time: {seconds} seconds is out of range") from None


def _micro_time(decoded: dict[str, Any]) -> str | None:
    """RFC 3339 with six fractional digits in UTC, as metav1.MicroTime writes JSON; zero is unset."""
    seconds, nanos = decoded.get("seconds", 0), decoded.get("nanos", 0)
    if not seconds and not nanos:
        return None
    try:
        moment = datetime.fromtimestamp(seconds, UTC)
    except (OverflowError, OSError, ValueError):
        raise ProtobufError(f"MicroTime: {seconds} seconds is out of range") from None
    if not 0 <= nanos < 1_000_000_000:
        raise ProtobufError(f"MicroTime: {nanos} nanoseconds is out of range")
    return moment.strftime("%Y-%m-%dT%H:%M:%S.") + f"{nanos // 1000:06d}Z"


def _int_or_string(decoded: dict[str, Any]) -> int | str:
    """IntOrString {1: type, 2: intVal, 3: strVal} is a plain int or string in JSON."""
    return decoded.get("strVal", "") if decoded.get("type", 0) == 1 else decoded.get("intVal", 0)


#: ``metav1.Time``: a timestamp, RFC 3339 in JSON.
TIME = Message("Time", {1: Field("seconds", "int64"), 2: Field("nanos", "int32")}, to_json=_time)

#: ``metav1.MicroTime``: a timestamp to the microsecond (Events, Leases).
MICRO_TIME = Message("MicroTime", {1: Field("seconds", "int64"), 2: Field("nanos", "int32")}, to_json=_micro_time)

#: ``intstr.IntOrString``: a plain int or string in JSON (ports, maxSurge).
INT_OR_STRING = Message(
    "IntOrString",
    {1: Field("type", "int64"), 2: Field("intVal", "int32"), 3: Field("strVal", "string")},
    to_json=_int_or_string,
)

#: ``resource.Quantity``: its string form (``500m``, ``1Gi``).
QUANTITY = Message("Quantity", {1: Field("string", "string")}, to_json=lambda decoded: decoded.get("string", ""))

FIELDS_V1 = Message("FieldsV1", {1: Field("Raw", "json")}, to_json=lambda decoded: decoded.get("Raw"))

OWNER_REFERENCE = Message(
    "OwnerReference",
    {
        5: Field("apiVersion", "string"),
        1: Field("kind", "string"),
        3: Field("name", "string"),
        4: Field("uid", "string"),
        6: Field("controller", "bool", pointer=True),
        7: Field("blockOwnerDeletion", "bool", pointer=True),
    },
)

MANAGED_FIELDS_ENTRY = Message(
    "ManagedFieldsEntry",
    {
        1: Field("manager", "string"),
        2: Field("operation", "string"),
        3: Field("apiVersion", "string"),
        4: Field("time", TIME),
        6: Field("fieldsType", "string"),
        7: Field("fieldsV1", FIELDS_V1),
        8: Field("subresource", "string"),
    },
)

#: ``metav1.ObjectMeta``: field 1 of every kind's table.
OBJECT_META = Message(
    "ObjectMeta",
    {
        1: Field("name", "string"),
        2: Field("generateName", "string"),
        3: Field("namespace", "string"),
        4: Field("selfLink", "string"),
        5: Field("uid", "string"),
        6: Field("resourceVersion", "string"),
        7: Field("generation", "int64"),
        8: Field("creationTimestamp", TIME),
        9: Field("deletionTimestamp", TIME),
        10: Field("deletionGracePeriodSeconds", "int64", pointer=True),
        11: Field("labels", "string", map=True),
        12: Field("annotations", "string", map=True),
        13: Field("ownerReferences", OWNER_REFERENCE, repeated=True),
        14: Field("finalizers", "string", repeated=True),
        17: Field("managedFields", MANAGED_FIELDS_ENTRY, repeated=True),
    },
)

#: ``metav1.LabelSelectorRequirement``: one condition of a label selector.
LABEL_SELECTOR_REQUIREMENT = Message(
    "LabelSelectorRequirement",
    {1: Field("key", "string"), 2: Field("operator", "string"), 3: Field("values", "string", repeated=True)},
)

#: ``ExtraValue`` (the values of a user's ``extra``, in authentication.k8s.io, authorization.k8s.io
#: and certificates.k8s.io): a list of strings in JSON, a message of one repeated field in protobuf.
EXTRA_VALUE = Message("ExtraValue", {1: Field("items", "string", repeated=True)},
                      to_json=lambda decoded: decoded.get("items", []))

#: ``metav1.LabelSelector``, for a kind's ``spec.selector``.
LABEL_SELECTOR = Message(
    "LabelSelector",
    {1: Field("matchLabels", "string", map=True), 2: Field("matchExpressions", LABEL_SELECTOR_REQUIREMENT, repeated=True)},
)

#: ``metav1.Condition``, for a kind's ``status.conditions``.
CONDITION = Message(
    "Condition",
    {
        1: Field("type", "string"),
        2: Field("status", "string"),
        3: Field("observedGeneration", "int64"),
        4: Field("lastTransitionTime", TIME),
        5: Field("reason", "string"),
        6: Field("message", "string"),
    },
)

PRECONDITIONS = Message(
    "Preconditions",
    {1: Field("uid", "string", pointer=True), 2: Field("resourceVersion", "string", pointer=True)},
)

# The body of a DELETE or deletecollection from a client configured for protobuf (client-go's
# typed clients of built-in kinds). Every field is a Go pointer: gracePeriodSeconds 0 and
# orphanDependents false mean something.
DELETE_OPTIONS = Message(
    "DeleteOptions",
    {
        1: Field("gracePeriodSeconds", "int64", pointer=True),
        2: Field("preconditions", PRECONDITIONS),
        3: Field("orphanDependents", "bool", pointer=True),
        4: Field("propagationPolicy", "string", pointer=True),
        5: Field("dryRun", "string", repeated=True),
        6: Field("ignoreStoreReadErrorWithClusterBreakingPotential", "bool", pointer=True),
    },
)
