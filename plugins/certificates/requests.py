"""What a certificate request holds, read as Kubernetes reads it (``pkg/apis/certificates/helpers.go``):
the PKCS#10 request parsed from its PEM, the well-known signers, the key usages, and the checks
that tell a kubelet's client or serving request. Validation, admission and the controllers all
read requests through here."""

from __future__ import annotations

import base64
import binascii
import bisect
import re
from collections.abc import Iterator
from dataclasses import dataclass

from cryptography import x509
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

KUBE_APISERVER_CLIENT = "kubernetes.io/kube-apiserver-client"
KUBE_APISERVER_CLIENT_KUBELET = "kubernetes.io/kube-apiserver-client-kubelet"
KUBELET_SERVING = "kubernetes.io/kubelet-serving"
LEGACY_UNKNOWN = "kubernetes.io/legacy-unknown"

#: ``KeyUsage`` values: those of x509's key usage extension, then those of extended key usage.
KEY_USAGES = ("signing", "digital signature", "content commitment", "key encipherment", "key agreement",
              "data encipherment", "cert sign", "crl sign", "encipher only", "decipher only")
EXTENDED_KEY_USAGES = ("any", "server auth", "client auth", "code signing", "email protection", "s/mime",
                       "ipsec end system", "ipsec tunnel", "ipsec user", "timestamping", "ocsp signing",
                       "microsoft sgc", "netscape sgc")
ALL_USAGES = frozenset(KEY_USAGES + EXTENDED_KEY_USAGES)

_BEGIN = re.compile(rb"-----BEGIN ([^\r\n-]*)-----\r?\n")
_END = re.compile(rb"-----END ([^\r\n-]*)-----")
NODES_GROUP = "system:nodes"
NODE_PREFIX = "system:node:"

KUBELET_CLIENT_USAGES = (frozenset({"digital signature", "key encipherment", "client auth"}),
                         frozenset({"digital signature", "client auth"}))
KUBELET_SERVING_USAGES = (frozenset({"digital signature", "key encipherment", "server auth"}),
                          frozenset({"digital signature", "server auth"}))


class RequestError(ValueError):
    """The request is no PKCS#10 request in PEM, or does not fit its signer; the message is Go's."""


@dataclass(frozen=True, slots=True)
class PEMBlock:
    type: str
    headers: bool  # Go keeps them apart; here only whether there were any
    der: bytes


def pem_blocks(data: bytes) -> Iterator[PEMBlock]:
    """``pem.Decode`` over and over: each block in turn, a BEGIN line without its END (or with a
    body that is no base64) skipped. Every marker is found in one pass and each BEGIN's END by
    bisection, so a hostile body of many unmatched markers takes linear time, not quadratic."""
    ends: dict[bytes, list[int]] = {}
    for end in _END.finditer(data):
        ends.setdefault(end.group(1), []).append(end.start())
    position = 0
    for begin in _BEGIN.finditer(data):
        if begin.start() < position:
            continue  # inside the block just read
        kind, after = begin.group(1), begin.end()
        candidates = ends.get(kind, [])
        at = bisect.bisect_left(candidates, after)
        if at == len(candidates):
            continue
        body = data[after:candidates[at]]
        lines = body.splitlines()
        try:
            der = base64.b64decode(b"".join(line for line in lines if b":" not in line), validate=False)
        except (binascii.Error, ValueError):
            continue
        position = candidates[at]
        yield PEMBlock(kind.decode("ascii", "replace"), any(b":" in line for line in lines), der)


def first_pem_block(data: bytes) -> PEMBlock | None:
    """``pem.Decode``: the first PEM block, or None."""
    return next(pem_blocks(data), None)


def parse_csr(pem: bytes) -> x509.CertificateSigningRequest:
    """``ParseCSR``: the first PEM block, which must be a CERTIFICATE REQUEST."""
    block = first_pem_block(pem)
    if block is None or block.type != "CERTIFICATE REQUEST":
        raise RequestError("PEM block type must be CERTIFICATE REQUEST")
    try:
        return x509.load_der_x509_csr(block.der)
    except ValueError:
        raise RequestError("x509: malformed certificate request") from None


