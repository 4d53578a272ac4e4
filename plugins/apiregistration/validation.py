"""APIService validation (kube-aggregator's ``pkg/apis/apiregistration/validation``), plus the
checks of kplane's ``spec.url``."""

from __future__ import annotations

import base64
import binascii
from urllib.parse import urlsplit

from kplane.api import (
    FieldError, forbidden, invalid, is_dns1035_label, is_dns1123_subdomain, is_path_segment_name, not_supported, required,
)
from kplane.plugins.apiregistration.types import APIService, APIServiceStatus

CONDITION_STATUSES = ["True", "False", "Unknown"]


def is_local(api_service: APIService) -> bool:
    """Served by this server itself: neither a Service nor a URL to send requests to."""
    return api_service.spec.service is None and not api_service.spec.url


def validate_name(api_service: APIService) -> list[FieldError]:
    """The name must be ``<version>.<group>``; the Store checks it is a path segment first."""
    name = api_service.metadata.name or ""
    if is_path_segment_name(name):
        return []
    spec = api_service.spec
    wanted = f"{spec.version or ''}.{spec.group or ''}"
    if name and name != wanted:
        return [invalid("metadata.name", name, f'must be `spec.version+"."+spec.group`: "{wanted}"')]
    return []


def validate_url(url: str, path: str = "spec.url") -> list[FieldError]:
    """As admission webhooks' ``clientConfig.url``, except that plain http is allowed (kplane's own
    servers speak it)."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018  # raises on a bad port
    except ValueError as err:
        return [invalid(path, url, f"must be a valid URL: {err}")]
    errs: list[FieldError] = []
    if parts.scheme not in ("http", "https"):
        errs.append(invalid(path, url, "'http' or 'https' scheme required"))
    if not parts.hostname:
        errs.append(invalid(path, url, "host must be specified"))
    if parts.username is not None or parts.password is not None:
        errs.append(invalid(path, url, "user information is not permitted in the URL"))
    if parts.fragment or url.endswith("#"):
        errs.append(invalid(path, url, "fragments are not permitted in the URL"))
    if parts.query or "?" in url:
        errs.append(invalid(path, url, "query parameters are not permitted in the URL"))
    return errs


def validate_api_service(api_service: APIService) -> list[FieldError]:
    spec = api_service.spec
    errs = validate_name(api_service)
    group, version = spec.group or "", spec.version or ""
    if not group and version != "v1":  # only the legacy core group has no name
        errs.append(required("spec.group", "only v1 may have an empty group and it better be legacy kube"))
    if group:
        errs += [invalid("spec.group", group, msg) for msg in is_dns1123_subdomain(group)]
    errs += [invalid("spec.version", version, msg) for msg in is_dns1035_label(version)]
    group_priority, version_priority = spec.group_priority_minimum or 0, spec.version_priority or 0
    if not 0 < group_priority <= 20000:
        errs.append(invalid("spec.groupPriorityMinimum", group_priority, "must be positive and less than 20000"))
    if not 0 < version_priority <= 1000:
        errs.append(invalid("spec.versionPriority", version_priority, "must be positive and less than 1000"))
    ca_bundle = _bundle_size(spec.ca_bundle)
    if is_local(api_service):
        if ca_bundle:
            errs.append(invalid("spec.caBundle", f"{ca_bundle} bytes", "local APIServices may not have a caBundle"))
        if spec.insecure_skip_tls_verify:
            errs.append(invalid("spec.insecureSkipTLSVerify", True, "local APIServices may not have insecureSkipTLSVerify"))
        return errs
    service = spec.service
    if service is not None:
        if spec.url:
            errs.append(forbidden("spec.url", "may not be set together with spec.service"))
        if not service.namespace:
            errs.append(required("spec.service.namespace"))
        if not service.name:
            errs.append(required("spec.service.name"))
        port = service.port if service.port is not None else 0
        if not 0 < port <= 65535:
            errs.append(invalid("spec.service.port", port, "port is not valid: must be between 1 and 65535, inclusive"))
    else:
        errs += validate_url(spec.url or "")
    if spec.insecure_skip_tls_verify and ca_bundle:
        errs.append(invalid("spec.insecureSkipTLSVerify", True, "may not be true if caBundle is present"))
    return errs


def validate_status(status: APIServiceStatus) -> list[FieldError]:
    errs: list[FieldError] = []
    for i, condition in enumerate(status.conditions or []):
        if condition.status not in CONDITION_STATUSES:
            errs.append(not_supported(f"status.conditions[{i}].status", condition.status, CONDITION_STATUSES))
    return errs


def _bundle_size(ca_bundle: str | None) -> int:
    if not ca_bundle:
        return 0
    try:
        return len(base64.b64decode(ca_bundle, validate=True))
    except (binascii.Error, ValueError):
        return len(ca_bundle)
