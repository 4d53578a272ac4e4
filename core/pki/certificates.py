"""Certificates as kplane makes them: a CA, and the serving and client certificates it signs.

Keys are ECDSA P-256: a key takes about a millisecond to make where RSA 2048 takes some 100 ms
(paid on every fresh data dir, so by every test server that serves HTTPS), handshakes are
cheaper, and every client kplane serves accepts it (Go's crypto/tls for kubectl, OpenSSL for the
Python clients); kubeadm offers the same curve. Validity as kubeadm's: the CA 10 years, the
certificates it signs 1 year, renewed by :mod:`~kplane.core.pki.store` 30 days before they end.
"""

from __future__ import annotations

import datetime
import hashlib
import ipaddress
import re
from collections.abc import Iterable
from dataclasses import dataclass

from cryptography import x509
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.hazmat.primitives.asymmetric.types import CertificateIssuerPrivateKeyTypes
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CA_VALIDITY = datetime.timedelta(days=3650)
LEAF_VALIDITY = datetime.timedelta(days=365)
RENEW_BEFORE = datetime.timedelta(days=30)  # a certificate with less left is made anew
BACKDATE = datetime.timedelta(minutes=5)  # valid from a little before now: clocks differ

IPAddress = ipaddress.IPv4Address | ipaddress.IPv6Address
# RFC 1123 labels, and a leading "*." for a wildcard: what Kubernetes' --tls-sni-cert-key accepts.
_DNS_NAME = re.compile(r"^(\*\.)?([a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$", re.I)


class PKIError(Exception):
    """A certificate or key that cannot be used; the message names the file and the problem."""


@dataclass(frozen=True)
class SubjectAltNames:
    """The names a serving certificate is valid for."""

    dns: frozenset[str] = frozenset()
    ips: frozenset[IPAddress] = frozenset()

    @classmethod
    def parse(cls, values: Iterable[str]) -> SubjectAltNames:
        """IP addresses and DNS names as ``--tls-san`` gives them; a malformed one is a ValueError."""
        dns: set[str] = set()
        ips: set[IPAddress] = set()
        for value in values:
            try:
                ips.add(ipaddress.ip_address(value))
                continue
            except ValueError:
                pass
            if len(value) > 253 or not _DNS_NAME.match(value):
                raise ValueError(f"not an IP address or DNS name: {value!r}")
            dns.add(value.lower())
        return cls(frozenset(dns), frozenset(ips))

    @classmethod
    def of(cls, cert: x509.Certificate) -> SubjectAltNames:
        try:
            names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
        except x509.ExtensionNotFound:
            return cls()
        return cls(frozenset(n.lower() for n in names.get_values_for_type(x509.DNSName)),
                   frozenset(names.get_values_for_type(x509.IPAddress)))

    def __or__(self, other: SubjectAltNames) -> SubjectAltNames:
        return SubjectAltNames(self.dns | other.dns, self.ips | other.ips)

    def extension(self) -> x509.SubjectAlternativeName:
        return x509.SubjectAlternativeName([*(x509.DNSName(n) for n in sorted(self.dns)),
                                            *(x509.IPAddress(ip) for ip in sorted(self.ips, key=lambda ip: (ip.version, ip)))])


@dataclass(frozen=True)
class KeyPair:
    """A certificate and its private key."""

    cert: x509.Certificate
    key: CertificateIssuerPrivateKeyTypes

    def cert_pem(self) -> bytes:
        return self.cert.public_bytes(serialization.Encoding.PEM)

    def key_pem(self) -> bytes:
        """PKCS#8, which Go's crypto/tls and OpenSSL both read."""
        return self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                      serialization.NoEncryption())

    @classmethod
    def from_pem(cls, cert: bytes, key: bytes) -> KeyPair:
        """The pair read back; a ValueError if either does not parse or the key is not the certificate's."""
        certificate = x509.load_pem_x509_certificate(cert)
        private = serialization.load_pem_private_key(key, password=None)
        if not isinstance(private, ec.EllipticCurvePrivateKey | rsa.RSAPrivateKey):
            raise ValueError("the key is neither ECDSA nor RSA")
        if private.public_key() != certificate.public_key():
            raise ValueError("the key does not belong to the certificate")
        return cls(certificate, private)


