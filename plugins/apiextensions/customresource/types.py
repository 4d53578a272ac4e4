"""The internal form of a custom resource: typed metadata, everything else as JSON."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import ObjectMeta


@dataclass(slots=True)
class CustomResource:
    """A custom resource as the registry handles it: the Store and strategies need a typed
    ``metadata``; ``content`` is every other top-level field but ``apiVersion`` and ``kind``
    (``spec``, ``status``, or anything the schema allows), as JSON values keyed by wire names."""

    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    content: dict[str, Any] = field(default_factory=dict)
    #: The version ``content`` is in: the one it was decoded in (a write's request version) or
    #: read from storage in. Converting it to another version may take a conversion webhook.
    version: str = ""
