"""Random and encoded name parts in Kubernetes' safe alphabet (apimachinery's ``util/rand``),
and random UUIDs (object uids, audit IDs, review uids).

Generated names (``metadata.generateName``) and the Deployment controller's pod-template hashes
use the same 27 characters: no vowels, so no accidental words, and none of 0, 1, 3, which read
like O, l and E.

Randomness comes from the system's (``os.urandom``) 4 KiB at a time. ``os.urandom`` releases the
GIL, and taking it back on the event loop's thread may wait a whole switch interval (5 ms)
behind a busy thread (the storage's writer): once per create, and once per character of a
generated name, that was a twentieth of the write path. A forked process (``serve --workers``)
draws afresh, so no two processes hand out the same ids.
"""

from __future__ import annotations

import os
import threading
import uuid

_POOL_BYTES = 4096
_lock = threading.Lock()
_pool = b""
_at = 0


def _reset() -> None:
    global _pool, _at
    _pool, _at = b"", 0


os.register_at_fork(after_in_child=_reset)


def random_bytes(n: int) -> bytes:
    """``n`` (at most 4 KiB) bytes of the system's randomness."""
    global _pool, _at
    with _lock:
        if _at + n > len(_pool):
            _pool, _at = os.urandom(max(_POOL_BYTES, n)), 0
        out = _pool[_at:_at + n]
        _at += n
    return out


def new_uid() -> str:
    """A fresh random (version 4) UUID, as text: ``uuid.uuid4()``'s."""
    return str(uuid.UUID(bytes=random_bytes(16), version=4))

#: The 27 characters of generated names and hashes (the module docstring says why these).
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


_UNBIASED = 256 - 256 % len(SAFE_ALPHABET)  # bytes below it map evenly onto the alphabet


def random_string(length: int) -> str:
    """``rand.String``: ``length`` random characters of the safe alphabet, each as likely."""
    out: list[str] = []
    while len(out) < length:
        out += (SAFE_ALPHABET[b % len(SAFE_ALPHABET)] for b in random_bytes(length * 2) if b < _UNBIASED)
    return "".join(out[:length])


def safe_encode_string(text: str) -> str:
    """``rand.SafeEncodeString``: each byte of ``text`` mapped onto the safe alphabet."""
    return "".join(SAFE_ALPHABET[byte % len(SAFE_ALPHABET)] for byte in text.encode())
