"""PodDisruptionBudget behaviour (``pkg/registry/policy/poddisruptionbudget/strategy.go``).

Create clears status and sets generation 1; an update keeps the stored status and bumps the
generation when the spec changed (the eviction API then waits until the controller has caught up);
the status subresource changes only status.
"""

from __future__ import annotations

from kplane.api import FieldError, RequestContext, Strategy
from kplane.plugins.policy import printers, validation
from kplane.plugins.policy.types import PodDisruptionBudget, PodDisruptionBudgetStatus


class PodDisruptionBudgetStrategy(Strategy):
    columns = printers.POD_DISRUPTION_BUDGET_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: PodDisruptionBudget) -> None:
        obj.status = PodDisruptionBudgetStatus()
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: PodDisruptionBudget, old: PodDisruptionBudget) -> None:
        obj.status = old.status
        if obj.spec != old.spec:
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: PodDisruptionBudget) -> list[FieldError]:
        return validation.validate_spec(obj.spec)

    def validate_update(self, ctx: RequestContext, obj: PodDisruptionBudget, old: PodDisruptionBudget) -> list[FieldError]:
        return validation.validate_spec(obj.spec)


class PodDisruptionBudgetStatusStrategy(Strategy):
    """``/status``: the spec stays as stored."""

    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: PodDisruptionBudget, old: PodDisruptionBudget) -> None:
        obj.spec = old.spec

    def validate_update(self, ctx: RequestContext, obj: PodDisruptionBudget, old: PodDisruptionBudget) -> list[FieldError]:
        return validation.validate_status(obj.status)
