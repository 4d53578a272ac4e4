"""Behaviour of FlowSchemas and PriorityLevelConfigurations (``pkg/registry/flowcontrol/*/strategy.go``):
generation counts spec changes; the status is kept apart, written through ``/status`` by the
server's own configuration consumer (the Dangling condition)."""

from __future__ import annotations

from kplane.api import FieldError, RequestContext, Strategy
from kplane.plugins.flowcontrol import printers, validation
from kplane.plugins.flowcontrol.types import FlowControlStatus, FlowSchema, PriorityLevelConfiguration

FlowControlObject = FlowSchema | PriorityLevelConfiguration


class _SpecStrategy(Strategy):
    def prepare_for_create(self, ctx: RequestContext, obj: FlowControlObject) -> None:
        obj.status = FlowControlStatus()
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: FlowControlObject, old: FlowControlObject) -> None:
        obj.status = old.status
        obj.metadata.generation = (old.metadata.generation or 0) + (obj.spec != old.spec)


class _StatusStrategy(Strategy):
    def prepare_for_update(self, ctx: RequestContext, obj: FlowControlObject, old: FlowControlObject) -> None:
        obj.spec = old.spec


class FlowSchemaStrategy(_SpecStrategy):
    columns = printers.FLOW_SCHEMA_COLUMNS

    def validate(self, ctx: RequestContext, obj: FlowSchema) -> list[FieldError]:
        return validation.validate_flow_schema(obj)

    def validate_update(self, ctx: RequestContext, obj: FlowSchema, old: FlowSchema) -> list[FieldError]:
        return validation.validate_flow_schema(obj)


class FlowSchemaStatusStrategy(_StatusStrategy):
    columns = printers.FLOW_SCHEMA_COLUMNS

    def validate_update(self, ctx: RequestContext, obj: FlowSchema, old: FlowSchema) -> list[FieldError]:
        return validation.validate_status(obj.status)


class PriorityLevelStrategy(_SpecStrategy):
    columns = printers.PRIORITY_LEVEL_COLUMNS

    def validate(self, ctx: RequestContext, obj: PriorityLevelConfiguration) -> list[FieldError]:
        return validation.validate_priority_level(obj)

    def validate_update(self, ctx: RequestContext, obj: PriorityLevelConfiguration, old: PriorityLevelConfiguration) -> list[FieldError]:
        return validation.validate_priority_level(obj)


class PriorityLevelStatusStrategy(_StatusStrategy):
    columns = printers.PRIORITY_LEVEL_COLUMNS

    def validate_update(self, ctx: RequestContext, obj: PriorityLevelConfiguration, old: PriorityLevelConfiguration) -> list[FieldError]:
        return validation.validate_status(obj.status)
