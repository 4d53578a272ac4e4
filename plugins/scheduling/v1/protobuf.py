"""Protobuf table of scheduling.k8s.io/v1 PriorityClass (``k8s.io/api`` v0.32
``scheduling/v1/generated.proto``), for ``kubectl create priorityclass``."""

from __future__ import annotations

from kplane.api import OBJECT_META, Field, Message

PRIORITY_CLASS = Message(
    "PriorityClass",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("value", "int32"),
        3: Field("globalDefault", "bool"),
        4: Field("description", "string"),
        5: Field("preemptionPolicy", "string", pointer=True),
    },
)
