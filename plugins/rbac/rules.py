"""Policy rules as RBAC reads them (``pkg/apis/rbac/v1/evaluation_helpers.go`` and
``pkg/registry/rbac/validation``'s comparator): whether a rule allows a request, whether a set of
rules covers another, and how missing rules are told in an escalation refusal.

Rules are in their wire form (``verbs``, ``apiGroups``, ``resources``, ``resourceNames``,
``nonResourceURLs``), as the informers deliver them.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from typing import Any

from kplane.api import Attributes, NonResourceRule, ResourceRule
from kplane.plugins.rbac.types import PolicyRule

Rule = dict[str, Any]
ALL = "*"


# Membership tests rather than loops: every request's decision runs these over several rules.

def verb_matches(rule: Rule, verb: str) -> bool:
    verbs = rule.get("verbs") or ()
    return ALL in verbs or verb in verbs


def api_group_matches(rule: Rule, group: str) -> bool:
    groups = rule.get("apiGroups") or ()
    return ALL in groups or group in groups


def resource_matches(rule: Rule, combined: str, subresource: str) -> bool:
    """``*``, the exact ``resource[/subresource]``, or ``*/subresource`` for a subresource of any resource."""
    resources = rule.get("resources") or ()
    return ALL in resources or combined in resources or (bool(subresource) and f"*/{subresource}" in resources)


def resource_name_matches(rule: Rule, name: str) -> bool:
    names = rule.get("resourceNames") or ()
    return not names or name in names


def non_resource_url_matches(rule: Rule, path: str) -> bool:
    """``*``, the exact path, or a prefix ending in ``*``."""
    for url in rule.get("nonResourceURLs") or ():
        if url in (ALL, path) or (url.endswith("*") and path.startswith(url.rstrip("*"))):
            return True
    return False


def allows(attributes: Attributes, rule: Rule) -> bool:
    """``RuleAllows``: does ``rule`` grant the request of ``attributes``?"""
    if not verb_matches(rule, attributes.verb):
        return False
    if not attributes.resource_request:
        return non_resource_url_matches(rule, attributes.path)
    combined = f"{attributes.resource}/{attributes.subresource}" if attributes.subresource else attributes.resource
    return (api_group_matches(rule, attributes.api_group) and resource_matches(rule, combined, attributes.subresource)
            and resource_name_matches(rule, attributes.name))


# -- covering: does one set of rules hold everything another grants --------------------------------

def _breakdown(rule: Rule) -> list[Rule]:
    """One rule per group, resource, verb and resource name; one per URL and verb."""
    out: list[Rule] = []
    verbs = rule.get("verbs") or ()
    names = rule.get("resourceNames") or ()
    for group in rule.get("apiGroups") or ():
        for resource in rule.get("resources") or ():
            for verb in verbs:
                base = {"apiGroups": [group], "resources": [resource], "verbs": [verb]}
                out += [{**base, "resourceNames": [n]} for n in names] if names else [base]
    out += [{"nonResourceURLs": [url], "verbs": [verb]} for url in rule.get("nonResourceURLs") or () for verb in verbs]
    return out


def _has_all(owned: Sequence[str], wanted: Sequence[str]) -> bool:
    return set(wanted) <= set(owned)


def _url_covers(owner: str, path: str) -> bool:
    return owner == path or (owner.endswith("*") and path.startswith(owner.rstrip("*")))


def _covers(owner: Rule, sub: Rule) -> bool:
    """``ruleCovers``: ``owner`` grants everything of ``sub`` (one verb, resource, name or URL)."""
    verbs, groups, resources = owner.get("verbs") or (), owner.get("apiGroups") or (), owner.get("resources") or ()
    if not (ALL in verbs or _has_all(verbs, sub.get("verbs") or ())):
        return False
    if not (ALL in groups or _has_all(groups, sub.get("apiGroups") or ())):
        return False
    if not (ALL in resources or _has_all(resources, sub.get("resources") or ())):
        return False
    urls = owner.get("nonResourceURLs") or ()
    if not all(any(_url_covers(o, path) for o in urls) for path in sub.get("nonResourceURLs") or ()):
        return False
    owner_names = owner.get("resourceNames") or ()
    sub_names = sub.get("resourceNames") or ()
    return not owner_names or (bool(sub_names) and _has_all(owner_names, sub_names))


#: The most pieces (verb x group x resource x name) one check breaks rules into; past that, a rule
#: that no single owner rule covers is reported missing whole, so a hostile role (many rules of
#: many pieces each) cannot make the check loop for minutes nor its answer grow to megabytes.
MAX_PIECES = 10_000


def _pieces(rule: Rule) -> int:
    verbs = len(rule.get("verbs") or ())
    resource = len(rule.get("apiGroups") or ()) * len(rule.get("resources") or ()) * max(1, len(rule.get("resourceNames") or ()))
    return verbs * (resource + len(rule.get("nonResourceURLs") or ()))


def missing(owner_rules: Sequence[Rule], rules: Iterable[Rule]) -> list[Rule]:
    """``Covers``: the pieces of ``rules`` no rule of ``owner_rules`` grants (empty: covered)."""
    lacking: list[Rule] = []
    budget = MAX_PIECES
    for rule in rules:
        if any(_covers(o, rule) for o in owner_rules):  # one owner rule grants all of it
            continue
        pieces = _pieces(rule)
        if pieces > budget:
            lacking.append(rule)
            continue
        budget -= pieces
        lacking += [sub for sub in _breakdown(rule) if not any(_covers(o, sub) for o in owner_rules)]
    return lacking


def compact(rules: Sequence[Rule]) -> list[Rule]:
    """``CompactRules``: rules of one group and one resource, and nothing else, merged by verbs."""
    out: list[Rule] = []
    simple: dict[tuple[str, str], Rule] = {}
    for rule in rules:
        groups, resources = rule.get("apiGroups") or [], rule.get("resources") or []
        is_simple = (len(groups) == 1 and len(resources) == 1 and not rule.get("resourceNames")
                     and not rule.get("nonResourceURLs"))
        if not is_simple:
            out.append(rule)
        elif (groups[0], resources[0]) in simple:
            simple[(groups[0], resources[0])]["verbs"] += rule.get("verbs") or []
        else:
            simple[(groups[0], resources[0])] = {"apiGroups": groups, "resources": resources,
                                                 "verbs": list(rule.get("verbs") or [])}
    return out + list(simple.values())


def go_quoted(values: Sequence[str]) -> str:
    """Go's ``%q`` of a ``[]string``: ``["get" "list"]``."""
    return "[" + " ".join(json.dumps(v) for v in values) + "]"


