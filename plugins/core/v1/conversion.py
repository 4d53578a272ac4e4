"""core/v1 conversions where the wire shape differs from the internal one.

A Secret's ``stringData`` is a write-only convenience: on the way in its values are encoded and
merged into ``data`` (winning over ``data`` for the same key); it never comes back out.
A PodSpec's ``serviceAccount`` is an alias of ``serviceAccountName``: read on the way in when the
name is missing, and always written out as the name (for Pods and for every pod template).
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


def pod_spec_to_internal(spec: dict[str, Any]) -> None:
    """``serviceAccount`` is the deprecated alias of ``serviceAccountName``, which wins when both are given."""
    if spec.get("service_account") and not spec.get("service_account_name"):
        spec["service_account_name"] = spec["service_account"]


def pod_spec_from_internal(spec: dict[str, Any]) -> None:
    """The alias always reads as the name (``Convert_core_PodSpec_To_v1_PodSpec``)."""
    spec["service_account"] = spec.get("service_account_name")


def pod_to_internal(pod: dict[str, Any]) -> dict[str, Any]:
    if pod.get("spec"):
        pod_spec_to_internal(pod["spec"])
    return pod


def pod_from_internal(pod: dict[str, Any]) -> dict[str, Any]:
    if pod.get("spec"):
        pod_spec_from_internal(pod["spec"])
    return pod