def check_signature(csr: x509.CertificateSigningRequest) -> None:
    """``CertificateRequest.CheckSignature``: the requester holds the key it asks a certificate for."""
    try:
        valid = csr.is_signature_valid
    except Exception:  # an algorithm cryptography does not support
        raise RequestError("x509: cannot verify signature: algorithm unimplemented") from None
    if not valid:
        key = csr.public_key()
        raise RequestError("x509: ECDSA verification failure" if isinstance(key, ec.EllipticCurvePublicKey)
                           else "crypto/rsa: verification error" if isinstance(key, rsa.RSAPublicKey)
                           else "x509: signature verification failure")


def decoded(base64_text: str | None) -> bytes:
    """The bytes of a ``[]byte`` field (kept as base64)."""
    return base64.b64decode(base64_text or "")


def subject(csr: x509.CertificateSigningRequest) -> tuple[str, list[str]]:
    """The subject's common name and organizations: the user and groups a client certificate names."""
    names = csr.subject
    common = names.get_attributes_for_oid(NameOID.COMMON_NAME)
    return (str(common[0].value) if common else "",
            [str(a.value) for a in names.get_attributes_for_oid(NameOID.ORGANIZATION_NAME)])


def _alt_names(csr: x509.CertificateSigningRequest) -> x509.SubjectAlternativeName | None:
    try:
        return csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except (x509.ExtensionNotFound, ValueError):
        return None


def _has(names: x509.SubjectAlternativeName | None, kind: type[x509.GeneralName]) -> bool:
    return bool(names is not None and names.get_values_for_type(kind))  # type: ignore[type-var]


def validate_kubelet_client(csr: x509.CertificateSigningRequest, usages: set[str]) -> None:
    """``ValidateKubeletClientCSR``: O system:nodes, CN system:node:<name>, no alternative names."""
    common, organizations = subject(csr)
    names = _alt_names(csr)
    if organizations != [NODES_GROUP]:
        raise RequestError("subject organization is not system:nodes")
    for kind, what in ((x509.DNSName, "DNS"), (x509.RFC822Name, "Email"), (x509.IPAddress, "IP"),
                       (x509.UniformResourceIdentifier, "URI")):
        if _has(names, kind):
            raise RequestError(f"{what} subjectAltNames are not allowed")
    if not common.startswith(NODE_PREFIX):
        raise RequestError("subject common name does not begin with system:node:")
    if usages not in KUBELET_CLIENT_USAGES:
        raise RequestError(f"usages did not match {go_list(KUBELET_CLIENT_USAGES[0])}")


def validate_kubelet_serving(csr: x509.CertificateSigningRequest, usages: set[str]) -> None:
    """``ValidateKubeletServingCSR``: O system:nodes, CN system:node:<name>, DNS or IP names only."""
    common, organizations = subject(csr)
    names = _alt_names(csr)
    if organizations != [NODES_GROUP]:
        raise RequestError("subject organization is not system:nodes")
    if not _has(names, x509.DNSName) and not _has(names, x509.IPAddress):
        raise RequestError("DNS or IP subjectAltName is required")
    if _has(names, x509.RFC822Name):
        raise RequestError("Email subjectAltNames are not allowed")
    if _has(names, x509.UniformResourceIdentifier):
        raise RequestError("URI subjectAltNames are not allowed")
    if usages not in KUBELET_SERVING_USAGES:
        raise RequestError(f"usages did not match {go_list(KUBELET_SERVING_USAGES[0])}")
    if not common.startswith(NODE_PREFIX):
        raise RequestError("subject common name does not begin with system:node:")


def validate_apiserver_client(usages: list[str]) -> None:
    """``validAPIServerClientUsages``: client auth, optionally digital signature and key encipherment."""
    for usage in usages:
        if usage not in ("digital signature", "key encipherment", "client auth"):
            raise RequestError(f"invalid usage for client certificate: {usage}")
    if "client auth" not in usages:
        raise RequestError("missing required usage for client certificate: client auth")


def go_list(values: frozenset[str]) -> str:
    """Go's ``%v`` of a sorted ``[]string``."""
    return "[" + " ".join(sorted(values)) + "]"
