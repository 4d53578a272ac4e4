"""``kube-system/extension-apiserver-authentication``: how a host tells its extension API
servers whom to trust, written by the host and read by them, as Kubernetes does.

The host (kube-apiserver's ``ClusterAuthenticationTrustController``): on every start the server
writes its client CA (``client-ca-file``) and its front proxy's trust (``requestheader-client-ca-file``
and, as JSON lists, ``requestheader-allowed-names``, ``-username-headers``, ``-uid-headers``,
``-group-headers``, ``-extra-headers-prefix``) merged into what the ConfigMap holds: the CA
bundles as the union of their unexpired certificates, the lists as the union of their names. So
servers sharing a storage each add theirs, and starting again changes nothing.

An extension server (k8s.io/apiserver's ``DelegatingAuthenticationOptions``): with
``--authentication-kubeconfig`` and without ``--client-ca-file`` / ``--requestheader-client-ca-file``,
it reads the ConfigMap from the host at start (unless ``--authentication-skip-lookup``) and
uses what it holds as those flags would: the CAs are written to ``DATA_DIR/pki`` (``host-client-ca.crt``,
``host-requestheader-client-ca.crt``) and its TLS listener trusts them. A host that cannot be
asked, or refuses (the reader needs the ``extension-apiserver-authentication-reader`` Role),
fails the start, unless ``--authentication-tolerate-lookup-failure``: then the server goes on
without them. No ConfigMap at all is not a failure (nothing to trust). Changes at the host are
seen at the next start.
"""

from __future__ import annotations

import dataclasses
import datetime
import logging
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import orjson
from cryptography import x509
from cryptography.hazmat.primitives import serialization

from kplane.core.authn.options import AuthenticationOptions, RequestHeaderOptions
from kplane.core.client.kubeconfig import KubeconfigError, client_from_kubeconfig
from kplane.core.client.rest import ApiError, RESTClient
from kplane.core.privatefiles import private_dir, write_private
from kplane.core.serving.datadir import StartupError
from kplane.core.serving.delegation import DelegationOptions

log = logging.getLogger(__name__)

NAMESPACE = "kube-system"
NAME = "extension-apiserver-authentication"
READER_ROLE = "extension-apiserver-authentication-reader"
CLIENT_CA = "client-ca-file"
REQUESTHEADER_CA = "requestheader-client-ca-file"
# The list-valued keys and the RequestHeaderOptions fields they hold.
LISTS = {"requestheader-allowed-names": "allowed_names", "requestheader-username-headers": "username_headers",
         "requestheader-uid-headers": "uid_headers", "requestheader-group-headers": "group_headers",
         "requestheader-extra-headers-prefix": "extra_headers_prefix"}
# k8s.io/apiserver's defaults for the header names of an extension server given a CA by flag.
DELEGATED_HEADERS = {"username_headers": ("x-remote-user",), "group_headers": ("x-remote-group",),
                     "extra_headers_prefix": ("x-remote-extra-",)}
ATTEMPTS = 5
EXPIRY_SLACK = datetime.timedelta(minutes=5)


@dataclass(frozen=True)
class TrustInfo:
    """What the ConfigMap says: CA bundles as PEM (empty: none), the lists as tuples."""

    client_ca: bytes = b""
    requestheader_ca: bytes = b""
    allowed_names: tuple[str, ...] = ()
    username_headers: tuple[str, ...] = ()
    uid_headers: tuple[str, ...] = ()
    group_headers: tuple[str, ...] = ()
    extra_headers_prefix: tuple[str, ...] = ()

    @classmethod
    def from_data(cls, data: dict[str, str]) -> TrustInfo:
        """The ConfigMap's ``data``; a ValueError names a key that is not a JSON list of strings."""
        lists: dict[str, tuple[str, ...]] = {}
        for key, field in LISTS.items():
            text = data.get(key) or ""
            try:
                values = orjson.loads(text) if text else []
            except orjson.JSONDecodeError:
                values = None
            if not isinstance(values, list) or not all(isinstance(v, str) for v in values):
                raise ValueError(f"{key} is not a JSON list of strings: {text[:100]!r}")
            lists[field] = tuple(values)
        return cls((data.get(CLIENT_CA) or "").encode(), (data.get(REQUESTHEADER_CA) or "").encode(), **lists)

    def to_data(self) -> dict[str, str]:
        """As kube-apiserver writes it: the request-header keys only with a request-header CA."""
        data = {CLIENT_CA: self.client_ca.decode()} if self.client_ca else {}
        if self.requestheader_ca:
            data[REQUESTHEADER_CA] = self.requestheader_ca.decode()
            data.update({key: orjson.dumps(list(getattr(self, field))).decode() for key, field in LISTS.items()})
        return data

    def combined(self, other: TrustInfo) -> TrustInfo:
        """Both, as the host merges its own into what is published."""
        lists = {field: tuple(dict.fromkeys((*getattr(self, field), *getattr(other, field)))) for field in LISTS.values()}
        return TrustInfo(_combined_bundle(self.client_ca, other.client_ca),
                         _combined_bundle(self.requestheader_ca, other.requestheader_ca), **lists)


def _combined_bundle(*bundles: bytes) -> bytes:
    """The certificates of ``bundles``, each once, those expired (five minutes' slack) left out."""
    cutoff = datetime.datetime.now(datetime.timezone.utc) - EXPIRY_SLACK
    seen: dict[bytes, bytes] = {}
    for bundle in bundles:
        if not bundle.strip():
            continue
        for cert in x509.load_pem_x509_certificates(bundle):
            if cert.not_valid_after_utc > cutoff:
                seen.setdefault(cert.public_bytes(serialization.Encoding.DER), cert.public_bytes(serialization.Encoding.PEM))
    return b"".join(seen.values())


