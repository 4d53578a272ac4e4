"""HTTPS for a server, as kube-apiserver's secure serving sets it up.

- The listener presents the serving certificate (``--tls-cert-file``/``--tls-private-key-file``,
  or one made in ``DATA_DIR/pki`` by :mod:`kplane.core.pki.store`), speaks TLS 1.2 or later and
  asks clients for a certificate without requiring one: a certificate given must verify against
  ``--client-ca-file`` (default: kplane's CA) or the handshake fails, and
  :func:`kplane.core.authn.clientcert.peer_certificate` hands the verified one to authentication.
- The server's own clients (loopback informers, the in-process controllers) ask for the name
  ``apiserver-loopback-client`` (SNI), answered with a certificate made in memory at each start
  that they alone trust: they verify the server whatever certificate it serves others.
- The kubeconfig written for the admin trusts kplane's CA (unless the serving certificate is the
  operator's own: then the system's CAs) and carries the admin's client certificate (unless
  another CA checks client certificates, which would refuse it).

Plain HTTP (``--http``) is allowed on loopback only.
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from dataclasses import dataclass
from pathlib import Path

from kplane.core.authn.clientcert import CertificateAuthority
from kplane.core.client.tls import TLSClientConfig, load_cert_chain
from kplane.core.config import ServerConfig
from kplane.core.pki.certificates import KeyPair, PKIError, SubjectAltNames, self_signed
from kplane.core.pki.store import PKIFolder
from kplane.core.serving.datadir import StartupError

LOOPBACK_SERVER_NAME = "apiserver-loopback-client"  # kube-apiserver's name for the same certificate
DEFAULT_SANS = ("127.0.0.1", "::1", "localhost")


@dataclass(frozen=True)
class SecureServing:
    """What serving HTTPS needs, made right before the server listens."""

    listener: ssl.SSLContext
    ca_data: bytes | None  # the kubeconfig's certificate-authority-data (None: the system's CAs)
    admin: KeyPair | None  # the kubeconfig's client certificate (None: another CA checks clients)
    client_ca: CertificateAuthority | None  # kplane's CA, when it signs the client certificates


def loopback_certificate() -> KeyPair:
    """The certificate the server's own clients verify it by, made in memory (blocking: a key)."""
    return self_signed(LOOPBACK_SERVER_NAME, SubjectAltNames.parse([LOOPBACK_SERVER_NAME]))


def loopback_client_tls(loopback: KeyPair) -> TLSClientConfig:
    """How the server's own clients reach it: asking for the loopback name, trusting only that certificate."""
    return TLSClientConfig(ca_data=loopback.cert_pem(), server_name=LOOPBACK_SERVER_NAME)


def check_serving(config: ServerConfig) -> None:
    """Flags that do not go together, refused before anything starts."""
    if bool(config.tls_cert_file) != bool(config.tls_private_key_file):
        raise StartupError("--tls-cert-file and --tls-private-key-file go together: give both or neither")
    if config.tls:
        return
    given = [flag for flag, value in (("--tls-cert-file", config.tls_cert_file), ("--client-ca-file", config.authentication.client_ca_file),
                                      ("--tls-san", config.tls_sans)) if value]
    if given:
        raise StartupError(f"--http serves plain HTTP: {', '.join(given)} would not be used")
    if not is_loopback(config.address):
        raise StartupError(f"--http serves plain HTTP, without TLS: only on a loopback address, not on "
                           f"{config.address or 'every address'} (drop --http to serve HTTPS there)")


def is_loopback(address: str) -> bool:
    try:
        return address == "localhost" or ipaddress.ip_address(address).is_loopback
    except ValueError:  # a host name: it may well resolve to a public address
        return False


def wanted_sans(config: ServerConfig) -> SubjectAltNames:
    """The names a made serving certificate covers: loopback, this host, the address listened on
    (a specific one) and ``--tls-san``."""
    names = [*DEFAULT_SANS, *config.tls_sans]
    host = socket.gethostname()
    try:
        SubjectAltNames.parse([host])
        names.append(host)
    except ValueError:  # not a DNS name (a host name may be anything): certificates cannot name it
        pass
    try:
        address = ipaddress.ip_address(config.address)
    except ValueError:
        address = None
    if address is not None and not address.is_unspecified:
        names.append(str(address))
    try:
        return SubjectAltNames.parse(names)
    except ValueError as err:
        raise StartupError(f"--tls-san: {err}") from None


def prepare_secure_serving(config: ServerConfig, loopback: KeyPair) -> SecureServing:
    """The certificates made or read and the listener's context built, presenting ``loopback``
    to the server's own clients (blocking: run it in a thread)."""
    pki = PKIFolder(config.data_dir / "pki")
    try:
        ca = pki.ensure_ca()
        if config.tls_cert_file and config.tls_private_key_file:
            cert_file, key_file, ca_data = config.tls_cert_file, config.tls_private_key_file, None
        else:
            cert_file, key_file = pki.ensure_serving(ca, wanted_sans(config))
            ca_data = ca.cert_pem()
        admin = pki.ensure_admin(ca) if config.authentication.client_ca_file is None else None
    except PKIError as err:
        raise StartupError(str(err)) from None
    client_ca = config.authentication.client_ca_file or pki.cert("ca")
    # The front proxy's CA too: the handshake must let its certificates through to be judged.
    trusted = [client_ca, *filter(None, [config.authentication.requestheader.client_ca_file])]
    listener = _server_context(trusted)
    try:
        listener.load_cert_chain(cert_file, key_file)
    except (ssl.SSLError, OSError) as err:
        raise StartupError(f"cannot serve {cert_file} with {key_file}: {_reason(err)}") from None
    # The loopback name's connections check client certificates alike: asking for it gains nothing.
    for_loopback = _server_context(trusted)
    load_cert_chain(for_loopback, loopback.cert_pem(), loopback.key_pem())

    def choose(connection: ssl.SSLObject, server_name: str | None, _: ssl.SSLContext) -> None:
        if server_name == LOOPBACK_SERVER_NAME:
            connection.context = for_loopback

    listener.sni_callback = choose
    own = CertificateAuthority(ca.cert_pem(), "kplane's CA") if config.authentication.client_ca_file is None else None
    return SecureServing(listener, ca_data, admin, own)


def _server_context(client_cas: list[Path]) -> ssl.SSLContext:
    """TLS 1.2 or later, HTTP/1.1, a client certificate asked for, verified against ``client_cas``
    (the handshake fails if it does not verify), never required."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.minimum_version = ssl.TLSVersion.TLSv1_2
    context.set_alpn_protocols(["http/1.1"])  # aiohttp speaks HTTP/1.1; kubectl offers h2 too
    for client_ca in client_cas:
        try:
            context.load_verify_locations(cafile=client_ca)
        except (ssl.SSLError, OSError) as err:
            raise StartupError(f"cannot use the client CA {client_ca}: {_reason(err)}") from None
    context.verify_mode = ssl.CERT_OPTIONAL
    return context


def _reason(err: OSError) -> str:
    if isinstance(err, ssl.SSLError):
        return err.reason or str(err)
    return err.strerror or str(err)
