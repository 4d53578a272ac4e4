"""Random and encoded name parts in Kubernetes' safe alphabet (apimachinery's ``util/rand``).

Generated names (``metadata.generateName``) and the Deployment controller's pod-template hashes
use the same 27 characters: no vowels, so no accidental words, and none of 0, 1, 3, which read
like O, l and E.
"""

from __future__ import annotations

import secrets

#: The 27 characters of generated names and hashes (the module docstring says why these).
SAFE_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


def random_string(length: int) -> str:
    """``rand.String``: ``length`` random characters of the safe alphabet."""
    return "".join(secrets.choice(SAFE_ALPHABET) for _ in range(length))


def safe_encode_string(text: str) -> str:
    """``rand.SafeEncodeString``: each byte of ``text`` mapped onto the safe alphabet."""
    return "".join(SAFE_ALPHABET[byte % len(SAFE_ALPHABET)] for byte in text.encode())
