"""Validation of roles and bindings (``pkg/apis/rbac/validation``): names are path segments, rules
need verbs, resource rules API groups and resources, URL rules only ClusterRoles; subjects are
Users, Groups or ServiceAccounts, and a binding's roleRef never changes."""

from __future__ import annotations

from kplane.api import FieldError, invalid, is_dns1123_subdomain, is_path_segment_name, not_supported, required
from kplane.plugins.rbac.types import GROUP, PolicyRule, RoleRef, Subject

USER, GROUP_KIND, SERVICE_ACCOUNT = "User", "Group", "ServiceAccount"


def validate_rule(rule: PolicyRule, namespaced: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not rule.verbs:
        errs.append(required(f"{path}.verbs", "verbs must contain at least one value"))
    if rule.non_resource_urls:
        if namespaced:
            errs.append(invalid(f"{path}.nonResourceURLs", rule.non_resource_urls,
                                "namespaced rules cannot apply to non-resource URLs"))
        if rule.api_groups or rule.resources or rule.resource_names:
            errs.append(invalid(f"{path}.nonResourceURLs", rule.non_resource_urls,
                                "rules cannot apply to both regular resources and non-resource URLs"))
        return errs
    if not rule.api_groups:
        errs.append(required(f"{path}.apiGroups", "resource rules must supply at least one api group"))
    if not rule.resources:
        errs.append(required(f"{path}.resources", "resource rules must supply at least one resource"))
    if rule.resource_names and len(rule.resources or ()) > 1:
        errs.append(required(f"{path}.resourceNames", "resource names cannot apply to multiple resources"))
    return errs


def validate_rules(rules: list[PolicyRule] | None, namespaced: bool) -> list[FieldError]:
    return [e for i, rule in enumerate(rules or ()) for e in validate_rule(rule, namespaced, f"rules[{i}]")]


def validate_role_ref(ref: RoleRef, kinds: list[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    if ref.api_group != GROUP:
        errs.append(not_supported("roleRef.apiGroup", ref.api_group, [GROUP]))
    if ref.kind not in kinds:
        errs.append(not_supported("roleRef.kind", ref.kind, kinds))
    if not ref.name:
        errs.append(required("roleRef.name", ""))
    else:
        errs += [invalid("roleRef.name", ref.name, msg) for msg in is_path_segment_name(ref.name)]
    return errs


def validate_subject(subject: Subject, namespaced: bool, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not subject.name:
        errs.append(required(f"{path}.name", ""))
    if subject.kind == SERVICE_ACCOUNT:
        if subject.name:
            errs += [invalid(f"{path}.name", subject.name, msg) for msg in is_dns1123_subdomain(subject.name)]
        if subject.api_group:
            errs.append(not_supported(f"{path}.apiGroup", subject.api_group, [""]))
        if not namespaced and not subject.namespace:
            errs.append(required(f"{path}.namespace", ""))
    elif subject.kind in (USER, GROUP_KIND):
        if not subject.name:
            what = "user" if subject.kind == USER else "group"
            errs.append(invalid(f"{path}.name", subject.name, f"{what} name cannot be empty"))
        if subject.api_group != GROUP:
            errs.append(not_supported(f"{path}.apiGroup", subject.api_group or "", [GROUP]))
    else:
        errs.append(not_supported(f"{path}.kind", subject.kind, [SERVICE_ACCOUNT, USER, GROUP_KIND]))
    return errs


def validate_binding(subjects: list[Subject] | None, ref: RoleRef, namespaced: bool) -> list[FieldError]:
    kinds = ["Role", "ClusterRole"] if namespaced else ["ClusterRole"]
    errs = validate_role_ref(ref, kinds)
    for i, subject in enumerate(subjects or ()):
        errs += validate_subject(subject, namespaced, f"subjects[{i}]")
    return errs


def validate_role_ref_update(ref: RoleRef, old: RoleRef) -> list[FieldError]:
    if ref != old:
        return [invalid("roleRef", {"apiGroup": ref.api_group, "kind": ref.kind, "name": ref.name},
                        "cannot change roleRef")]
    return []
