"""Where the registry keeps each resource's objects: ``/registry/<group>/<plural>/...``, with
``core`` for the core group. Said once, for the registry (which writes the keys) and for storage
layers that act per resource (encryption at rest)."""

from __future__ import annotations

ROOT = "/registry/"
CORE = "core"  # the core group's segment in keys ("" is not a path segment)


def resource_prefix(group: str, plural: str) -> str:
    """The prefix of every key of one resource."""
    return f"{ROOT}{group or CORE}/{plural}/"


def resource_of_key(key: str) -> tuple[str, str] | None:
    """(group, plural) of a key under :func:`resource_prefix`, or None for any other key."""
    if not key.startswith(ROOT):
        return None
    group, slash, rest = key[len(ROOT):].partition("/")
    plural, slash2, _ = rest.partition("/")
    if not (slash and slash2 and group and plural):
        return None
    return ("" if group == CORE else group), plural
