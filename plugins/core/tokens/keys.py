"""The keys of ServiceAccount tokens: one signs, every accepted one verifies.

Tokens are JWTs signed RS256 by default, as kube-apiserver's with kubeadm's RSA ``sa.key``: the
consumers of service account tokens outside the server (OIDC discovery clients, cloud identity
federation) expect RS256 first, and an RSA signature is the cheapest to verify, which the server
does on every request it authenticates this way. An ECDSA signing key is taken as well (ES256,
ES384 or ES512 by its curve), as by kube.

The signing key is ``--service-account-signing-key-file``, or ``DATA_DIR/pki/sa.key``: an RSA
2048 key made (in a thread: it takes ~0.1 s of CPU) the first time a token is issued, written
0600, and reused on later starts. A server that never issues a token never pays for one. Tokens
verify with the signing key's public half and with every key of the ``--service-account-key-file``
files (public keys, certificates, or private keys, whose public halves count), as kube's. The
files are read once, at start; a file that holds no such key stops the start naming it.
"""

from __future__ import annotations

import asyncio
import base64
import hashlib
import os
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jwt
from cryptography import x509
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa

from kplane.api import privatefiles

PrivateKey = rsa.RSAPrivateKey | ec.EllipticCurvePrivateKey
PublicKey = rsa.RSAPublicKey | ec.EllipticCurvePublicKey

DEFAULT_KEY_FILE = Path("pki") / "sa.key"  # under DATA_DIR, kubeadm's name
RSA_KEY_SIZE = 2048

_PEM_BLOCK = re.compile(rb"-----BEGIN ([A-Z0-9 ]+)-----\r?\n.*?-----END \1-----", re.DOTALL)
_EC_ALGORITHMS = {"secp256r1": "ES256", "secp384r1": "ES384", "secp521r1": "ES512"}
_RSA_ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512")


def key_id(public: PublicKey) -> str:
    """The ``kid`` header of the tokens a key signs: kube's, the unpadded base64url SHA-256 of
    its DER SubjectPublicKeyInfo, so the same key has the same id on every server."""
    der = public.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    return base64.urlsafe_b64encode(hashlib.sha256(der).digest()).rstrip(b"=").decode()


def _algorithms(public: PublicKey) -> tuple[str, ...]:
    """The JWS algorithms a key verifies: only those of its own type, so no token can make an
    RSA public key serve as an HMAC secret, nor pass with ``none``."""
    if isinstance(public, rsa.RSAPublicKey):
        return _RSA_ALGORITHMS
    return (_EC_ALGORITHMS[public.curve.name],)


@dataclass(frozen=True)
class VerifyingKey:
    kid: str
    key: PublicKey
    algorithms: tuple[str, ...]

    @classmethod
    def of(cls, public: PublicKey) -> VerifyingKey:
        return cls(key_id(public), public, _algorithms(public))


@dataclass(frozen=True)
class SigningKey:
    key: PrivateKey
    algorithm: str
    kid: str

    @classmethod
    def of(cls, private: PrivateKey, source: str) -> SigningKey:
        if isinstance(private, rsa.RSAPrivateKey):
            algorithm = "RS256"
        elif isinstance(private, ec.EllipticCurvePrivateKey) and private.curve.name in _EC_ALGORITHMS:
            algorithm = _EC_ALGORITHMS[private.curve.name]
        else:
            raise ValueError(f"{source}: the signing key must be an RSA key or an ECDSA key on P-256, P-384 or P-521")
        return cls(private, algorithm, key_id(private.public_key()))


def _usable(public: Any) -> bool:
    return isinstance(public, rsa.RSAPublicKey) or (
        isinstance(public, ec.EllipticCurvePublicKey) and public.curve.name in _EC_ALGORITHMS)


def public_keys(data: bytes, source: str) -> list[PublicKey]:
    """Every RSA or ECDSA public key in PEM ``data``: public keys, certificates' keys and the
    public halves of private keys, as kube's ``keyutil.ParsePublicKeysPEM``."""
    found: list[PublicKey] = []
    for block in _PEM_BLOCK.finditer(data):
        label, pem = block.group(1), block.group(0)
        try:
            if label in (b"PUBLIC KEY", b"RSA PUBLIC KEY"):
                public: Any = serialization.load_pem_public_key(pem)
            elif label == b"CERTIFICATE":
                public = x509.load_pem_x509_certificate(pem).public_key()
            elif label in (b"PRIVATE KEY", b"RSA PRIVATE KEY", b"EC PRIVATE KEY"):
                public = serialization.load_pem_private_key(pem, password=None).public_key()
            else:
                continue  # EC PARAMETERS and the like
        except (ValueError, TypeError) as err:
            raise ValueError(f"{source}: a {label.decode()} block cannot be read: {err}") from None
        if _usable(public):
            found.append(public)
    if not found:
        raise ValueError(f"{source}: data does not contain any valid RSA or ECDSA public keys")
    return found


