"""How a client checks the server and proves who it is over TLS: client-go's ``TLSClientConfig``.

    tls = TLSClientConfig(ca_data=ca_pem, cert_data=cert_pem, key_data=key_pem)
    client = RESTClient("https://127.0.0.1:6443", ssl=tls.context())

The context verifies the server's certificate and host name, against ``ca_data`` (else the
system's CAs), unless ``insecure``; ``server_name`` is sent and verified instead of the host
dialled (kubeconfig's ``tls-server-name``); a client certificate is presented when given.
"""

from __future__ import annotations

import ssl
import tempfile
from dataclasses import dataclass, field
from pathlib import Path


class TLSConfigError(ValueError):
    """The TLS settings cannot make a working context; the message says which part."""


class ServerNameContext(ssl.SSLContext):
    """An SSLContext that sends and verifies ``tls_server_name`` instead of the host dialled.

    asyncio (hence aiohttp) wraps every connection through ``wrap_bio``; overriding it here keeps
    the setting inside the session, whoever makes requests with it.
    """

    tls_server_name: str | None = None

    def wrap_bio(self, incoming: ssl.MemoryBIO, outgoing: ssl.MemoryBIO, server_side: bool = False,
                 server_hostname: str | bytes | None = None, session: ssl.SSLSession | None = None) -> ssl.SSLObject:
        return super().wrap_bio(incoming, outgoing, server_side, self.tls_server_name or server_hostname, session)


@dataclass(frozen=True)
class TLSClientConfig:
    """PEM data, or files for the client certificate and key (kubeconfig's ``client-certificate``)."""

    ca_data: bytes | None = None
    cert_data: bytes | Path | None = field(default=None, repr=False)
    key_data: bytes | Path | None = field(default=None, repr=False)
    server_name: str | None = None
    insecure: bool = False

    def context(self) -> ssl.SSLContext:
        """A client context with these settings; a TLSConfigError if they do not make one."""
        if self.insecure and self.ca_data is not None:
            raise TLSConfigError("a certificate authority together with insecure-skip-tls-verify is not allowed")
        if (self.cert_data is None) != (self.key_data is None):
            raise TLSConfigError("a client certificate needs a client key, and a key a certificate")
        ctx = ServerNameContext(ssl.PROTOCOL_TLS_CLIENT)  # certificates and host names verified
        ctx.minimum_version = ssl.TLSVersion.TLSv1_2
        ctx.tls_server_name = self.server_name
        try:
            if self.insecure:
                ctx.check_hostname = False
                ctx.verify_mode = ssl.CERT_NONE
            elif self.ca_data is not None:
                ctx.load_verify_locations(cadata=self.ca_data.decode())
            else:
                ctx.load_default_certs()
        except (ssl.SSLError, UnicodeDecodeError) as err:
            raise TLSConfigError(f"unusable certificate-authority: {err}") from None
        if self.cert_data is not None and self.key_data is not None:
            try:
                load_cert_chain(ctx, self.cert_data, self.key_data)
            except (ssl.SSLError, OSError) as err:
                raise TLSConfigError(f"unusable client certificate or key: {err}") from None
        return ctx


def load_cert_chain(ctx: ssl.SSLContext, cert: bytes | Path, key: bytes | Path) -> None:
    """``ctx.load_cert_chain`` for files or PEM data: ``ssl`` reads only files, so data goes
    through a private temporary folder, removed right after."""
    with tempfile.TemporaryDirectory(prefix="kplane-tls-") as folder:
        paths = []
        for label, value in (("cert", cert), ("key", key)):
            if not isinstance(value, Path):
                written = Path(folder, f"{label}.pem")
                written.write_bytes(value)
                value = written
            paths.append(value)
        ctx.load_cert_chain(paths[0], paths[1])
