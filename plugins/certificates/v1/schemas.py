"""Wire schemas of certificates.k8s.io/v1 (``k8s.io/api/certificates/v1/types.go``)."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields

_META = "Standard object metadata: name, labels, annotations, and what the server records about the object."


class CertificateSigningRequestSpecSchema(Schema):
    """The certificate requested, and who requested it."""

    request = fields.Bytes(metadata={"omitempty": False, "list_type": "atomic", "description": (
        'A PEM-encoded PKCS#10 certificate request, in a "CERTIFICATE REQUEST" PEM block. Cannot change.'
    )})
    signer_name = fields.Str(metadata={"omitempty": False, "description": (
        "The signer the request is for: kubernetes.io/kube-apiserver-client, "
        "kubernetes.io/kube-apiserver-client-kubelet, kubernetes.io/kubelet-serving, or another "
        "signer's fully qualified name (example.com/signer-name). Cannot change."
    )})
    expiration_seconds = fields.Int32(metadata={"description": (
        "The validity wanted for the certificate, at least 600 seconds; the signer may issue a shorter "
        "or longer one (kplane's issue at most --cluster-signing-duration)."
    )})
    usages = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        'Key usages wanted: "digital signature", "key encipherment", "client auth", "server auth", ...'
    )})
    username = fields.Str(metadata={"description": "Who created the request; set by the server."})
    uid = fields.Str(metadata={"description": "The uid of who created the request; set by the server."})
    groups = fields.List(fields.Str(), metadata={"list_type": "atomic", "description": (
        "The groups of who created the request; set by the server."
    )})
    extra = fields.Dict(keys=fields.Str(), values=fields.List(fields.Str()), metadata={"description": (
        "Extra attributes of who created the request; set by the server."
    )})


class CertificateSigningRequestConditionSchema(Schema):
    """One state the request went through: Approved, Denied or Failed."""

    type = fields.Str(metadata={"omitempty": False, "description": "Approved, Denied, Failed, or another type."})
    status = fields.Str(metadata={"omitempty": False, "description": (
        "True, False or Unknown; Approved, Denied and Failed may only be True."
    )})
    reason = fields.Str(metadata={"description": "A brief reason, in CamelCase."})
    message = fields.Str(metadata={"description": "Details for humans."})
    last_update_time = fields.Time(metadata={"omitempty": False, "description": "When the condition was last written."})
    last_transition_time = fields.Time(metadata={"omitempty": False, "description": "When the status last changed."})


class CertificateSigningRequestStatusSchema(Schema):
    """Whether the request was approved or denied, and the certificate issued."""

    conditions = fields.List(fields.Nested(CertificateSigningRequestConditionSchema), metadata={
        "list_type": "map", "list_map_keys": ["type"], "description": (
            "Approved or Denied (through the approval subresource), Failed (by the signer)."
        )})
    certificate = fields.Bytes(metadata={"list_type": "atomic", "description": (
        'The issued certificate, PEM-encoded "CERTIFICATE" blocks, written by the signer once approved.'
    )})


class CertificateSigningRequestSchema(Schema):
    """CertificateSigningRequest objects provide a mechanism to obtain x509 certificates by submitting
    a certificate signing request, and having it asynchronously approved and issued.

    Kubelets use this API to obtain client certificates to authenticate to kube-apiserver (with the
    "kubernetes.io/kube-apiserver-client-kubelet" signerName), or serving certificates for TLS
    endpoints kube-apiserver can connect to securely (with the "kubernetes.io/kubelet-serving"
    signerName). This API can be used to request client certificates to authenticate to
    kube-apiserver (with the "kubernetes.io/kube-apiserver-client" signerName), or to obtain
    certificates from custom non-Kubernetes signers.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": _META})
    spec = fields.Nested(CertificateSigningRequestSpecSchema, metadata={"description": (
        "The certificate request. Cannot change once created."
    )})
    status = fields.Nested(CertificateSigningRequestStatusSchema, metadata={"description": (
        "The approval and the issued certificate."
    )})
