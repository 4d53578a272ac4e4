"""Wire schemas of wardle.example.com/v1alpha1 (``pkg/apis/wardle/v1alpha1/types.go``)."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields

METADATA = "Standard object metadata: name, namespace, labels, annotations, and what the server records."


class FlunderSpecSchema(Schema):
    """The specification of a Flunder: one reference to another object."""

    reference = fields.Str(metadata={"description": (
        "A name of another flunder or fischer, depending on the reference type."
    )})
    reference_type = fields.Str(metadata={"description": (
        'The reference type, "Flunder" or "Fischer"; defaults to "Flunder" if reference is set.'
    )})


class FlunderStatusSchema(Schema):
    """The status of a Flunder (empty)."""


class FlunderSchema(Schema):
    """An example type with a spec and a status."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": METADATA})
    spec = fields.Nested(FlunderSpecSchema, metadata={"description": "What the Flunder refers to."})
    status = fields.Nested(FlunderStatusSchema, metadata={"description": "Empty."})


class FischerSchema(Schema):
    """An example type with a list of disallowed Flunder names."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": METADATA})
    disallowed_flunders = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "Names that no Flunder may be created with (enforced by the BanFlunder admission plugin)."
    )})
