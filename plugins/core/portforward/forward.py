"""Opening a port of a pod for a port-forward, and the error the kubelet sends when it cannot."""

from __future__ import annotations

from typing import Any

from kplane.plugins.core.containers.endpoint import Connection

Obj = dict[str, Any]

#: The most bytes one data message or frame carries to the client (kubectl reads 32 KiB at a time).
CHUNK = 32 << 10


class ForwardError(Exception):
    """A port cannot be forwarded; the message is what the error stream or channel carries."""


def open_port(pod: Obj, port: int) -> Connection:
    """A connection to ``port`` of ``pod``, which must be Running (its containers started), as a
    real pod's network namespace only exists then; the message as the kubelet words it."""
    phase = (pod.get("status") or {}).get("phase") or "Pending"
    if phase != "Running":
        meta = pod.get("metadata") or {}
        raise ForwardError(f"error forwarding port {port} to pod {meta.get('name', '')}, uid {meta.get('uid', '')}: "
                           f"the pod is {phase}, not Running")
    return Connection(pod, port)


def chunks(data: bytes) -> list[bytes]:
    """``data`` in pieces of at most :data:`CHUNK` bytes (none for no data)."""
    return [data[at : at + CHUNK] for at in range(0, len(data), CHUNK)]


def parse_port(text: str) -> int:
    """A port number as the kubelet parses one (``ParseUint(.., 10, 16)``, > 0); ValueError else."""
    if not text.isdigit() or not 0 < int(text) < 65536:
        raise ValueError(f"unable to parse {text!r} as a port")
    return int(text)
