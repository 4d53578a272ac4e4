"""widgets.example.com/v1alpha1: the first shape of Widget, still served.

It had a flat spec, ``{color, width, height}``, where v1 (and the internal type) nest the
dimensions under ``size``: the two conversion functions below move them. Both take and return
the whole object as a dict with Python names.
"""

from typing import Any

from kplane.api import ObjectMetaSchema, Schema, fields

from widgets_example.v1 import WidgetStatusSchema


class WidgetSpecSchema(Schema):
    color = fields.Str(metadata={"description": "grey (the default), red, green or blue."})
    width = fields.Int(metadata={"description": "Width in centimetres, 1 to 100."})
    height = fields.Int(metadata={"description": "Height in centimetres, 1 to 100; defaults to the width."})


class WidgetSchema(Schema):
    """A Widget: a coloured rectangle."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata."})
    spec = fields.Nested(WidgetSpecSchema, metadata={"description": "What the widget should be."})
    status = fields.Nested(WidgetStatusSchema, metadata={"description": "What the controller last saw."})


def set_defaults(widget: dict[str, Any]) -> None:
    spec = widget["spec"] = widget.get("spec") or {}
    spec["color"] = spec.get("color") or "grey"
    if spec.get("height") is None and spec.get("width") is not None:
        spec["height"] = spec["width"]


def to_internal(widget: dict[str, Any]) -> dict[str, Any]:
    """``{width, height}`` -> ``{size: {width, height}}``."""
    spec = dict(widget.get("spec") or {})
    width, height = spec.pop("width", None), spec.pop("height", None)
    if width is not None or height is not None:
        spec["size"] = {"width": width, "height": height}
    return {**widget, "spec": spec}


def from_internal(widget: dict[str, Any]) -> dict[str, Any]:
    """``{size: {width, height}}`` -> ``{width, height}``."""
    spec = dict(widget.get("spec") or {})
    spec.update(spec.pop("size", None) or {})
    return {**widget, "spec": spec}
