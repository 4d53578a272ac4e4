"""Certificates for tests: CAs, and certificates they sign, made with ``cryptography``, and the
TLS contexts of a server that asks for client certificates and of a client that presents one."""

from __future__ import annotations

import datetime as dt
import ssl
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

# OpenSSL's X509_V_FLAG_NO_CHECK_TIME: the handshake lets an expired certificate through, as
# Go's tls.RequestClientCert does, so that the authenticator's own check is what refuses it.
NO_CHECK_TIME = 0x200000


@dataclass(frozen=True)
class Issued:
    certificate: x509.Certificate
    key: ec.EllipticCurvePrivateKey

    @property
    def pem(self) -> bytes:
        return self.certificate.public_bytes(serialization.Encoding.PEM)

    def write(self, folder: Path, name: str) -> tuple[Path, Path]:
        """(certificate file, key file) in ``folder``."""
        cert, key = folder / f"{name}.crt", folder / f"{name}.key"
        cert.write_bytes(self.pem)
        key.write_bytes(self.key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                               serialization.NoEncryption()))
        key.chmod(0o600)
        return cert, key


def _now() -> dt.datetime:
    return dt.datetime.now(dt.timezone.utc)


def new_ca(cn: str) -> Issued:
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, cn)])
    certificate = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
                   .serial_number(x509.random_serial_number())
                   .not_valid_before(_now() - dt.timedelta(hours=1)).not_valid_after(_now() + dt.timedelta(days=1))
                   .add_extension(x509.BasicConstraints(ca=True, path_length=None), critical=True)
                   .add_extension(x509.KeyUsage(True, False, False, False, False, True, True, False, False), critical=True)
                   .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
                   .sign(key, hashes.SHA256()))
    return Issued(certificate, key)


def issue(ca: Issued, cn: str, orgs: Sequence[str] = (), *, uid: str | None = None,
          usage: x509.ObjectIdentifier | None = ExtendedKeyUsageOID.CLIENT_AUTH, hosts: Sequence[str] = (),
          expired: bool = False) -> Issued:
    """A certificate ``ca`` signs: subject O=orgs, CN=cn (and UID), for ``usage``; ``hosts``: a server's."""
    key = ec.generate_private_key(ec.SECP256R1())
    attributes = [x509.NameAttribute(NameOID.ORGANIZATION_NAME, o) for o in orgs]
    if uid is not None:
        attributes.append(x509.NameAttribute(NameOID.USER_ID, uid))
    if cn:  # "": a subject without a CN
        attributes.append(x509.NameAttribute(NameOID.COMMON_NAME, cn))
    begin, end = (_now() - dt.timedelta(days=2), _now() - dt.timedelta(days=1)) if expired else \
        (_now() - dt.timedelta(hours=1), _now() + dt.timedelta(days=1))
    builder = (x509.CertificateBuilder().subject_name(x509.Name(attributes)).issuer_name(ca.certificate.subject)
               .public_key(key.public_key()).serial_number(x509.random_serial_number())
               .not_valid_before(begin).not_valid_after(end)
               .add_extension(x509.BasicConstraints(ca=False, path_length=None), critical=True)
               .add_extension(x509.KeyUsage(True, False, False, False, False, False, False, False, False), critical=True)
               .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(ca.key.public_key()), critical=False))
    if usage is not None:
        builder = builder.add_extension(x509.ExtendedKeyUsage([usage]), critical=False)
    if hosts:
        builder = builder.add_extension(x509.SubjectAlternativeName([x509.DNSName(h) for h in hosts]), critical=False)
    return Issued(builder.sign(ca.key, hashes.SHA256()), key)


def server_context(serving: Issued, folder: Path, client_cas: Sequence[Issued]) -> ssl.SSLContext:
    """A server's TLS: ``serving``'s certificate, asking for (not requiring) a client certificate
    signed by one of ``client_cas``, whatever its validity dates."""
    context = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    context.load_cert_chain(*serving.write(folder, "serving"))
    context.verify_mode = ssl.CERT_OPTIONAL
    context.verify_flags |= NO_CHECK_TIME
    context.load_verify_locations(cadata="".join(ca.pem.decode() for ca in client_cas))
    return context


def client_context(server_ca: Issued, folder: Path, client: Issued | None = None) -> ssl.SSLContext:
    """A client's TLS: trusting ``server_ca``, presenting ``client`` when given."""
    context = ssl.create_default_context(cadata=server_ca.pem.decode())
    if client is not None:
        context.load_cert_chain(*client.write(folder, f"client-{client.certificate.serial_number}"))
    return context
