"""Validation of FlowSchemas and PriorityLevelConfigurations (``pkg/apis/flowcontrol/validation``),
on internal objects: kube's rules and messages, including that the mandatory objects keep their
fixed specs."""

from __future__ import annotations

import dataclasses
import math

from kplane.api import FieldError, duplicate, forbidden, invalid, is_dns1123_label, is_dns1123_subdomain, not_supported, required
from kplane.plugins.flowcontrol.bootstrap import MANDATORY_LEVELS, MANDATORY_SCHEMAS
from kplane.plugins.flowcontrol.types import (
    EXEMPT, FlowControlStatus, FlowSchema, LimitedPriorityLevelConfiguration, LimitResponse, NonResourcePolicyRule,
    PolicyRulesWithSubjects, PriorityLevelConfiguration, QueuingConfiguration, ResourcePolicyRule, Subject,
)

MAX_MATCHING_PRECEDENCE = 10000
MAX_QUEUES = 10 * 1000 * 1000
MAX_HASH_BITS = 60  # shuffle sharding's hash
DISTINGUISHER_METHODS = ["ByNamespace", "ByUser"]
VERBS = ["create", "delete", "deletecollection", "get", "list", "patch", "proxy", "update", "watch"]
SUBJECT_KINDS = ["Group", "ServiceAccount", "User"]
LEVEL_TYPES = ["Exempt", "Limited"]
LIMIT_RESPONSE_TYPES = ["Queue", "Reject"]
NAMESPACE_INTRO = "each member of this list must be '*' or a DNS-1123 label; "


def validate_flow_schema(fs: FlowSchema) -> list[FieldError]:
    name = fs.metadata.name or ""
    errs = _flow_schema_spec(name, fs)
    mandatory = MANDATORY_SCHEMAS.get(name)
    if mandatory is not None and fs.spec != mandatory.spec:
        errs.append(invalid("spec", fs.spec, f"spec of '{name}' must equal the fixed value"))
    return errs + validate_status(fs.status)


def _flow_schema_spec(name: str, fs: FlowSchema) -> list[FieldError]:
    spec, errs = fs.spec, []
    precedence = spec.matching_precedence
    if precedence <= 0:
        errs.append(invalid("spec.matchingPrecedence", precedence, "must be a positive value"))
    if precedence > MAX_MATCHING_PRECEDENCE:
        errs.append(invalid("spec.matchingPrecedence", precedence, f"must not be greater than {MAX_MATCHING_PRECEDENCE}"))
    if precedence == 1 and name != EXEMPT:
        errs.append(invalid("spec.matchingPrecedence", precedence, "only the schema named 'exempt' may have matchingPrecedence 1"))
    if spec.distinguisher_method is not None and spec.distinguisher_method.type not in DISTINGUISHER_METHODS:
        errs.append(not_supported("spec.distinguisherMethod.type", spec.distinguisher_method.type, DISTINGUISHER_METHODS))
    level = spec.priority_level_configuration.name
    if level:
        errs += [invalid("spec.priorityLevelConfiguration.name", level, msg) for msg in is_dns1123_subdomain(level)]
    else:
        errs.append(required("spec.priorityLevelConfiguration.name", "must reference a priority level"))
    for i, rule in enumerate(spec.rules or ()):
        errs += _rules(rule, f"spec.rules[{i}]")
    return errs


