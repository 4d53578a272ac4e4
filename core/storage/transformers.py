"""Value transformers: how a stored value is encrypted at rest, as k8s.io/apiserver's
``storage/value`` and its ``encrypt/{aes,secretbox,identity}`` packages do it, byte for byte.

A stored value is ``PREFIX || ciphertext``. Providers are tried in order on a read, by their
prefix (``k8s:enc:aescbc:v1:``, then the key's ``NAME:``); the first one writes. A read through
any but the first is *stale*: the value should be written again (a rewrite re-encrypts it with
the current key). The authenticated data of AES-GCM is the storage key, so a value copied to
another key does not decrypt. AES-CBC and secretbox authenticate no extra data, as in Kubernetes.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from cryptography.exceptions import InvalidTag
from cryptography.hazmat.primitives import padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from nacl.exceptions import CryptoError
from nacl.secret import SecretBox

ENCRYPTED_PREFIX = b"k8s:enc:"  # reserved for encrypted values: identity refuses to read them
AESGCM_PREFIX = b"k8s:enc:aesgcm:v1:"
AESCBC_PREFIX = b"k8s:enc:aescbc:v1:"
SECRETBOX_PREFIX = b"k8s:enc:secretbox:v1:"
_GCM_NONCE = 12
_BLOCK = 16  # the AES block, which is also the CBC IV's size
_SECRETBOX_NONCE = 24
_SECRETBOX_OVERHEAD = 16  # Poly1305's tag


class TransformError(Exception):
    """A stored value no transformer can read (wrong key, tampered, truncated, unknown prefix)."""


class Transformer(Protocol):
    """Turns a value into its stored form and back; ``context`` is the authenticated data."""

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        """The value and whether it is stale (read by a provider or key that does not write)."""

    def to_storage(self, data: bytes, context: bytes) -> bytes: ...


class Identity:
    """Stores values as they are; reading a value another provider encrypted is an error, so a
    later provider in the list gets to decrypt it (how one migrates away from encryption)."""

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if data.startswith(ENCRYPTED_PREFIX):
            raise TransformError("identity transformer tried to read encrypted data")
        return data, False

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        return data


class AESGCMTransformer:
    """AES-GCM with a random 96-bit nonce before the ciphertext and tag."""

    def __init__(self, key: bytes) -> None:
        self._aead = AESGCM(key)

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if len(data) < _GCM_NONCE:
            raise TransformError("the stored data was shorter than the required size")
        try:
            return self._aead.decrypt(data[:_GCM_NONCE], data[_GCM_NONCE:], context), False
        except InvalidTag:
            raise TransformError("cipher: message authentication failed") from None

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        nonce = os.urandom(_GCM_NONCE)
        return nonce + self._aead.encrypt(nonce, data, context)


class AESCBCTransformer:
    """AES-CBC with a random IV before the ciphertext and PKCS#7 padding."""

    def __init__(self, key: bytes) -> None:
        self._algorithm = algorithms.AES(key)

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if len(data) < _BLOCK:
            raise TransformError("the stored data was shorter than the required size")
        iv, body = data[:_BLOCK], data[_BLOCK:]
        if len(body) % _BLOCK:
            raise TransformError("the stored data is not a multiple of the block size")
        decryptor = Cipher(self._algorithm, modes.CBC(iv)).decryptor()
        padded = decryptor.update(body) + decryptor.finalize()
        unpadder = padding.PKCS7(_BLOCK * 8).unpadder()
        try:
            return unpadder.update(padded) + unpadder.finalize(), False
        except ValueError:
            raise TransformError("invalid padding on input") from None

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        iv = os.urandom(_BLOCK)
        padder = padding.PKCS7(_BLOCK * 8).padder()
        encryptor = Cipher(self._algorithm, modes.CBC(iv)).encryptor()
        return iv + encryptor.update(padder.update(data) + padder.finalize()) + encryptor.finalize()


class SecretboxTransformer:
    """NaCl secretbox (XSalsa20-Poly1305) with a random 24-byte nonce before the box, through PyNaCl."""

    def __init__(self, key: bytes) -> None:
        self._box = SecretBox(key)

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        if len(data) < _SECRETBOX_NONCE + _SECRETBOX_OVERHEAD:
            raise TransformError("the stored data was shorter than the required size")
        try:
            return self._box.decrypt(data[_SECRETBOX_NONCE:], data[:_SECRETBOX_NONCE]), False
        except CryptoError:
            raise TransformError("secretbox: message authentication failed") from None

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        nonce = os.urandom(_SECRETBOX_NONCE)
        return nonce + self._box.encrypt(data, nonce).ciphertext



@dataclass(frozen=True, slots=True)
class Prefixed:
    """A transformer and the prefix its stored values start with (empty: identity)."""

    prefix: bytes
    transformer: Transformer


class PrefixTransformers:
    """``value.NewPrefixTransformers``: writes with the first; reads with the first whose prefix
    the value has and that succeeds (two providers of one kind share a prefix, and identity
    declines encrypted data), stale unless that is the first."""

    def __init__(self, transformers: Sequence[Prefixed], no_match: str) -> None:
        if not transformers:
            raise ValueError("PrefixTransformers needs at least one transformer")
        self._transformers = tuple(transformers)
        self._no_match = no_match

    def from_storage(self, data: bytes, context: bytes) -> tuple[bytes, bool]:
        failures: list[str] = []
        for index, candidate in enumerate(self._transformers):
            if not data.startswith(candidate.prefix):
                continue
            try:
                value, stale = candidate.transformer.from_storage(data[len(candidate.prefix):], context)
            except TransformError as err:
                if candidate.prefix:  # identity's refusal is no failure: a later one may decrypt
                    failures.append(str(err))
                continue
            return value, stale or index != 0
        if failures:
            raise TransformError(failures[0] if len(failures) == 1 else f"[{', '.join(failures)}]")
        raise TransformError(self._no_match)

    def to_storage(self, data: bytes, context: bytes) -> bytes:
        first = self._transformers[0]
        return first.prefix + first.transformer.to_storage(data, context)
