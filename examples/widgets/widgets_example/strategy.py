"""How the server treats Widgets: validation, table columns, and the status subresource."""

from kplane.api import AGE, NAME, Column, FieldError, RequestContext, Strategy, dig, invalid, not_supported, required

from widgets_example.types import COLORS, Widget


def validate_widget(widget: Widget) -> list[FieldError]:
    """The rules every Widget obeys, whichever version it was written in."""
    spec = widget.spec
    errors = []
    if spec.color not in COLORS:
        errors.append(not_supported("spec.color", spec.color, COLORS))
    if spec.size is None or spec.size.width is None:
        errors.append(required("spec.size.width"))
    for name in ("width", "height"):
        value = getattr(spec.size, name, None)
        if value is not None and not 1 <= value <= 100:
            errors.append(invalid(f"spec.size.{name}", value, "must be between 1 and 100"))
    return errors


def ready(widget: dict) -> str:
    for condition in dig(widget, "status.conditions", []):
        if condition.get("type") == "Ready":
            return condition.get("status", "")
    return ""


# Each cell reads the object as stored (v1, wire names).
COLUMNS = (
    NAME,
    Column("Color", "string", lambda w: dig(w, "spec.color", ""), description="The widget's color."),
    Column("Size", "string", lambda w: f"{dig(w, 'spec.size.width')}x{dig(w, 'spec.size.height')}",
           description="Width x height, in centimetres."),
    Column("Area", "integer", lambda w: dig(w, "status.area"), priority=1,
           description="Square centimetres, as the controller computed them."),
    Column("Ready", "string", ready, description="Whether the status describes the current spec."),
    AGE,
)


class WidgetStrategy(Strategy):
    columns = COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: Widget) -> None:
        obj.status = None  # the status is the controller's to write, through /status
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: Widget, old: Widget) -> None:
        obj.status = old.status  # writes to the widget itself never change its status
        if obj.spec != old.spec:
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: Widget) -> list[FieldError]:
        return validate_widget(obj)

    def validate_update(self, ctx: RequestContext, obj: Widget, old: Widget) -> list[FieldError]:
        return validate_widget(obj)


class WidgetStatusStrategy(Strategy):
    """``/status``: changes the status alone; the spec stays as stored."""

    def prepare_for_update(self, ctx: RequestContext, obj: Widget, old: Widget) -> None:
        obj.spec = old.spec
