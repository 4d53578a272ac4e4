"""apiregistration.k8s.io/v1 defaulting (``pkg/apis/apiregistration/v1/defaults.go``)."""

from __future__ import annotations

from typing import Any

DEFAULT_PORT = 443


def default_api_service(api_service: dict[str, Any]) -> None:
    service = (api_service.get("spec") or {}).get("service")
    if service is not None and service.get("port") is None:
        service["port"] = DEFAULT_PORT
