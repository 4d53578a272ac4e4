"""The client certificate a request came with, for authentication to read (CN the user, O its groups).

The listener (:mod:`kplane.core.serving.tls`) asks every client for a certificate and fails the
handshake of one whose certificate ``--client-ca-file`` does not verify, so a certificate found
here was verified; plain HTTP connections and clients that sent none have no certificate.
"""

from __future__ import annotations

import ssl

from aiohttp import web
from cryptography import x509


def peer_certificate(request: web.BaseRequest) -> x509.Certificate | None:
    """The verified client certificate of ``request``'s connection, or None."""
    transport = request.transport
    connection = transport.get_extra_info("ssl_object") if transport is not None else None
    if not isinstance(connection, ssl.SSLObject):
        return None
    der = connection.getpeercert(binary_form=True)
    return x509.load_der_x509_certificate(der) if der else None
