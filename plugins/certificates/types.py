"""Internal types of the certificates.k8s.io group: CertificateSigningRequest.

``request`` and ``certificate`` are Go ``[]byte``: kept as the canonical base64 of their bytes,
as the wire carries them (:class:`kplane.api.fields.Bytes`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta

GROUP = "certificates.k8s.io"

APPROVED, DENIED, FAILED = "Approved", "Denied", "Failed"


@dataclass(slots=True)
class CertificateSigningRequestSpec:
    request: str = ""
    signer_name: str = ""
    expiration_seconds: int | None = None
    usages: list[str] | None = None
    username: str | None = None
    uid: str | None = None
    groups: list[str] | None = None
    extra: dict[str, list[str]] | None = None


@dataclass(slots=True)
class CertificateSigningRequestCondition:
    type: str = ""
    status: str = ""
    reason: str | None = None
    message: str | None = None
    last_update_time: str | None = None
    last_transition_time: str | None = None


@dataclass(slots=True)
class CertificateSigningRequestStatus:
    conditions: list[CertificateSigningRequestCondition] | None = None
    certificate: str | None = None


@dataclass(slots=True)
class CertificateSigningRequest:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: CertificateSigningRequestSpec = field(default_factory=CertificateSigningRequestSpec)
    status: CertificateSigningRequestStatus = field(default_factory=CertificateSigningRequestStatus)
