"""apiextensions.k8s.io/v1 defaulting (``pkg/apis/apiextensions/v1/defaults.go``)."""

from __future__ import annotations

from typing import Any

DEFAULT_PORT = 443


def default_crd(crd: dict[str, Any]) -> None:
    spec = crd.get("spec")
    if spec is None:
        return
    names = spec.get("names")
    if names is not None:
        if not names.get("singular") and names.get("kind"):
            names["singular"] = names["kind"].lower()
        if not names.get("list_kind") and names.get("kind"):
            names["list_kind"] = names["kind"] + "List"
    if spec.get("conversion") is None:
        spec["conversion"] = {"strategy": "None"}
    service = ((spec["conversion"].get("webhook") or {}).get("client_config") or {}).get("service")
    if service is not None and service.get("port") is None:
        service["port"] = DEFAULT_PORT