def private_key(data: bytes, source: str) -> PrivateKey:
    """The (unencrypted) PEM private key of ``data``."""
    try:
        loaded = serialization.load_pem_private_key(data, password=None)
    except (ValueError, TypeError) as err:
        raise ValueError(f"{source}: not an unencrypted PEM private key: {err}") from None
    if not isinstance(loaded, (rsa.RSAPrivateKey, ec.EllipticCurvePrivateKey)):
        raise ValueError(f"{source}: the signing key must be an RSA or ECDSA key")
    return loaded


def _read(path: Path, what: str) -> bytes:
    try:
        return path.read_bytes()
    except OSError as err:
        raise ValueError(f"{what} {path}: {err.strerror or err}") from None


def make_key_file(path: Path) -> PrivateKey:
    """A new RSA key written to ``path`` (0600, its folder 0700), unless another process sharing
    the data dir (``kplane serve --workers``) made it first: then theirs, so that every process
    signs with one key. Blocking: run it in a thread."""
    key = rsa.generate_private_key(public_exponent=65537, key_size=RSA_KEY_SIZE)
    privatefiles.private_dir(path.parent)
    mine = path.with_name(f"{path.name}.{os.getpid()}")
    privatefiles.write_private(mine, key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.TraditionalOpenSSL,
                                                       serialization.NoEncryption()))
    try:
        os.link(mine, path)  # whole, and only if no key is there yet
    except FileExistsError:
        return private_key(_read(path, "the signing key"), str(path))
    finally:
        mine.unlink()
    return key


class KeySet:
    """The signing key (made on first use when it is the default one) and the verifying keys."""

    def __init__(self, signing_key_file: str, key_files: Iterable[str], data_dir: Path | None) -> None:
        self.signing_key_file = Path(signing_key_file) if signing_key_file else None
        self.default_file = data_dir / DEFAULT_KEY_FILE if data_dir is not None else None
        self.key_files = tuple(Path(name) for name in key_files)
        self.signing: SigningKey | None = None
        self.verifying: list[VerifyingKey] = []
        self._making = asyncio.Lock()

    async def load(self) -> None:
        """Read the key files (in a thread): the signing key, the default one if it was made before,
        and the ``--service-account-key-file`` keys. ValueError naming a file that is no good."""
        self.signing, extra = await asyncio.to_thread(self._read_files)
        self.verifying = [VerifyingKey.of(public) for public in extra]
        if self.signing is not None:
            self._accept(self.signing.key.public_key())

    def _read_files(self) -> tuple[SigningKey | None, list[PublicKey]]:
        signing = None
        if self.signing_key_file is not None:
            signing = SigningKey.of(private_key(_read(self.signing_key_file, "--service-account-signing-key-file"),
                                                str(self.signing_key_file)), str(self.signing_key_file))
        elif self.default_file is not None and self.default_file.exists():
            privatefiles.tighten(self.default_file)
            signing = SigningKey.of(private_key(_read(self.default_file, "the signing key"), str(self.default_file)),
                                    str(self.default_file))
        extra = [key for path in self.key_files
                 for key in public_keys(_read(path, "--service-account-key-file"), str(path))]
        return signing, extra

    def _accept(self, public: PublicKey) -> None:
        accepted = VerifyingKey.of(public)
        if all(known.kid != accepted.kid for known in self.verifying):
            self.verifying.insert(0, accepted)

    async def signer(self) -> SigningKey:
        """The signing key, made now (once, off the event loop) when it is the default one and missing."""
        if self.signing is not None:
            return self.signing
        async with self._making:
            if self.signing is None:
                if self.default_file is None:
                    raise RuntimeError("no data folder to keep a ServiceAccount signing key in")
                made = await asyncio.to_thread(make_key_file, self.default_file)
                self.signing = SigningKey.of(made, str(self.default_file))
                self._accept(made.public_key())
        return self.signing

    async def adopt_made(self, kid: str) -> None:
        """Take the default signing key another process sharing the data dir made after this one
        started (``kplane serve --workers``), when a token names a key not known here."""
        if self.signing is not None or self.default_file is None or any(known.kid == kid for known in self.verifying):
            return
        async with self._making:
            if self.signing is None and await asyncio.to_thread(self.default_file.exists):
                made = SigningKey.of(private_key(await asyncio.to_thread(_read, self.default_file, "the signing key"),
                                                 str(self.default_file)), str(self.default_file))
                self.signing = made
                self._accept(made.key.public_key())

    async def sign(self, claims: dict[str, Any]) -> str:
        """A compact JWS of ``claims``, headed ``alg`` and ``kid`` only, as kube's tokens are."""
        signer = await self.signer()
        return jwt.encode(claims, signer.key, algorithm=signer.algorithm, headers={"kid": signer.kid, "typ": None})

    def candidates(self, kid: str) -> list[VerifyingKey]:
        """The keys to try on a token, the one its ``kid`` names first."""
        return sorted(self.verifying, key=lambda known: known.kid != kid)
