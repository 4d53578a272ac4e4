"""Protobuf table of certificates.k8s.io/v1 CertificateSigningRequest (``k8s.io/api`` v0.32
``certificates/v1/generated.proto``): ``kubectl certificate approve|deny`` write the approval
through the typed client, which may send protobuf."""

from __future__ import annotations

from kplane.api import EXTRA_VALUE, OBJECT_META, TIME, Field, Message

SPEC = Message("CertificateSigningRequestSpec", {
    1: Field("request", "bytes"),
    7: Field("signerName", "string"),
    8: Field("expirationSeconds", "int32", pointer=True),
    5: Field("usages", "string", repeated=True),
    2: Field("username", "string"),
    3: Field("uid", "string"),
    4: Field("groups", "string", repeated=True),
    6: Field("extra", EXTRA_VALUE, map=True),
})
CONDITION = Message("CertificateSigningRequestCondition", {
    1: Field("type", "string"),
    6: Field("status", "string"),
    2: Field("reason", "string"),
    3: Field("message", "string"),
    4: Field("lastUpdateTime", TIME),
    5: Field("lastTransitionTime", TIME),
})
STATUS = Message("CertificateSigningRequestStatus", {
    1: Field("conditions", CONDITION, repeated=True),
    2: Field("certificate", "bytes"),
})
CERTIFICATE_SIGNING_REQUEST = Message("CertificateSigningRequest", {
    1: Field("metadata", OBJECT_META),
    2: Field("spec", SPEC),
    3: Field("status", STATUS),
})
