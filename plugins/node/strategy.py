"""Validation of RuntimeClasses (``pkg/registry/node/runtimeclass``, ``ValidateRuntimeClass``):
the handler is a DNS label that never changes, the overhead quantities are not negative, and
the scheduling's node selector is of valid labels."""

from __future__ import annotations

from kplane.api import FIELD_IMMUTABLE, FieldError, RequestContext, Strategy, invalid, is_dns1123_label, quantity, validate_labels
from kplane.plugins.node import printers
from kplane.plugins.node.types import RuntimeClass


def validate_runtime_class(rc: RuntimeClass) -> list[FieldError]:
    errs = [invalid("handler", rc.handler, message) for message in is_dns1123_label(rc.handler)]
    for name, value in ((rc.overhead.pod_fixed if rc.overhead else None) or {}).items():
        if quantity.parse(value).value < 0:
            errs.append(invalid(f"overhead.podFixed[{name}]", value, "must be greater than or equal to 0"))
    if rc.scheduling is not None:
        errs += validate_labels(rc.scheduling.node_selector, "scheduling.nodeSelector")
    return errs


class RuntimeClassStrategy(Strategy):
    columns = printers.RUNTIME_CLASS_COLUMNS

    def validate(self, ctx: RequestContext, obj: RuntimeClass) -> list[FieldError]:
        return validate_runtime_class(obj)

    def validate_update(self, ctx: RequestContext, obj: RuntimeClass, old: RuntimeClass) -> list[FieldError]:
        errs = validate_runtime_class(obj)
        if obj.handler != old.handler:
            errs.append(invalid("handler", obj.handler, FIELD_IMMUTABLE))
        return errs
