"""HorizontalPodAutoscaler behaviour (``pkg/registry/autoscaling/horizontalpodautoscaler/strategy.go``):
create clears status and sets generation 1; an update keeps the stored status and bumps the
generation when the spec changed; ``/status`` changes only status."""

from __future__ import annotations

from kplane.api import FieldError, RequestContext, Strategy
from kplane.plugins.autoscaling import printers, validation
from kplane.plugins.autoscaling.types import HorizontalPodAutoscaler, HorizontalPodAutoscalerStatus


class HorizontalPodAutoscalerStrategy(Strategy):
    columns = printers.HPA_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: HorizontalPodAutoscaler) -> None:
        obj.status = HorizontalPodAutoscalerStatus()
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler) -> None:
        obj.status = old.status
        if obj.spec != old.spec:
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: HorizontalPodAutoscaler) -> list[FieldError]:
        return validation.validate_hpa(obj)

    def validate_update(self, ctx: RequestContext, obj: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler) -> list[FieldError]:
        return validation.validate_hpa(obj)


class HorizontalPodAutoscalerStatusStrategy(Strategy):
    """``/status``: the spec stays as stored."""

    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler) -> None:
        obj.spec = old.spec

    def validate_update(self, ctx: RequestContext, obj: HorizontalPodAutoscaler, old: HorizontalPodAutoscaler) -> list[FieldError]:
        return validation.validate_status(obj.status)
