"""core/v1 conversions where the wire shape differs from the internal one.

A Secret's ``stringData`` is a write-only convenience: on the way in its values are encoded and
merged into ``data`` (winning over ``data`` for the same key); it never comes back out.
"""

from __future__ import annotations

import base64
from typing import Any


def secret_to_internal(data: dict[str, Any]) -> dict[str, Any]:
    string_data = data.pop("string_data", None)
    if string_data:
        merged = dict(data.get("data") or {})
        merged.update({k: base64.b64encode(v.encode()).decode() for k, v in string_data.items()})
        data["data"] = merged
    return data
