"""Wire schemas of wardle.example.com/v1beta1 (``pkg/apis/wardle/v1beta1/types.go``)."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields


class FlunderSpecSchema(Schema):
    """The specification of a Flunder: a reference to another Flunder or to a Fischer."""

    flunder_reference = fields.Str(metadata={"description": (
        "A name of another flunder, mutually exclusive to the fischerReference."
    )})
    fischer_reference = fields.Str(metadata={"description": (
        "A name of a fischer, mutually exclusive to the flunderReference."
    )})
    reference_type = fields.Str(metadata={"description": 'The reference type, "Flunder" or "Fischer".'})


class FlunderStatusSchema(Schema):
    """The status of a Flunder (empty)."""


class FlunderSchema(Schema):
    """An example type with a spec and a status."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records."
    )})
    spec = fields.Nested(FlunderSpecSchema, metadata={"description": "What the Flunder refers to."})
    status = fields.Nested(FlunderStatusSchema, metadata={"description": "Empty."})
