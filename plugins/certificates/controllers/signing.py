"""csrsigning (``pkg/controller/certificates/signer``): the kubernetes.io signers, with one CA.

An approved request to ``kube-apiserver-client``, ``kube-apiserver-client-kubelet``,
``kubelet-serving`` or ``legacy-unknown`` that has no certificate yet gets one: the request's
subject and alternative names, the key usages it asked for, signed by the CA for
min(``expirationSeconds``, the manager's signing duration) but at least ten minutes, and never
past the CA's own end. A request its signer refuses (a kubelet client certificate that does not
name a node, say) gets the condition ``Failed`` (reason ``SignerValidationFailure``) instead."""

from __future__ import annotations

import asyncio
import base64
import copy
import datetime
import logging
import secrets
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import ExtendedKeyUsageOID

from kplane.api import ApiError, RESTClient, SharedInformerFactory, clock
from kplane.plugins.certificates import requests
from kplane.plugins.certificates.controllers.base import CertificateController, Obj, approved, failed, requests_of

log = logging.getLogger(__name__)

SIGNERS = (requests.KUBE_APISERVER_CLIENT, requests.KUBE_APISERVER_CLIENT_KUBELET,
           requests.KUBELET_SERVING, requests.LEGACY_UNKNOWN)
SHORTEST = 10 * 60.0  # twice the backdating: a certificate is never issued for less
BACKDATE = 5 * 60.0  # against clocks a little behind the signer's
SHORT = 8 * 3600.0  # certificates this short-lived are not backdated

_EXTENDED = {
    "any": x509.oid.ExtendedKeyUsageOID.ANY_EXTENDED_KEY_USAGE,
    "server auth": ExtendedKeyUsageOID.SERVER_AUTH,
    "client auth": ExtendedKeyUsageOID.CLIENT_AUTH,
    "code signing": ExtendedKeyUsageOID.CODE_SIGNING,
    "email protection": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "s/mime": ExtendedKeyUsageOID.EMAIL_PROTECTION,
    "ipsec end system": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.5"),
    "ipsec tunnel": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.6"),
    "ipsec user": x509.ObjectIdentifier("1.3.6.1.5.5.7.3.7"),
    "timestamping": ExtendedKeyUsageOID.TIME_STAMPING,
    "ocsp signing": ExtendedKeyUsageOID.OCSP_SIGNING,
    "microsoft sgc": x509.ObjectIdentifier("1.3.6.1.4.1.311.10.3.3"),
    "netscape sgc": x509.ObjectIdentifier("2.16.840.1.113730.4.1"),
}
_KEY_USAGE_BITS = {  # KeyUsage values -> cryptography's KeyUsage arguments
    "signing": "digital_signature", "digital signature": "digital_signature",
    "content commitment": "content_commitment", "key encipherment": "key_encipherment",
    "key agreement": "key_agreement", "data encipherment": "data_encipherment", "cert sign": "key_cert_sign",
    "crl sign": "crl_sign", "encipher only": "encipher_only", "decipher only": "decipher_only",
}


class Signing(Protocol):
    """What the manager knows of its CA (``ControllerManager.signing``)."""

    cert_file: Path | None
    key_file: Path | None
    duration: float


@dataclass(frozen=True, slots=True)
class CA:
    cert: x509.Certificate
    key: ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey

    @classmethod
    def load(cls, cert_file: Path, key_file: Path) -> CA:
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
        if not isinstance(key, (ec.EllipticCurvePrivateKey, rsa.RSAPrivateKey)):
            raise ValueError(f"{key_file}: only ECDSA and RSA keys can sign")
        return cls(cert, key)


def duration(expiration_seconds: int | None, longest: float) -> float:
    """``signer.duration``: what was asked, within [ten minutes, ``longest``]."""
    if expiration_seconds is None:
        return longest
    return min(max(float(expiration_seconds), SHORTEST), longest)


