"""``APIServiceBackends``: while the server runs with ``--no-enable-apiservice-backends``, an
APIService may not be given a backend (see "Who may point the server at a backend" in
:mod:`kplane.plugins.apiregistration.aggregator`)."""

from __future__ import annotations

from kplane.api import AdmissionRequest, Operation, Scheme, errors
from kplane.plugins.apiregistration.apiservices import GROUP, RESOURCE
from kplane.plugins.apiregistration.settings import NO_BACKENDS_FLAG, Settings

NAME = "APIServiceBackends"


class BackendsCheck:
    """The validating admission plugin: a 422 naming the field and the flag."""

    def __init__(self, scheme: Scheme, settings: Settings) -> None:
        self.scheme = scheme
        self.settings = settings

    def __call__(self, request: AdmissionRequest) -> None:
        """Refuse, while backends are off, a create or update that gives an APIService a backend
        it did not have (one stored with it before keeps it, unproxied, until changed)."""
        rt = request.resource
        if self.settings.backends or (rt.group, rt.plural) != (GROUP, RESOURCE) or request.subresource \
                or request.operation is Operation.DELETE:
            return
        spec = request.obj.spec
        field = "spec.url" if spec.url else "spec.service" if spec.service is not None else ""
        old = request.old.spec if request.old is not None else None
        if not field or (old is not None and (old.url, old.service) == (spec.url, spec.service)):
            return
        group, version = spec.group or "", spec.version or ""
        served = version in self.scheme.groups().get(group, ())
        why = (f"{'/'.join(filter(None, (group, version)))} is served by this server itself; " if served else "") + \
            f"APIService backends are off: the server was started with {NO_BACKENDS_FLAG}"
        raise errors.invalid_object("APIService", GROUP, request.obj.metadata.name or request.name, [errors.forbidden(field, why)])
