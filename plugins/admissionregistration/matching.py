"""Which requests a webhook or a policy is asked about (kube's ``webhook/predicates`` and
``policy/matching``): rules, ``matchPolicy``, the namespace and object selectors.

Everything here reads configurations as their v1 wire dicts (what the informers hold), so
webhooks and policies share it.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any

from kplane.api import LabelSelector, LabelSelectorRequirement, Scheme, label_selector_from_internal
from kplane.plugins.admissionregistration import GROUP
from kplane.plugins.admissionregistration.attributes import Attributes

#: The kinds admission extensions are never asked about: their own configurations, so a broken
#: webhook or policy can always be fixed (``IsExemptAdmissionConfigurationResource``).
EXEMPT = frozenset({"validatingwebhookconfigurations", "mutatingwebhookconfigurations",
                    "validatingadmissionpolicies", "validatingadmissionpolicybindings",
                    "mutatingadmissionpolicies", "mutatingadmissionpolicybindings"})

#: Looks a Namespace up by name (a lister's ``get``, then the server itself when the cache
#: has not seen it yet); None when there is none.
NamespaceLookup = Callable[[str], Awaitable[dict[str, Any] | None]]


def exempt(attrs: Attributes) -> bool:
    return attrs.group == GROUP and attrs.resource in EXEMPT


def _has(values: Iterable[str] | None, value: str) -> bool:
    values = values or ()
    return "*" in values or value in values


def _resource_matches(entries: Iterable[str] | None, resource: str, subresource: str) -> bool:
    for entry in entries or ():
        if entry == "*/*":
            return True
        res, _, sub = entry.partition("/")
        if "/" not in entry:
            if not subresource and res in ("*", resource):
                return True
        elif res in ("*", resource) and sub in ("*", subresource):
            return True
    return False


def _scope_matches(scope: str | None, attrs: Attributes) -> bool:
    if scope in (None, "*"):
        return True
    cluster = not attrs.namespaced  # a Namespace itself is cluster-scoped
    return cluster if scope == "Cluster" else not cluster


def rule_matches(rule: Mapping[str, Any], attrs: Attributes, version: str) -> bool:
    """Whether one ``RuleWithOperations`` (or a policy's ``NamedRuleWithOperations``) covers the
    request, taken as made in ``version`` of its group."""
    names = rule.get("resourceNames")
    return (_has(rule.get("operations"), attrs.operation)
            and _has(rule.get("apiGroups"), attrs.group)
            and _has(rule.get("apiVersions"), version)
            and _resource_matches(rule.get("resources"), attrs.resource, attrs.subresource)
            and _scope_matches(rule.get("scope"), attrs)
            and (not names or attrs.name in names))


def equivalent_versions(scheme: Scheme, attrs: Attributes) -> list[str]:
    """The versions the request's resource is served in, the request's own first, then the
    group's preferred order (what ``matchPolicy: Equivalent`` may convert to); worked out once
    per request, however many webhooks and policies ask."""
    found = attrs.memo.get("equivalent_versions")
    if found is None:
        rt = attrs.request.resource
        others = (v for v in rt.versions if v != attrs.version and rt.serves(v) and scheme.served(attrs.group, v))
        found = [attrs.version, *scheme.preferred_first(attrs.group, others)]
        attrs.memo["equivalent_versions"] = found
    return found


def matching_version(rules: Iterable[Mapping[str, Any]], match_policy: str | None, scheme: Scheme,
                     attrs: Attributes, exclude: Iterable[Mapping[str, Any]] = ()) -> str | None:
    """The version the request is seen in by a webhook or policy with these rules: the
    request's own when a rule covers it; under ``Equivalent`` (the default) else the first
    other version a rule covers; None when none does. A rule in ``exclude`` (a policy's
    ``excludeResourceRules``) covering the request's version rules it out altogether."""
    rules, exclude = list(rules), list(exclude)
    versions = [attrs.version] if match_policy == "Exact" else equivalent_versions(scheme, attrs)
    if any(rule_matches(r, attrs, v) for r in exclude for v in versions):
        return None
    for version in versions:
        if any(rule_matches(r, attrs, version) for r in rules):
            return version
    return None


def selector(wire: Mapping[str, Any] | None) -> Any:
    """A ``metav1.LabelSelector`` wire dict as a selector; None or ``{}`` selects everything."""
    wire = wire or {}
    requirements = [LabelSelectorRequirement(e.get("key") or "", e.get("operator") or "", e.get("values"))
                    for e in wire.get("matchExpressions") or ()]
    return label_selector_from_internal(LabelSelector(wire.get("matchLabels"), requirements))


def _labels(obj: Mapping[str, Any] | None) -> dict[str, str]:
    return ((obj or {}).get("metadata") or {}).get("labels") or {}


def object_selector_matches(wire: Mapping[str, Any] | None, attrs: Attributes, version: str) -> bool:
    """``objectSelector``: the new object's labels or the old one's match."""
    if not wire:
        return True
    sel = selector(wire)
    obj, old = attrs.objects(version)
    return any(o is not None and sel.matches(_labels(o)) for o in (obj, old))


async def namespace_selector_matches(wire: Mapping[str, Any] | None, attrs: Attributes, version: str,
                                     namespaces: NamespaceLookup) -> bool:
    """``namespaceSelector``: the labels of the request's namespace (of the Namespace itself
    for a request on one); requests on other cluster-scoped kinds always match. Raises
    LookupError when the namespace cannot be found (the caller's failure policy decides)."""
    if not wire or not (wire.get("matchLabels") or wire.get("matchExpressions")):
        return True
    is_namespace = attrs.group == "" and attrs.resource == "namespaces"
    if not attrs.namespaced and not is_namespace:
        return True
    if is_namespace and not attrs.subresource:
        obj, old = attrs.objects(version)
        labels = _labels(obj if obj is not None else old)
    else:
        name = attrs.name if is_namespace else attrs.namespace
        found = await namespaces(name)
        if found is None:
            raise LookupError(f'namespaces "{name}" not found')
        labels = _labels(found)
    return selector(wire).matches(labels)
