"""Protobuf table of coordination.k8s.io/v1 Lease, which client-go's leader election writes.

Field numbers are those of ``k8s.io/api`` v0.32 ``coordination/v1/generated.proto``; see
:mod:`kplane.core.runtime.protobuf` for the format.
"""

from __future__ import annotations

from kplane.api import MICRO_TIME, OBJECT_META, Field, Message

LEASE_SPEC = Message(
    "LeaseSpec",
    {
        1: Field("holderIdentity", "string", pointer=True),
        2: Field("leaseDurationSeconds", "int32", pointer=True),
        3: Field("acquireTime", MICRO_TIME),
        4: Field("renewTime", MICRO_TIME),
        5: Field("leaseTransitions", "int32", pointer=True),
        6: Field("strategy", "string", pointer=True),
        7: Field("preferredHolder", "string", pointer=True),
    },
)


LEASE = Message(
    "Lease",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", LEASE_SPEC),
    },
)