def _rules(rule: PolicyRulesWithSubjects, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    if not rule.subjects:
        errs.append(required(f"{path}.subjects", "subjects must contain at least one value"))
    for i, subject in enumerate(rule.subjects):
        errs += _subject(subject, f"{path}.subjects[{i}]")
    if not rule.resource_rules and not rule.non_resource_rules:
        errs.append(required(path, "at least one of resourceRules and nonResourceRules has to be non-empty"))
    for i, resource_rule in enumerate(rule.resource_rules or ()):
        errs += _resource_rule(resource_rule, f"{path}.resourceRules[{i}]")
    for i, non_resource_rule in enumerate(rule.non_resource_rules or ()):
        errs += _non_resource_rule(non_resource_rule, f"{path}.nonResourceRules[{i}]")
    return errs


_SUBJECT_FIELDS = (("User", "user", "user is forbidden when subject kind is not 'User'"),
                   ("Group", "group", "group is forbidden when subject kind is not 'Group'"),
                   ("ServiceAccount", "serviceAccount", "serviceAccount is forbidden when subject kind is not 'ServiceAccount'"))


def _subject(subject: Subject, path: str) -> list[FieldError]:
    if subject.kind not in SUBJECT_KINDS:
        return [not_supported(f"{path}.kind", subject.kind, SUBJECT_KINDS)]
    errs: list[FieldError] = []
    if subject.kind == "ServiceAccount":
        account = subject.service_account
        if account is None:
            errs.append(required(f"{path}.serviceAccount", "serviceAccount is required when subject kind is 'ServiceAccount'"))
        else:
            if not account.name:
                errs.append(required(f"{path}.serviceAccount.name"))
            elif account.name != "*":
                errs += [invalid(f"{path}.serviceAccount.name", account.name, m) for m in is_dns1123_subdomain(account.name)]
            if not account.namespace:
                errs.append(required(f"{path}.serviceAccount.namespace", "must specify namespace for service account"))
            else:
                errs += [invalid(f"{path}.serviceAccount.namespace", account.namespace, m) for m in is_dns1123_label(account.namespace)]
    else:
        named = subject.user if subject.kind == "User" else subject.group
        wire = subject.kind.lower()
        if named is None:
            errs.append(required(f"{path}.{wire}", f"{wire} is required when subject kind is '{subject.kind}'"))
        elif not named.name:
            errs.append(required(f"{path}.{wire}.name"))
    for kind, wire, message in _SUBJECT_FIELDS:
        attribute = "service_account" if wire == "serviceAccount" else wire
        if kind != subject.kind and getattr(subject, attribute) is not None:
            errs.append(forbidden(f"{path}.{wire}", message))
    return errs


def _verbs(verbs: list[str], path: str) -> list[FieldError]:
    if not verbs:
        return [required(path, "verbs must contain at least one value")]
    if "*" in verbs:
        return [invalid(path, verbs, "if '*' is present, must not specify other verbs")] if len(verbs) > 1 else []
    return [] if set(verbs) <= set(VERBS) else [not_supported(path, verbs, VERBS)]


def _resource_rule(rule: ResourcePolicyRule, path: str) -> list[FieldError]:
    errs = _verbs(rule.verbs, f"{path}.verbs")
    for values, wire, what in ((rule.api_groups, "apiGroups", "api group"), (rule.resources, "resources", "resource")):
        if not values:
            errs.append(required(f"{path}.{wire}", f"resource rules must supply at least one {what}"))
        elif len(values) > 1 and "*" in values:
            errs.append(invalid(f"{path}.{wire}", values, f"if '*' is present, must not specify other {what}s"))
    if not rule.namespaces and not rule.cluster_scope:
        errs.append(required(f"{path}.namespaces", "resource rules that are not cluster scoped must supply at least one namespace"))
    elif "*" in rule.namespaces:
        if len(rule.namespaces) > 1:
            errs.append(invalid(f"{path}.namespaces", rule.namespaces, "if '*' is present, must not specify other namespaces"))
    else:
        errs += [invalid(f"{path}.namespaces[{i}]", ns, NAMESPACE_INTRO + msg)
                 for i, ns in enumerate(rule.namespaces) for msg in is_dns1123_label(ns)]
    return errs


def _non_resource_rule(rule: NonResourcePolicyRule, path: str) -> list[FieldError]:
    errs = _verbs(rule.verbs, f"{path}.verbs")
    urls = rule.non_resource_urls
    if not urls:
        errs.append(required(f"{path}.nonResourceURLs", "nonResourceURLs must contain at least one value"))
    elif "*" in urls:
        if len(urls) > 1:
            errs.append(invalid(f"{path}.nonResourceURLs", urls, "if '*' is present, must not specify other non-resource URLs"))
    else:
        errs += [e for i, url in enumerate(urls) if (e := _url_path(url, f"{path}.nonResourceURLs[{i}]")) is not None]
    return errs


def _url_path(url: str, path: str) -> FieldError | None:
    """``ValidateNonResourceURLPath``: absolute, no blanks or double slashes, ``*`` only as a ``/*`` suffix."""
    if not url:
        return invalid(path, url, "must not be empty")
    if url == "/":
        return None
    for bad, message in ((not url.startswith("/"), "must start with slash"), (" " in url, "must not contain white-space"),
                         ("//" in url, "must not contain double slash")):
        if bad:
            return invalid(path, url, message)
    stars = url.count("*")
    if stars > 1 or (stars == 1 and not url.endswith("/*")):
        return invalid(path, url, "wildcard can only do suffix matching")
    return None


def validate_status(status: FlowControlStatus) -> list[FieldError]:
    errs: list[FieldError] = []
    seen: set[str] = set()
    for i, condition in enumerate(status.conditions or ()):
        if condition.type in seen:
            errs.append(duplicate(f"status.conditions[{i}].type", condition.type))
        seen.add(condition.type)
        if not condition.type:
            errs.append(required(f"status.conditions[{i}].type", "must not be empty"))
    return errs


def validate_priority_level(pl: PriorityLevelConfiguration) -> list[FieldError]:
    name, spec = pl.metadata.name or "", pl.spec
    errs: list[FieldError] = []
    if (name == EXEMPT) != (spec.type == "Exempt"):
        errs.append(invalid("spec.type", spec.type, "type must be 'Exempt' if and only if name is 'exempt'"))
    if spec.type == "Exempt":
        if spec.limited is not None:
            errs.append(forbidden("spec.limited", "must be nil if the type is not Limited"))
        if spec.exempt is not None:
            errs += _shares_and_lending(spec.exempt.nominal_concurrency_shares, spec.exempt.lendable_percent, "spec.exempt")
    elif spec.type == "Limited":
        if spec.exempt is not None:
            errs.append(forbidden("spec.exempt", "must be nil if the type is Limited"))
        if spec.limited is None:
            errs.append(required("spec.limited", "must not be empty when type is Limited"))
        else:
            errs += _limited(spec.limited)
    else:
        errs.append(not_supported("spec.type", spec.type, LEVEL_TYPES))
    errs += _mandatory_level(pl)
    return errs + validate_status(pl.status)


def _mandatory_level(pl: PriorityLevelConfiguration) -> list[FieldError]:
    """The mandatory levels keep their specs; of ``exempt`` an operator may change ``spec.exempt``."""
    name = pl.metadata.name or ""
    mandatory = MANDATORY_LEVELS.get(name)
    if mandatory is None:
        return []
    if name == EXEMPT:
        if dataclasses.replace(pl.spec, exempt=mandatory.spec.exempt) != mandatory.spec:
            return [invalid("spec", pl.spec, f"spec of '{name}' except the 'spec.exempt' field must equal the fixed value")]
        return []
    return [invalid("spec", pl.spec, f"spec of '{name}' must equal the fixed value")] if pl.spec != mandatory.spec else []


def _shares_and_lending(shares: int | None, lendable: int | None, path: str) -> list[FieldError]:
    errs = []
    if shares is not None and shares < 0:
        errs.append(invalid(f"{path}.nominalConcurrencyShares", shares, "must be a non-negative integer"))
    if lendable is not None and not 0 <= lendable <= 100:
        errs.append(invalid(f"{path}.lendablePercent", lendable, "must be between 0 and 100, inclusive"))
    return errs


def _limited(limited: LimitedPriorityLevelConfiguration) -> list[FieldError]:
    path = "spec.limited"
    shares = limited.nominal_concurrency_shares
    errs = _shares_and_lending(shares, None, path) + _limit_response(limited.limit_response, f"{path}.limitResponse")
    errs += _shares_and_lending(None, limited.lendable_percent, path)
    borrowing = limited.borrowing_limit_percent
    if borrowing is not None and borrowing < 0:
        errs.append(invalid(f"{path}.borrowingLimitPercent", borrowing, "if specified, must be a non-negative integer"))
    return errs


def _limit_response(response: LimitResponse, path: str) -> list[FieldError]:
    if response.type == "Reject":
        return [forbidden(f"{path}.queuing", "must be nil if limited.limitResponse.type is not Limited")] if response.queuing else []
    if response.type == "Queue":
        if response.queuing is None:
            return [required(f"{path}.queuing", "must not be empty if limited.limitResponse.type is Limited")]
        return _queuing(response.queuing, f"{path}.queuing")
    return [not_supported(f"{path}.type", response.type, LIMIT_RESPONSE_TYPES)]


def _queuing(queuing: QueuingConfiguration, path: str) -> list[FieldError]:
    errs = []
    if queuing.queue_length_limit <= 0:
        errs.append(invalid(f"{path}.queueLengthLimit", queuing.queue_length_limit, "must be positive"))
    queues, hand = queuing.queues, queuing.hand_size
    if queues <= 0:
        errs.append(invalid(f"{path}.queues", queues, "must be positive"))
    elif queues > MAX_QUEUES:
        errs.append(invalid(f"{path}.queues", queues, f"must not be greater than {MAX_QUEUES}"))
    if hand <= 0:
        errs.append(invalid(f"{path}.handSize", hand, "must be positive"))
    elif hand > queues:
        errs.append(invalid(f"{path}.handSize", hand, f"should not be greater than queues ({queues})"))
    elif math.ceil(math.log2(queues) * hand) > MAX_HASH_BITS:
        errs.append(invalid(f"{path}.handSize", hand, f"required entropy bits of deckSize {queues} and handSize {hand} "
                                                       f"should not be greater than {MAX_HASH_BITS}"))
    return errs
