"""Wire schemas of coordination.k8s.io/v1."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields


class LeaseSpecSchema(Schema):
    """Who holds a Lease and until when the others should consider it held."""

    holder_identity = fields.Str(metadata={"description": (
        "The identity of the current holder. Empty when nobody holds the Lease, e.g. after its holder stepped "
        "down."
    )})
    lease_duration_seconds = fields.Int32(metadata={"description": (
        "How long other candidates wait before taking the Lease over, counted from the last time they saw "
        "the holder renew it (by their own clock, not renewTime). Must be greater than 0."
    )})
    acquire_time = fields.Time(metadata={"description": (
        "When the current holder acquired the Lease (RFC 3339 with microseconds)."
    )})
    renew_time = fields.Time(metadata={"description": (
        "When the current holder last renewed the Lease (RFC 3339 with microseconds)."
    )})
    lease_transitions = fields.Int32(metadata={"description": (
        "How many times the Lease has passed from one holder to another."
    )})
    strategy = fields.Str(metadata={"description": (
        "How coordinated leader election picks the holder, e.g. OldestEmulationVersion. Unset means no "
        "coordination: candidates compete for the Lease themselves."
    )})
    preferred_holder = fields.Str(metadata={"description": (
        "Asks the holder to step down in favour of this identity. Allowed only when strategy is set."
    )})


class LeaseSchema(Schema):
    """A Lease is a time-limited claim held by one identity: leader election and node heartbeats use it to
    agree on who is active.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(LeaseSpecSchema, metadata={"description": "Who holds the Lease and for how long."})
