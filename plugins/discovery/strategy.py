"""EndpointSlice behaviour (``pkg/registry/discovery/endpointslice/strategy.go``).

An EndpointSlice has no status: its generation starts at 1 and goes up when anything but its
metadata, or its labels, change, so that consumers (and the controller's cache check) can tell
a slice's versions apart.
"""

from __future__ import annotations

from kplane.api import FieldError, RequestContext, Strategy
from kplane.plugins.discovery import printers, validation
from kplane.plugins.discovery.types import EndpointSlice


class EndpointSliceStrategy(Strategy):
    columns = printers.ENDPOINT_SLICE_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: EndpointSlice) -> None:
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: EndpointSlice, old: EndpointSlice) -> None:
        changed = (obj.address_type, obj.endpoints, obj.ports, obj.metadata.labels) != \
            (old.address_type, old.endpoints, old.ports, old.metadata.labels)
        obj.metadata.generation = (old.metadata.generation or 0) + 1 if changed else old.metadata.generation

    def validate(self, ctx: RequestContext, obj: EndpointSlice) -> list[FieldError]:
        return validation.validate_endpoint_slice(obj)

    def validate_update(self, ctx: RequestContext, obj: EndpointSlice, old: EndpointSlice) -> list[FieldError]:
        return validation.validate_endpoint_slice_update(obj, old)
