"""Behaviour of CertificateSigningRequests (``pkg/registry/certificates/certificates/strategy.go``).

Cluster-wide. The server writes who asked into ``spec`` (username, uid, groups, extra) and a
request is created without status: nobody creates one pre-approved. After that the resource
changes only its metadata; ``/approval`` writes only the conditions (Approved, Denied), and
``/status`` only the rest of the status (the certificate, Failed and other conditions), each
keeping what the other owns."""

from __future__ import annotations

from kplane.api import META_FIELDS, FieldError, RequestContext, Strategy, clock, is_path_segment_name
from kplane.plugins.certificates import printers, validation
from kplane.plugins.certificates.types import (
    APPROVED, DENIED, CertificateSigningRequest, CertificateSigningRequestStatus)


def _timestamps(obj: CertificateSigningRequest, old: CertificateSigningRequest) -> None:
    """``populateConditionTimestamps``: a condition written without times gets now, or keeps the
    transition time of the stored condition of the same type and status."""
    now = clock.now()
    for c in obj.status.conditions or []:
        if not c.last_update_time:
            c.last_update_time = now
        if not c.last_transition_time:
            c.last_transition_time = next(
                (o.last_transition_time for o in old.status.conditions or []
                 if o.type == c.type and o.status == c.status and o.last_transition_time), now)


def _preserve(obj: CertificateSigningRequest, old: CertificateSigningRequest, type_: str) -> None:
    """``preserveConditionInstances``: the stored conditions of ``type_`` stay as they were, unless
    the write adds or removes some (which validation then refuses)."""
    new_at = [i for i, c in enumerate(obj.status.conditions or []) if c.type == type_]
    old_ones = [c for c in old.status.conditions or [] if c.type == type_]
    if len(new_at) == len(old_ones):
        for i, c in zip(new_at, old_ones):
            obj.status.conditions[i] = c  # type: ignore[index]


class CertificateSigningRequestStrategy(Strategy):
    columns = printers.CSR_COLUMNS
    reset_fields = ("spec", "status")
    selectable_fields = {**META_FIELDS, "spec.signerName": "spec.signerName"}
    name_validator = staticmethod(is_path_segment_name)  # kube does not care what requests are called

    def prepare_for_create(self, ctx: RequestContext, obj: CertificateSigningRequest) -> None:
        who = ctx.user
        spec = obj.spec
        spec.username, spec.uid = who.name, who.uid or None
        spec.groups = list(who.groups) or None
        spec.extra = {key: list(values) for key, values in who.extra.items()} or None
        obj.status = CertificateSigningRequestStatus()

    def prepare_for_update(self, ctx: RequestContext, obj: CertificateSigningRequest, old: CertificateSigningRequest) -> None:
        obj.spec, obj.status = old.spec, old.status

    def validate(self, ctx: RequestContext, obj: CertificateSigningRequest) -> list[FieldError]:
        return validation.validate(obj)

    def validate_update(self, ctx: RequestContext, obj: CertificateSigningRequest, old: CertificateSigningRequest) -> list[FieldError]:
        return validation.validate_update(obj, old, validation.options(obj, old))


class CertificateSigningRequestStatusStrategy(CertificateSigningRequestStrategy):
    """``/status``: the signer's certificate and conditions; Approved and Denied stay as stored."""

    reset_fields = ("spec", "status.conditions")

    def prepare_for_update(self, ctx: RequestContext, obj: CertificateSigningRequest, old: CertificateSigningRequest) -> None:
        obj.spec = old.spec
        _preserve(obj, old, APPROVED)
        _preserve(obj, old, DENIED)
        _timestamps(obj, old)

    def validate_update(self, ctx: RequestContext, obj: CertificateSigningRequest, old: CertificateSigningRequest) -> list[FieldError]:
        return validation.for_status(obj, old)


class CertificateSigningRequestApprovalStrategy(CertificateSigningRequestStrategy):
    """``/approval``: the conditions only (``kubectl certificate approve|deny``)."""

    reset_fields = ("spec", "status.certificate")

    def prepare_for_update(self, ctx: RequestContext, obj: CertificateSigningRequest, old: CertificateSigningRequest) -> None:
        _timestamps(obj, old)
        obj.spec = old.spec
        obj.status = CertificateSigningRequestStatus(conditions=obj.status.conditions, certificate=old.status.certificate)

    def validate_update(self, ctx: RequestContext, obj: CertificateSigningRequest, old: CertificateSigningRequest) -> list[FieldError]:
        return validation.for_approval(obj, old)
