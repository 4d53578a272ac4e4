"""widgets.example.com/v1: the wire format of Widget, and its defaults."""

from typing import Any

from kplane.api import ConditionSchema, ObjectMetaSchema, Schema, fields


class SizeSchema(Schema):
    width = fields.Int(metadata={"description": "Width in centimetres, 1 to 100."})
    height = fields.Int(metadata={"description": "Height in centimetres, 1 to 100; defaults to the width."})


class WidgetSpecSchema(Schema):
    color = fields.Str(metadata={"description": "grey (the default), red, green or blue."})
    size = fields.Nested(SizeSchema, metadata={"description": "How big the widget is."})


class WidgetStatusSchema(Schema):
    observed_generation = fields.Int(metadata={"description": "The metadata.generation last acted on."})
    area = fields.Int(metadata={"description": "Width times height, in square centimetres."})
    conditions = fields.List(fields.Nested(ConditionSchema), metadata=fields.merge_by(
        "type", description="Ready is True once the status describes the current spec."))


class WidgetSchema(Schema):
    """A Widget: a coloured rectangle."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    spec = fields.Nested(WidgetSpecSchema, metadata={"description": "What the widget should be."})
    status = fields.Nested(WidgetStatusSchema, metadata={"description": "What the controller last saw."})


def set_defaults(widget: dict[str, Any]) -> None:
    """Called on every Widget written in v1, before conversion; Python names."""
    spec = widget["spec"] = widget.get("spec") or {}
    spec["color"] = spec.get("color") or "grey"
    size = spec.get("size")
    if size and size.get("height") is None:
        size["height"] = size.get("width")
