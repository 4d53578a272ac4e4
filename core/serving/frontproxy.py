"""The aggregator's client certificate and the front proxy's trust, as kube-apiserver's flags
and kubeadm's defaults set them up.

kube-apiserver presents ``--proxy-client-cert-file``/``--proxy-client-key-file`` to the
extension API servers it proxies to; they believe its ``X-Remote-*`` headers because the CA in
``--requestheader-client-ca-file`` signed that certificate and its CN is in
``--requestheader-allowed-names``. kube-apiserver publishes what its flags say; kubeadm makes a
front-proxy CA and the ``front-proxy-client`` certificate and gives the flags. kplane, a server
that needs no setup, does what kubeadm does when none of these flags is given: it makes
``front-proxy-ca`` and ``front-proxy-client`` in ``DATA_DIR/pki``
(:meth:`kplane.core.pki.store.PKIFolder.ensure_front_proxy`) and takes kubeadm's
``--requestheader-*`` values, which it then publishes for its extension servers
(:mod:`kplane.core.serving.authtrust`). Given flags are used as they are.

Nothing is made over ``--http`` (such a server takes no client certificates, so no front proxy
can be told from anyone else), nor by an extension server (``--authentication-kubeconfig``),
which trusts its host's front proxy.
"""

from __future__ import annotations

import argparse
import dataclasses
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from kplane.core.authn.options import RequestHeaderOptions
from kplane.core.pki.certificates import PKIError
from kplane.core.pki.store import FRONT_PROXY_CA_FILE, FRONT_PROXY_CLIENT_NAME, PKIFolder
from kplane.core.serving.datadir import StartupError

if TYPE_CHECKING:  # the config names this module's options
    from kplane.core.config import ServerConfig

# kubeadm's --requestheader-* values (and X-Remote-Uid, which kplane's aggregator sends too).
KUBEADM_REQUEST_HEADERS = dict(allowed_names=(FRONT_PROXY_CLIENT_NAME,), username_headers=("X-Remote-User",),
                               uid_headers=("X-Remote-Uid",), group_headers=("X-Remote-Group",),
                               extra_headers_prefix=("X-Remote-Extra-",))


@dataclass(frozen=True)
class FrontProxyOptions:
    """The client certificate the aggregator presents to its backends (None: made, or none)."""

    client_cert_file: Path | None = None  # --proxy-client-cert-file
    client_key_file: Path | None = None  # --proxy-client-key-file


def add_flags(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--proxy-client-cert-file", type=Path, default=None, metavar="FILE",
                        help="client certificate the aggregator presents to extension API servers, whose "
                             "--requestheader-client-ca-file must trust it (default: front-proxy-client.crt, made "
                             "in DATA_DIR/pki with its own CA front-proxy-ca.crt when no --requestheader-* CA is given)")
    parser.add_argument("--proxy-client-key-file", type=Path, default=None, metavar="FILE",
                        help="the private key of --proxy-client-cert-file")


def from_args(args: argparse.Namespace) -> FrontProxyOptions:
    return FrontProxyOptions(args.proxy_client_cert_file, args.proxy_client_key_file)


def resolve_front_proxy(config: ServerConfig) -> ServerConfig:
    """``config`` with the front proxy's certificate and trust made and filled in where nothing
    was given (blocking: key generation and files; run it in a thread)."""
    given = config.front_proxy
    if bool(given.client_cert_file) != bool(given.client_key_file):
        raise StartupError("--proxy-client-cert-file and --proxy-client-key-file go together: give both or neither")
    requestheader = config.authentication.requestheader
    if not config.tls or given.client_cert_file or requestheader.client_ca_file \
            or config.delegation.authentication_kubeconfig is not None:  # an extension trusts its host's
        return config
    pki = PKIFolder(config.data_dir / "pki")
    try:
        cert, key = pki.ensure_front_proxy()
    except PKIError as err:
        raise StartupError(str(err)) from None
    made = dataclasses.replace(requestheader, client_ca_file=pki.cert(FRONT_PROXY_CA_FILE), **{
        name: getattr(requestheader, name) or value for name, value in KUBEADM_REQUEST_HEADERS.items()})
    return with_request_headers(dataclasses.replace(config, front_proxy=FrontProxyOptions(cert, key)), made)


def with_request_headers(config: ServerConfig, requestheader: RequestHeaderOptions) -> ServerConfig:
    return dataclasses.replace(config, authentication=dataclasses.replace(config.authentication, requestheader=requestheader))
