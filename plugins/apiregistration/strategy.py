"""APIService behaviour (kube-aggregator's ``pkg/registry/apiservice``): the spec is the user's, the
status the server's. A Local APIService is marked available as it is created; any other waits for
the server's availability check (:mod:`kplane.plugins.apiregistration.availability`)."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, FieldError, RequestContext, Strategy, clock, dig
from kplane.plugins.apiregistration import validation
from kplane.plugins.apiregistration.types import APIService, APIServiceCondition, APIServiceStatus

AVAILABLE = "Available"
LOCAL_REASON = "Local"
LOCAL_MESSAGE = "Local APIServices are always available"


def local_condition() -> APIServiceCondition:
    return APIServiceCondition(type=AVAILABLE, status="True", last_transition_time=clock.now(),
                               reason=LOCAL_REASON, message=LOCAL_MESSAGE)


def _service_cell(obj: dict[str, Any]) -> str:
    service = dig(obj, "spec.service")
    if service is not None:
        return f"{service.get('namespace', '')}/{service.get('name', '')}"
    return dig(obj, "spec.url") or "Local"


def _available_cell(obj: dict[str, Any]) -> str:
    for condition in dig(obj, "status.conditions", []) or []:
        if condition.get("type") == AVAILABLE:
            status = condition.get("status", "")
            if status != "True" and condition.get("reason"):
                return f"{status} ({condition['reason']})"
            return status
    return "Unknown"


COLUMNS = (
    NAME,
    Column("Service", "string", _service_cell, description="The reference to the service that hosts this API endpoint."),
    Column("Available", "string", _available_cell, description="Whether this service is available."),
    AGE,
)


class APIServiceStrategy(Strategy):
    allow_create_on_update = False
    allow_unconditional_update = False
    name_validator = staticmethod(validation.is_path_segment_name)
    columns = COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: APIService) -> None:
        obj.status = APIServiceStatus()
        if validation.is_local(obj):  # served here: available from the start
            obj.status.conditions = [local_condition()]

    def prepare_for_update(self, ctx: RequestContext, obj: APIService, old: APIService) -> None:
        obj.status = old.status

    def validate(self, ctx: RequestContext, obj: APIService) -> list[FieldError]:
        return validation.validate_api_service(obj)

    def validate_update(self, ctx: RequestContext, obj: APIService, old: APIService) -> list[FieldError]:
        return validation.validate_api_service(obj)


class APIServiceStatusStrategy(Strategy):
    """``/status``: only the status changes; spec and the user's metadata stay as stored."""

    allow_create_on_update = False
    allow_unconditional_update = False
    reset_fields = ("spec", "metadata.labels", "metadata.annotations", "metadata.finalizers", "metadata.ownerReferences")
    columns = COLUMNS

    def prepare_for_update(self, ctx: RequestContext, obj: APIService, old: APIService) -> None:
        obj.spec = old.spec
        meta, old_meta = obj.metadata, old.metadata
        meta.labels, meta.annotations = old_meta.labels, old_meta.annotations
        meta.finalizers, meta.owner_references = old_meta.finalizers, old_meta.owner_references

    def validate_update(self, ctx: RequestContext, obj: APIService, old: APIService) -> list[FieldError]:
        return validation.validate_status(obj.status)
