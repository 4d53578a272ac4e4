"""Defaulting of admissionregistration.k8s.io (``pkg/apis/admissionregistration/v1/defaults.go``
and its beta and alpha twins), on the decoded (Python-named) data."""

from __future__ import annotations

from typing import Any

from kplane.plugins.admissionregistration.types import ALL_SCOPES, DEFAULT_TIMEOUT_SECONDS, DENY, EQUIVALENT, FAIL, NEVER


def _rules(rules: list[dict[str, Any]] | None) -> None:
    for rule in rules or ():
        if rule.get("scope") is None:
            rule["scope"] = ALL_SCOPES


def _selectors(obj: dict[str, Any]) -> None:
    for key in ("namespace_selector", "object_selector"):
        if obj.get(key) is None:
            obj[key] = {}


def _webhook(hook: dict[str, Any], mutating: bool) -> None:
    if hook.get("failure_policy") is None:
        hook["failure_policy"] = FAIL
    if hook.get("match_policy") is None:
        hook["match_policy"] = EQUIVALENT
    _selectors(hook)
    if hook.get("timeout_seconds") is None:
        hook["timeout_seconds"] = DEFAULT_TIMEOUT_SECONDS
    if mutating and hook.get("reinvocation_policy") is None:
        hook["reinvocation_policy"] = NEVER
    service = (hook.get("client_config") or {}).get("service")
    if service is not None and service.get("port") is None:
        service["port"] = 443
    _rules(hook.get("rules"))


def default_validating_webhook_configuration(obj: dict[str, Any]) -> None:
    for hook in obj.get("webhooks") or ():
        _webhook(hook, mutating=False)


def default_mutating_webhook_configuration(obj: dict[str, Any]) -> None:
    for hook in obj.get("webhooks") or ():
        _webhook(hook, mutating=True)


def _match_resources(match: dict[str, Any] | None) -> None:
    if match is None:
        return
    if match.get("match_policy") is None:
        match["match_policy"] = EQUIVALENT
    _selectors(match)
    _rules(match.get("resource_rules"))
    _rules(match.get("exclude_resource_rules"))


def default_policy(obj: dict[str, Any]) -> None:
    """A ValidatingAdmissionPolicy or a MutatingAdmissionPolicy: failurePolicy Fail, and the
    match constraints' defaults."""
    if obj.get("spec") is None:
        obj["spec"] = {}
    spec = obj["spec"]
    if spec.get("failure_policy") is None:
        spec["failure_policy"] = FAIL
    _match_resources(spec.get("match_constraints"))


def default_binding(obj: dict[str, Any]) -> None:
    """v1 and v1beta1 bindings: only the match resources' defaults (paramRef's
    parameterNotFoundAction is required there)."""
    _match_resources((obj.get("spec") or {}).get("match_resources"))


def default_binding_v1alpha1(obj: dict[str, Any]) -> None:
    """v1alpha1 bindings also default paramRef's parameterNotFoundAction to Deny."""
    default_binding(obj)
    param_ref = (obj.get("spec") or {}).get("param_ref")
    if param_ref is not None and param_ref.get("parameter_not_found_action") is None:
        param_ref["parameter_not_found_action"] = DENY
