"""An admission rule: this cluster's policy, checked on every write after validation."""

from kplane.api import AdmissionRequest, Operation, deny

from widgets_example.types import GROUP


def no_red_widgets(request: AdmissionRequest) -> None:
    """Red is a valid color for a Widget, but not one this cluster accepts: 403 Forbidden."""
    if request.resource.group != GROUP or request.subresource:
        return
    if request.operation in (Operation.CREATE, Operation.UPDATE) and request.obj.spec.color == "red":
        raise deny(request, "red widgets are not allowed here")