def compact_string(rule: Rule) -> str:
    """``CompactString``: ``{APIGroups:["apps"], Resources:["deployments"], Verbs:["get"]}``."""
    parts = [f"{label}:{go_quoted(rule[key])}" for label, key in (
        ("APIGroups", "apiGroups"), ("Resources", "resources"), ("NonResourceURLs", "nonResourceURLs"),
        ("ResourceNames", "resourceNames"), ("Verbs", "verbs")) if rule.get(key)]
    return "{" + ", ".join(parts) + "}"


# -- between forms ---------------------------------------------------------------------------------

def to_wire(rule: PolicyRule) -> Rule:
    """An internal rule in the wire form these functions read."""
    wire = {"verbs": rule.verbs or [], "apiGroups": rule.api_groups, "resources": rule.resources,
            "resourceNames": rule.resource_names, "nonResourceURLs": rule.non_resource_urls}
    return {k: list(v) for k, v in wire.items() if v}


def review_rules(rules: Iterable[Rule]) -> tuple[list[ResourceRule], list[NonResourceRule]]:
    """Rules as SelfSubjectRulesReview lists them: a rule with resources and one with URLs."""
    resource: list[ResourceRule] = []
    non_resource: list[NonResourceRule] = []
    for rule in rules:
        verbs = tuple(rule.get("verbs") or ())
        if rule.get("resources"):
            resource.append(ResourceRule(verbs, tuple(rule.get("apiGroups") or ()), tuple(rule["resources"]),
                                         tuple(rule.get("resourceNames") or ())))
        if rule.get("nonResourceURLs"):
            non_resource.append(NonResourceRule(verbs, tuple(rule["nonResourceURLs"])))
    return resource, non_resource


def from_wire(rule: Rule) -> PolicyRule:
    return PolicyRule(verbs=list(rule.get("verbs") or []), api_groups=rule.get("apiGroups"),
                      resources=rule.get("resources"), resource_names=rule.get("resourceNames"),
                      non_resource_urls=rule.get("nonResourceURLs"))