def sign(ca: CA, csr: x509.CertificateSigningRequest, usages: list[str], ttl: float,
         now: datetime.datetime | None = None) -> bytes:
    """The PEM certificate ``ca`` issues for ``csr`` (``PermissiveSigningPolicy``)."""
    now = now or datetime.datetime.now(datetime.timezone.utc)
    not_before = now if ttl <= SHORT else now - datetime.timedelta(seconds=BACKDATE)
    not_after = min(now + datetime.timedelta(seconds=ttl), ca.cert.not_valid_after_utc)
    builder = (x509.CertificateBuilder().subject_name(csr.subject).issuer_name(ca.cert.subject)
               .public_key(csr.public_key()).serial_number(secrets.randbits(63) or 1)  # type: ignore[arg-type]
               .not_valid_before(not_before).not_valid_after(not_after)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True))
    bits = {arg: False for arg in set(_KEY_USAGE_BITS.values())}
    for usage in usages:
        if usage in _KEY_USAGE_BITS:
            bits[_KEY_USAGE_BITS[usage]] = True
    if any(bits.values()):
        if not bits["key_agreement"]:
            bits["encipher_only"] = bits["decipher_only"] = False  # only meaningful with key agreement
        builder = builder.add_extension(x509.KeyUsage(**bits), critical=True)
    extended = list(dict.fromkeys(_EXTENDED[u] for u in usages if u in _EXTENDED))
    if extended:
        builder = builder.add_extension(x509.ExtendedKeyUsage(extended), critical=False)
    try:
        names = csr.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        builder = builder.add_extension(names, critical=False)
    except x509.ExtensionNotFound:
        pass
    try:
        ski = ca.cert.extensions.get_extension_for_class(x509.SubjectKeyIdentifier).value
        builder = builder.add_extension(x509.AuthorityKeyIdentifier.from_issuer_subject_key_identifier(ski), critical=False)
    except x509.ExtensionNotFound:
        pass
    return builder.sign(ca.key, hashes.SHA256()).public_bytes(serialization.Encoding.PEM)


def refusal(signer: str, csr: x509.CertificateSigningRequest, usages: list[str]) -> str | None:
    """``isRequestForSignerFn``: why ``signer`` will not sign this request (None: it will)."""
    try:
        if signer == requests.KUBE_APISERVER_CLIENT:
            requests.validate_apiserver_client(usages)
        elif signer == requests.KUBE_APISERVER_CLIENT_KUBELET:
            requests.validate_kubelet_client(csr, set(usages))
        elif signer == requests.KUBELET_SERVING:
            requests.validate_kubelet_serving(csr, set(usages))
    except requests.RequestError as err:
        return str(err)
    return None


class CSRSigning:
    """The four kubernetes.io signers (kube runs one controller each, under the name csrsigning)."""

    def __init__(self, client: RESTClient, informers: SharedInformerFactory, signing: Signing) -> None:
        self.client = client
        self.signing = signing
        self.ca: CA | None = None
        self.controller = CertificateController("csrsigning", informers, self.handle)

    async def run(self) -> None:
        cert_file, key_file = self.signing.cert_file, self.signing.key_file
        if cert_file is None or key_file is None:
            log.info("csrsigning: no CA given (--cluster-signing-cert-file, --cluster-signing-key-file): nothing is signed")
            return
        self.ca = await asyncio.to_thread(CA.load, cert_file, key_file)
        await self.controller.run()

    async def handle(self, csr: Obj) -> None:
        spec, status = csr.get("spec") or {}, csr.get("status") or {}
        if not approved(csr) or failed(csr) or status.get("certificate") or spec.get("signerName") not in SIGNERS:
            return
        assert self.ca is not None
        try:
            request = requests.parse_csr(base64.b64decode(spec.get("request") or ""))
        except requests.RequestError as err:
            raise ValueError(f"unable to parse csr {csr['metadata']['name']!r}: {err}") from None
        usages = spec.get("usages") or []
        csr = copy.deepcopy(csr)  # the cache's copy stays as the server has it
        status = csr.setdefault("status", {})
        why = refusal(spec["signerName"], request, usages)
        if why is not None:
            now = clock.now()
            status.setdefault("conditions", []).append({
                "type": "Failed", "status": "True", "reason": "SignerValidationFailure", "message": why,
                "lastUpdateTime": now, "lastTransitionTime": now})
        else:
            ttl = duration(spec.get("expirationSeconds"), self.signing.duration)
            pem = await asyncio.to_thread(sign, self.ca, request, usages, ttl)
            status["certificate"] = base64.b64encode(pem).decode("ascii")
        try:
            await requests_of(self.client).update_status(csr)
        except ApiError as err:
            if err.code != 404:
                raise
