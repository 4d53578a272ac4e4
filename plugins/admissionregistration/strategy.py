"""Behaviour of the admissionregistration kinds (``pkg/registry/admissionregistration/*/strategy.go``):
generation 1 on create, counting changes of the webhooks or the spec; a ValidatingAdmissionPolicy's
status is kept apart, written through ``/status`` (the type checking)."""

from __future__ import annotations

from typing import Any

from kplane.api import FieldError, RequestContext, Strategy
from kplane.plugins.admissionregistration import printers, validation
from kplane.plugins.admissionregistration.types import ValidatingAdmissionPolicy, ValidatingAdmissionPolicyStatus


def _changed(obj: Any, old: Any) -> bool:
    if hasattr(obj, "webhooks"):
        return obj.webhooks != old.webhooks
    return obj.spec != old.spec


class _GenerationStrategy(Strategy):
    """A kind without status: the generation counts what it says."""

    reset_fields = ()

    def prepare_for_create(self, ctx: RequestContext, obj: Any) -> None:
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: Any, old: Any) -> None:
        obj.metadata.generation = (old.metadata.generation or 0) + _changed(obj, old)


class ValidatingWebhookConfigurationStrategy(_GenerationStrategy):
    columns = printers.WEBHOOK_CONFIGURATION_COLUMNS
    validates_in_thread = True  # compiles up to 64 match conditions a webhook

    def validate(self, ctx: RequestContext, obj: Any) -> list[FieldError]:
        return validation.validate_webhook_configuration(obj, mutating=False)

    def validate_update(self, ctx: RequestContext, obj: Any, old: Any) -> list[FieldError]:
        return validation.validate_webhook_configuration(obj, mutating=False, old=old)


class MutatingWebhookConfigurationStrategy(_GenerationStrategy):
    columns = printers.WEBHOOK_CONFIGURATION_COLUMNS
    validates_in_thread = True  # compiles up to 64 match conditions a webhook

    def validate(self, ctx: RequestContext, obj: Any) -> list[FieldError]:
        return validation.validate_webhook_configuration(obj, mutating=True)

    def validate_update(self, ctx: RequestContext, obj: Any, old: Any) -> list[FieldError]:
        return validation.validate_webhook_configuration(obj, mutating=True, old=old)


class ValidatingAdmissionPolicyStrategy(_GenerationStrategy):
    columns = printers.VALIDATING_POLICY_COLUMNS
    reset_fields = ("status",)
    validates_in_thread = True  # compiles every CEL expression

    def prepare_for_create(self, ctx: RequestContext, obj: ValidatingAdmissionPolicy) -> None:
        obj.status = ValidatingAdmissionPolicyStatus()
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: ValidatingAdmissionPolicy, old: ValidatingAdmissionPolicy) -> None:
        obj.status = old.status
        super().prepare_for_update(ctx, obj, old)

    def validate(self, ctx: RequestContext, obj: ValidatingAdmissionPolicy) -> list[FieldError]:
        return validation.validate_validating_policy(obj)

    def validate_update(self, ctx: RequestContext, obj: ValidatingAdmissionPolicy, old: ValidatingAdmissionPolicy) -> list[FieldError]:
        return validation.validate_validating_policy(obj, old=old)


class ValidatingAdmissionPolicyStatusStrategy(Strategy):
    """``/status``: the spec stays as stored."""

    columns = printers.VALIDATING_POLICY_COLUMNS
    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: ValidatingAdmissionPolicy, old: ValidatingAdmissionPolicy) -> None:
        obj.spec = old.spec

    def validate_update(self, ctx: RequestContext, obj: ValidatingAdmissionPolicy, old: ValidatingAdmissionPolicy) -> list[FieldError]:
        return validation.validate_policy_status(obj.status)


class ValidatingAdmissionPolicyBindingStrategy(_GenerationStrategy):
    columns = printers.BINDING_COLUMNS

    def validate(self, ctx: RequestContext, obj: Any) -> list[FieldError]:
        return validation.validate_validating_binding(obj)

    def validate_update(self, ctx: RequestContext, obj: Any, old: Any) -> list[FieldError]:
        return validation.validate_validating_binding(obj)


class MutatingAdmissionPolicyStrategy(_GenerationStrategy):
    columns = printers.MUTATING_POLICY_COLUMNS
    validates_in_thread = True

    def validate(self, ctx: RequestContext, obj: Any) -> list[FieldError]:
        return validation.validate_mutating_policy(obj)

    def validate_update(self, ctx: RequestContext, obj: Any, old: Any) -> list[FieldError]:
        return validation.validate_mutating_policy(obj, old=old)


class MutatingAdmissionPolicyBindingStrategy(_GenerationStrategy):
    columns = printers.BINDING_COLUMNS

    def validate(self, ctx: RequestContext, obj: Any) -> list[FieldError]:
        return validation.validate_mutating_binding(obj)

    def validate_update(self, ctx: RequestContext, obj: Any, old: Any) -> list[FieldError]:
        return validation.validate_mutating_binding(obj)