def fingerprint(cert: x509.Certificate) -> str:
    """The SHA-256 of the DER form, in hex, as ``openssl x509 -fingerprint -sha256`` shows it (without colons)."""
    return hashlib.sha256(cert.public_bytes(serialization.Encoding.DER)).hexdigest()


def new_ca(common_name: str, now: datetime.datetime | None = None) -> KeyPair:
    """A self-signed CA that may sign certificates, not further CAs."""
    now = now or _now()
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    ski = x509.SubjectKeyIdentifier.from_public_key(key.public_key())
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number())
            .not_valid_before(now - BACKDATE).not_valid_after(now + CA_VALIDITY)
            .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
            .add_extension(_key_usage(cert_sign=True), critical=True)
            .add_extension(ski, critical=False)
            .sign(key, hashes.SHA256()))
    return KeyPair(cert, key)


def issue(ca: KeyPair, common_name: str, *, organizations: Iterable[str] = (), sans: SubjectAltNames | None = None,
          server: bool = False, client: bool = False, now: datetime.datetime | None = None) -> KeyPair:
    """A certificate for a new key, signed by ``ca``: for serving (``server``, valid for ``sans``),
    for client authentication (``client``: CN the user, O its groups, as Kubernetes reads them), or both."""
    return _leaf(ca, common_name, organizations, sans, server, client, now or _now())


def self_signed(common_name: str, sans: SubjectAltNames, now: datetime.datetime | None = None) -> KeyPair:
    """A serving certificate signed by its own key: trusted by exactly the clients given it as
    their CA (kube-apiserver's loopback certificate)."""
    return _leaf(None, common_name, (), sans, True, False, now or _now())


def _leaf(ca: KeyPair | None, common_name: str, organizations: Iterable[str], sans: SubjectAltNames | None,
          server: bool, client: bool, now: datetime.datetime) -> KeyPair:
    """A certificate for a new key, signed by ``ca`` (None: by that key itself)."""
    key = ec.generate_private_key(ec.SECP256R1())
    subject = x509.Name([*(x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in organizations),
                         x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    issuer_name, issuer_key = (ca.cert.subject, ca.key) if ca else (subject, key)
    end = min(now + LEAF_VALIDITY, ca.cert.not_valid_after_utc) if ca else now + LEAF_VALIDITY
    usages = [*([ExtendedKeyUsageOID.SERVER_AUTH] if server else []), *([ExtendedKeyUsageOID.CLIENT_AUTH] if client else [])]
    builder = (x509.CertificateBuilder().subject_name(subject).issuer_name(issuer_name)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(now - BACKDATE).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(_key_usage(cert_sign=False), critical=True)
               .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(issuer_key.public_key()), critical=False))  # type: ignore[arg-type]
    if usages:  # an empty ExtendedKeyUsage is no valid certificate: leave it out
        builder = builder.add_extension(x509.ExtendedKeyUsage(usages), critical=False)
    if sans is not None:
        builder = builder.add_extension(sans.extension(), critical=False)
    return KeyPair(builder.sign(issuer_key, hashes.SHA256()), key)


def issued_by(cert: x509.Certificate, ca: x509.Certificate) -> bool:
    """Whether ``ca`` signed ``cert``."""
    try:
        cert.verify_directly_issued_by(ca)
    except (ValueError, TypeError, InvalidSignature):
        return False
    return True


def renewal_due(cert: x509.Certificate, now: datetime.datetime | None = None) -> bool:
    """Whether ``cert`` ends within :data:`RENEW_BEFORE` (or has ended, or has not begun)."""
    now = now or _now()
    return not cert.not_valid_before_utc <= now < cert.not_valid_after_utc - RENEW_BEFORE


def _key_usage(cert_sign: bool) -> x509.KeyUsage:
    return x509.KeyUsage(digital_signature=True, content_commitment=False, key_encipherment=False, data_encipherment=False,
                         key_agreement=False, key_cert_sign=cert_sign, crl_sign=cert_sign, encipher_only=False,
                         decipher_only=False)


def _now() -> datetime.datetime:
    return datetime.datetime.now(datetime.timezone.utc)