# -- the host ------------------------------------------------------------------------------------
def host_trust(options: AuthenticationOptions, own_client_ca: Path | None) -> TrustInfo:
    """What this server publishes: its client CA (``--client-ca-file``, else ``own_client_ca``,
    kplane's CA when it signs the users' certificates) and its front proxy's trust."""
    client_ca = options.client_ca_file or own_client_ca
    header = options.requestheader
    return TrustInfo(
        client_ca.read_bytes() if client_ca else b"",
        header.client_ca_file.read_bytes() if header.client_ca_file else b"",
        **{field: tuple(getattr(header, field)) for field in LISTS.values()})


async def publish(client: RESTClient, required: TrustInfo) -> None:
    """Merge ``required`` into the ConfigMap, creating it (and kube-system) if need be."""
    configmaps = client.resource("", "v1", "configmaps", NAMESPACE)
    for _ in range(ATTEMPTS):
        try:
            current: dict[str, Any] | None = await configmaps.get(NAME)
        except ApiError as err:
            if err.code != 404:
                raise
            current = None
        existing = TrustInfo.from_data((current or {}).get("data") or {}) if current else TrustInfo()
        data = existing.combined(required).to_data()
        try:
            if current is None:
                await _ensure_namespace(client)
                await configmaps.create({"apiVersion": "v1", "kind": "ConfigMap",
                                         "metadata": {"name": NAME, "namespace": NAMESPACE}, "data": data})
            elif (current.get("data") or {}) != data:
                await configmaps.update({**current, "data": data})
            else:
                return
            log.info("wrote the authentication trust to %s configmaps/%s", NAMESPACE, NAME)
            return
        except ApiError as err:  # another server wrote it first: look again
            if err.code not in (404, 409):
                raise
    log.warning("could not write %s/%s: other writers kept changing it", NAMESPACE, NAME)


async def _ensure_namespace(client: RESTClient) -> None:
    try:
        await client.resource("", "v1", "namespaces").create({"apiVersion": "v1", "kind": "Namespace",
                                                               "metadata": {"name": NAMESPACE}})
    except ApiError as err:
        if err.code != 409:
            raise


# -- an extension server -------------------------------------------------------------------------
async def look_up(options: AuthenticationOptions, delegation: DelegationOptions, data_dir: Path,
                  tls: bool) -> AuthenticationOptions:
    """``options`` with the CAs no flag gave taken from the host's ConfigMap (see above)."""
    if delegation.authentication_kubeconfig is None:
        return options
    header = options.requestheader
    if header.client_ca_file is not None and not header.username_headers:  # k8s.io/apiserver's defaults
        options = _with(options, dataclasses.replace(header, **DELEGATED_HEADERS))
    wanted = (options.client_ca_file is None, header.client_ca_file is None)
    if delegation.skip_lookup or not any(wanted):
        return options
    if not tls:
        log.info("--http: no client certificates, so none of the host's CAs are looked up")
        return options
    try:
        found = await _read_host_trust(delegation.authentication_kubeconfig)
    except (ApiError, OSError, ValueError, KubeconfigError) as err:
        why = str(err)
        if isinstance(err, ApiError) and err.code == 403:
            why += (f" (usually fixed by 'kubectl create rolebinding -n {NAMESPACE} ROLEBINDING_NAME "
                    f"--role={READER_ROLE} --serviceaccount=YOUR_NS:YOUR_SA' at the host)")
        if not delegation.tolerate_lookup_failure:
            raise StartupError(f"unable to load configmap based request-header-client-ca-file: {why}") from None
        log.warning("error looking up in-cluster authentication configuration: %s", why)
        log.warning("continuing without authentication configuration: requests may be treated as anonymous "
                    "(to require the lookup to succeed, drop --authentication-tolerate-lookup-failure)")
        return options
    if found is None:
        log.warning("the host has no %s/%s: no client certificates or front proxy are trusted", NAMESPACE, NAME)
        return options
    pki = data_dir / "pki"
    if wanted[0] and found.client_ca:
        options = dataclasses.replace(options, client_ca_file=_written(pki / "host-client-ca.crt", found.client_ca))
    if wanted[1] and found.requestheader_ca:
        options = _with(options, RequestHeaderOptions(
            _written(pki / "host-requestheader-client-ca.crt", found.requestheader_ca),
            **{field: getattr(found, field) for field in LISTS.values()}))
    return options


async def _read_host_trust(kubeconfig: Path) -> TrustInfo | None:
    client = client_from_kubeconfig(kubeconfig)
    try:
        configmap = await client.resource("", "v1", "configmaps", NAMESPACE).get(NAME)
    except ApiError as err:
        if err.code == 404:
            return None
        raise
    finally:
        await client.close()
    info = TrustInfo.from_data(configmap.get("data") or {})
    for bundle in (info.client_ca, info.requestheader_ca):  # refused here rather than by the TLS setup
        if bundle.strip():
            x509.load_pem_x509_certificates(bundle)
    return info


def _written(path: Path, pem: bytes) -> Path:
    private_dir(path.parent)
    write_private(path, pem)
    return path


def _with(options: AuthenticationOptions, header: RequestHeaderOptions) -> AuthenticationOptions:
    return dataclasses.replace(options, requestheader=header)
