"""``DATA_DIR/pki``: kplane's CA and the certificates it signs, made on first start, reused after.

The files (keys 0600, the folder 0700, as :mod:`kplane.core.privatefiles` makes them):

- ``ca.crt``, ``ca.key``: the CA. Made once; never replaced behind the operator's back (every
  kubeconfig handed out trusts it): one that is unreadable, does not match its key or has expired
  is an error saying so, and removing the folder is how to start over.
- ``apiserver.crt``, ``apiserver.key``: the serving certificate, made anew when the names it
  must cover change (``--tls-san``, the host name), when it nears its end, or when the CA did not sign it.
- ``admin.crt``, ``admin.key``: the kubeconfig's client certificate (CN ``kplane-admin``,
  O ``system:masters``), renewed by the same rules.
- ``front-proxy-ca.crt``, ``.key`` and ``front-proxy-client.crt``, ``.key``: the aggregator's
  own CA and the client certificate it presents to extension API servers (CN
  ``front-proxy-client``), as kubeadm makes them: a CA of its own, so that a certificate trusted
  to name users in request headers is never one that also authenticates as a user.

Everything here blocks (key generation, files): the server calls it in a worker thread.
"""

from __future__ import annotations

import datetime
import logging
from dataclasses import dataclass
from pathlib import Path

from kplane.core.pki.certificates import (
    KeyPair, PKIError, SubjectAltNames, fingerprint, issue, issued_by, new_ca, renewal_due)
from kplane.core.privatefiles import private_dir, write_private

log = logging.getLogger(__name__)

CA_NAME = "kplane-ca"
SERVING_NAME = "kube-apiserver"  # the CN kubeadm gives the API server's certificate
ADMIN_USER = "kplane-admin"
ADMIN_GROUP = "system:masters"  # the group Kubernetes' authorizers let do anything
SERVING_FILE = "apiserver"
ADMIN_FILE = "admin"
FRONT_PROXY_CA_FILE = FRONT_PROXY_CA_NAME = "front-proxy-ca"  # kubeadm's file and CN
FRONT_PROXY_CLIENT_FILE = FRONT_PROXY_CLIENT_NAME = "front-proxy-client"


@dataclass(frozen=True)
class PKIFolder:
    """The certificate files of one data dir."""

    folder: Path

    def cert(self, name: str) -> Path:
        return self.folder / f"{name}.crt"

    def key(self, name: str) -> Path:
        return self.folder / f"{name}.key"

    def ensure_ca(self, name: str = "ca", common_name: str = CA_NAME) -> KeyPair:
        """The CA ``name`` (kplane's own by default): read, or made if there is none yet."""
        private_dir(self.folder)
        cert, key = self.cert(name), self.key(name)
        if not cert.exists() and not key.exists():
            ca = new_ca(common_name)
            self._write(name, ca)  # the key first: a certificate is never left without it
            log.info("made a new CA in %s (SHA-256 fingerprint %s)", cert, fingerprint(ca.cert))
            return ca
        ca = self._read(name)
        if ca is None:
            raise PKIError(f"{cert} and {key} do not make a CA: they are not a certificate and its key "
                           f"(remove {self.folder} to make a new CA; every kubeconfig it signed stops working)")
        if renewal_due(ca.cert):
            end = ca.cert.not_valid_after_utc
            if end <= datetime.datetime.now(datetime.timezone.utc):
                raise PKIError(f"the CA {cert} expired on {end:%Y-%m-%d}: remove {self.folder} to make a new one "
                               "(every kubeconfig it signed stops working)")
            log.warning("the CA %s expires on %s: remove %s before then to make a new one", cert, f"{end:%Y-%m-%d}", self.folder)
        return ca

    def ensure_serving(self, ca: KeyPair, sans: SubjectAltNames) -> tuple[Path, Path]:
        """``apiserver.crt`` and ``.key``, valid for exactly ``sans`` and signed by ``ca``."""
        current = self._read(SERVING_FILE)
        if current is not None and SubjectAltNames.of(current.cert) == sans and self._fits(current, ca):
            return self.cert(SERVING_FILE), self.key(SERVING_FILE)
        why = "none yet" if current is None else "renewed"
        self._write(SERVING_FILE, issue(ca, SERVING_NAME, sans=sans, server=True))
        log.info("made the serving certificate %s (%s) for %s", self.cert(SERVING_FILE), why, _shown(sans))
        return self.cert(SERVING_FILE), self.key(SERVING_FILE)

    def ensure_admin(self, ca: KeyPair) -> KeyPair:
        """The admin's client certificate, signed by ``ca``."""
        return self.ensure_client(ca, ADMIN_FILE, ADMIN_USER, [ADMIN_GROUP])

    def ensure_front_proxy(self) -> tuple[Path, Path]:
        """The front proxy's CA and its client certificate (``front-proxy-client.crt`` and ``.key``)."""
        ca = self.ensure_ca(FRONT_PROXY_CA_FILE, FRONT_PROXY_CA_NAME)
        self.ensure_client(ca, FRONT_PROXY_CLIENT_FILE, FRONT_PROXY_CLIENT_NAME)
        return self.cert(FRONT_PROXY_CLIENT_FILE), self.key(FRONT_PROXY_CLIENT_FILE)

    def ensure_client(self, ca: KeyPair, name: str, user: str, groups: list[str] | None = None) -> KeyPair:
        """The client certificate ``name`` (CN ``user``, O ``groups``), signed by ``ca``."""
        current = self._read(name)
        if current is not None and self._fits(current, ca):
            return current
        pair = issue(ca, user, organizations=groups or [], client=True)
        self._write(name, pair)
        return pair

    @staticmethod
    def _fits(pair: KeyPair, ca: KeyPair) -> bool:
        return issued_by(pair.cert, ca.cert) and not renewal_due(pair.cert)

    def _read(self, name: str) -> KeyPair | None:
        """The pair, or None if either file is missing or they are not a certificate and its key."""
        try:
            return KeyPair.from_pem(self.cert(name).read_bytes(), self.key(name).read_bytes())
        except FileNotFoundError:
            return None
        except ValueError as err:
            log.warning("%s and %s are unusable (%s)", self.cert(name), self.key(name), err)
            return None
        except OSError as err:
            raise PKIError(f"cannot read {self.cert(name)} or {self.key(name)}: {err.strerror}") from None

    def _write(self, name: str, pair: KeyPair) -> None:
        try:
            write_private(self.key(name), pair.key_pem())
            write_private(self.cert(name), pair.cert_pem())
        except OSError as err:
            raise PKIError(f"cannot write {self.cert(name)}: {err.strerror}") from None


def _shown(sans: SubjectAltNames) -> str:
    return ", ".join([*sorted(sans.dns), *(str(ip) for ip in sorted(sans.ips, key=lambda ip: (ip.version, ip)))])
