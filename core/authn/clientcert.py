"""x509 client certificates (k8s.io/apiserver ``pkg/authentication/request/x509``).

The TLS layer asks for a client certificate without insisting on one; whoever presents one is
the certificate's subject (CN the user name, each O a group, kube's ``CommonNameUserConversion``)
once :class:`CertificateAuthority` verified it: it chains to the CA bundle, is valid now and may
be used for client authentication. The verification is ``cryptography``'s, with the Web PKI
rules relaxed where Kubernetes' client certificates differ (no subjectAltName, no authority key
identifier needed), as Go's ``crypto/x509`` accepts them. The same check guards the front
proxy's headers (:mod:`.requestheader`) with its own CA.
"""

from __future__ import annotations

import hashlib
import time
from collections import OrderedDict
from collections.abc import Sequence

from aiohttp import web
from cryptography import x509
from cryptography.hazmat.primitives.serialization import Encoding
from cryptography.x509.oid import NameOID
from cryptography.x509.verification import Criticality, ExtensionPolicy, PolicyBuilder, Store, VerificationError

from kplane.core.authn.authenticators import Authenticated, AuthenticationError
from kplane.core.authn.user import CREDENTIAL_ID, UserInfo

_PEER = web.RequestKey("kplane_peer_certificate", x509.Certificate)
VERIFIED_FOR = 60.0  # seconds a verified certificate is taken as verified
VERIFIED_KEPT = 4096  # certificates remembered at most

# A client certificate need not name a host (subjectAltName) nor its issuer's key: Go does not ask.
_CLIENT_POLICY = (ExtensionPolicy.webpki_defaults_ee()
                  .may_be_present(x509.SubjectAlternativeName, Criticality.AGNOSTIC, None)
                  .may_be_present(x509.AuthorityKeyIdentifier, Criticality.AGNOSTIC, None))


def peer_certificate(request: web.Request) -> x509.Certificate | None:
    """The certificate the client presented in the TLS handshake, None without TLS or without one."""
    try:
        return request[_PEER]
    except KeyError:
        pass
    transport = request.transport
    ssl_object = transport.get_extra_info("ssl_object") if transport is not None else None
    der = ssl_object.getpeercert(binary_form=True) if ssl_object is not None else None
    if not der:
        return None
    try:
        certificate = x509.load_der_x509_certificate(der)
    except ValueError as err:
        raise AuthenticationError(f"the client certificate cannot be parsed: {err}") from None
    request[_PEER] = certificate
    return certificate


def _identifier(certificate: x509.Certificate) -> str:
    """``SN=..., SKID=..., AKID=...`` as kube names a certificate it refuses."""
    def key_id(oid: type[x509.ExtensionType], attribute: str) -> str:
        try:
            value = getattr(certificate.extensions.get_extension_for_class(oid).value, attribute)  # type: ignore[type-var]
        except x509.ExtensionNotFound:
            return ""
        return ":".join(f"{b:02X}" for b in value or b"")
    return (f"SN={certificate.serial_number}, SKID={key_id(x509.SubjectKeyIdentifier, 'digest')}, "
            f"AKID={key_id(x509.AuthorityKeyIdentifier, 'key_identifier')}")


class CertificateAuthority:
    """The CAs of a bundle (``--client-ca-file``, ``--requestheader-client-ca-file``), checking
    client certificates against them."""

    def __init__(self, bundle: bytes | Sequence[x509.Certificate], source: str = "the CA bundle") -> None:
        if isinstance(bundle, bytes):
            try:
                bundle = x509.load_pem_x509_certificates(bundle)
            except ValueError as err:
                raise ValueError(f"{source} holds no PEM certificates: {err}") from None
        if not bundle:
            raise ValueError(f"{source} holds no certificates")
        self.certificates = tuple(bundle)
        self._store = Store(list(self.certificates))
        # Certificates verified lately, until when the answer holds: a client sends the same one
        # with every request of a connection, and verifying costs more than the rest of a GET.
        self._verified: OrderedDict[x509.Certificate, float] = OrderedDict()

    def verify(self, certificate: x509.Certificate) -> None:
        """Return when ``certificate`` is good for client authentication now, or raise
        :class:`AuthenticationError` saying why not."""
        now = time.time()
        until = self._verified.get(certificate)
        if until is not None and now < until:
            self._verified.move_to_end(certificate)
            return
        verifier = (PolicyBuilder().store(self._store)
                    .extension_policies(ca_policy=ExtensionPolicy.webpki_defaults_ca(), ee_policy=_CLIENT_POLICY)
                    .build_client_verifier())  # built now: its clock is the time of this request
        try:
            verifier.verify(certificate, [])
        except VerificationError as err:
            self._verified.pop(certificate, None)
            raise AuthenticationError(f"verifying certificate {_identifier(certificate)} failed: x509: {err}") from None
        # Good for a while, never past its own end (the CAs of this bundle do not change).
        self._verified[certificate] = min(now + VERIFIED_FOR, certificate.not_valid_after_utc.timestamp())
        while len(self._verified) > VERIFIED_KEPT:
            self._verified.popitem(last=False)


def common_name(certificate: x509.Certificate) -> str:
    """The subject's CN ("" without one; the first when there are several)."""
    names = certificate.subject.get_attributes_for_oid(NameOID.COMMON_NAME)
    return str(names[0].value) if names else ""


def certificate_user(certificate: x509.Certificate) -> UserInfo | None:
    """CN the name, O the groups, the subject's UID attribute the uid, and the certificate's
    fingerprint as its credential id (kube's ``CommonNameUserConversion``); None without a CN."""
    name = common_name(certificate)
    if not name:
        return None
    uids = [str(a.value) for a in certificate.subject.get_attributes_for_oid(NameOID.USER_ID)]
    if len(uids) > 1:
        raise AuthenticationError(f"expected 1 UID, but found multiple: {uids}")
    if uids and not uids[0]:
        raise AuthenticationError("UID cannot be an empty string")
    groups = tuple(str(a.value) for a in certificate.subject.get_attributes_for_oid(NameOID.ORGANIZATION_NAME))
    fingerprint = hashlib.sha256(certificate.public_bytes(Encoding.DER)).hexdigest()
    return UserInfo(name, uids[0] if uids else "", groups, {CREDENTIAL_ID: (f"X509SHA256={fingerprint}",)})


class ClientCertificates:
    """The request authenticator of ``--client-ca-file``: a request with a client certificate
    that verifies is its subject's; one that does not verify is a 401; none is not ours."""

    def __init__(self, authority: CertificateAuthority) -> None:
        self.authority = authority

    async def authenticate_request(self, request: web.Request) -> Authenticated | None:
        certificate = peer_certificate(request)
        if certificate is None:
            return None
        self.authority.verify(certificate)
        user = certificate_user(certificate)
        return Authenticated(user) if user is not None else None
