"""The audit policy (``audit.k8s.io/v1`` ``Policy``): read, validated as kube's
``validation.ValidatePolicy``, and asked how to audit a request (its ``policy/checker.go``).

The first rule that matches a request decides its level; a request no rule matches is not
audited (level ``None``). A rule's ``omitStages`` add to the policy's.
"""

from __future__ import annotations

import enum
import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from kplane.core.authn.user import UserInfo
from kplane.core.authz.attributes import Attributes
from kplane.core.meta import errors
from kplane.core.meta.validation import is_dns1123_subdomain

log = logging.getLogger(__name__)

GROUP_VERSION = "audit.k8s.io/v1"


class Level(enum.IntEnum):
    """How much of a request is recorded, each level including the ones before it."""

    NONE = 0
    METADATA = 1  # who, what, when, the answer's status: no bodies
    REQUEST = 2  # and the request's body
    REQUEST_RESPONSE = 3  # and the response's body

    @property
    def api_name(self) -> str:
        return _LEVEL_NAMES[self]


_LEVEL_NAMES = {Level.NONE: "None", Level.METADATA: "Metadata", Level.REQUEST: "Request",
                Level.REQUEST_RESPONSE: "RequestResponse"}
_LEVELS = {name: level for level, name in _LEVEL_NAMES.items()}

REQUEST_RECEIVED = "RequestReceived"
RESPONSE_STARTED = "ResponseStarted"
RESPONSE_COMPLETE = "ResponseComplete"
PANIC = "Panic"
STAGES = (REQUEST_RECEIVED, RESPONSE_STARTED, RESPONSE_COMPLETE, PANIC)


class PolicyError(ValueError):
    """The policy file cannot be used; the message says why, as kube-apiserver's does."""


@dataclass(frozen=True, slots=True)
class GroupResources:
    group: str = ""  # "" the core group, "*" any
    resources: tuple[str, ...] = ()  # "pods", "pods/log", "*/log", "pods/*", "*"; none: all of the group
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class PolicyRule:
    level: Level
    users: tuple[str, ...] = ()
    user_groups: tuple[str, ...] = ()
    verbs: tuple[str, ...] = ()
    resources: tuple[GroupResources, ...] = ()
    namespaces: tuple[str, ...] = ()  # "" matches cluster-scoped requests
    non_resource_urls: tuple[str, ...] = ()  # "/healthz", "/apis/*", "*"
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool | None = None  # None: the policy's


@dataclass(frozen=True, slots=True)
class RequestAuditConfig:
    """How one request is audited."""

    level: Level
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False


@dataclass(frozen=True, slots=True)
class Policy:
    rules: tuple[PolicyRule, ...]
    omit_stages: frozenset[str] = frozenset()
    omit_managed_fields: bool = False
    _default: RequestAuditConfig = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_default", RequestAuditConfig(Level.NONE, self.omit_stages, self.omit_managed_fields))

    def evaluate(self, attributes: Attributes, user: UserInfo | None) -> RequestAuditConfig:
        """The first matching rule's config. ``user`` None: the request failed authentication,
        and rules naming users or groups do not match it."""
        for rule in self.rules:
            if _matches(rule, attributes, user):
                omit_fields = self.omit_managed_fields if rule.omit_managed_fields is None else rule.omit_managed_fields
                return RequestAuditConfig(rule.level, self.omit_stages | rule.omit_stages, omit_fields)
        return self._default


def _matches(rule: PolicyRule, a: Attributes, user: UserInfo | None) -> bool:
    if rule.users and (user is None or user.name not in rule.users):
        return False
    if rule.user_groups and (user is None or not any(g in rule.user_groups for g in user.groups)):
        return False
    if rule.verbs and a.verb not in rule.verbs:
        return False
    if rule.namespaces or rule.resources:
        return _matches_resource(rule, a)
    if rule.non_resource_urls:
        return not a.resource_request and any(_path_matches(a.path, spec) for spec in rule.non_resource_urls)
    return True


def _path_matches(path: str, spec: str) -> bool:
    return spec == "*" or spec == path or (spec.endswith("*") and path.startswith(spec.rstrip("*")))


def _matches_resource(rule: PolicyRule, a: Attributes) -> bool:
    if not a.resource_request:
        return False
    if rule.namespaces and a.namespace not in rule.namespaces:
        return False
    if not rule.resources:
        return True
    combined = f"{a.resource}/{a.subresource}" if a.subresource else a.resource
    for gr in rule.resources:
        if gr.group not in (a.api_group, "*"):
            continue
        if not gr.resources:
            return True
        if gr.resource_names and a.name not in gr.resource_names:
            continue
        for res in gr.resources:
            if res in (combined, "*"):
                return True
            if a.subresource and res.startswith("*/") and a.subresource == res[2:]:
                return True
            if res.endswith("/*") and a.resource == res[:-2]:
                return True
    return False


def load_policy(path: Path) -> Policy:
    """The policy in ``path`` (YAML or JSON); :class:`PolicyError` naming what is wrong."""
    try:
        text = path.read_bytes()
    except OSError as err:
        raise PolicyError(f'failed to read file path "{path}": {err.strerror}') from None
    try:
        return parse_policy(text)
    except PolicyError as err:
        raise PolicyError(f"{err}: from file {path}") from None


def parse_policy(text: bytes) -> Policy:
    try:
        document = yaml.safe_load(text)
    except yaml.YAMLError as err:
        raise PolicyError(f"failed decoding: {err}") from None
    if not isinstance(document, dict):
        raise PolicyError("failed decoding: the policy is not an object")
    api_version, kind = document.get("apiVersion"), document.get("kind")
    if not api_version or not kind:
        raise PolicyError("failed decoding: Object 'Kind' or 'apiVersion' is missing")
    if (api_version, kind) != (GROUP_VERSION, "Policy"):
        raise PolicyError(f'failed decoding: no kind "{kind}" is registered for version "{api_version}"')
    reader = _Reader()
    policy = reader.policy(document)
    for unknown in reader.unknown:  # kube falls back to lenient decoding, with a warning
        log.warning("audit policy contains errors, falling back to lenient decoding: unknown field %r", unknown)
    problems = reader.problems
    if problems:
        raise PolicyError(str(problems[0]) if len(problems) == 1 else "[" + ", ".join(map(str, problems)) + "]")
    if not policy.rules:
        raise PolicyError("loaded illegal policy with 0 rules")
    return policy


_POLICY_FIELDS = {"apiVersion", "kind", "metadata", "rules", "omitStages", "omitManagedFields"}
_RULE_FIELDS = {"level", "users", "userGroups", "verbs", "resources", "namespaces", "nonResourceURLs", "omitStages",
                "omitManagedFields"}
_GROUP_RESOURCE_FIELDS = {"group", "resources", "resourceNames"}


class _Reader:
    """Reads the document into a :class:`Policy`, collecting kube's validation errors (and values
    of the wrong type, which kube's decoder refuses) with their field paths."""

    def __init__(self) -> None:
        self.problems: list[errors.FieldError] = []
        self.unknown: list[str] = []

    def policy(self, doc: dict[str, Any]) -> Policy:
        self._fields(doc, _POLICY_FIELDS, "")
        rules = tuple(self.rule(r, f"rules[{i}]") for i, r in enumerate(self._list(doc, "rules", "rules", dict)))
        return Policy(rules, self.stages(doc, "omitStages", "omitStages"),
                      self._bool(doc, "omitManagedFields", "omitManagedFields") or False)

    def rule(self, raw: dict[str, Any], path: str) -> PolicyRule:
        self._fields(raw, _RULE_FIELDS, path + ".")
        level_name = raw.get("level") or ""
        level = _LEVELS.get(level_name, Level.NONE) if isinstance(level_name, str) else Level.NONE
        if level_name == "":
            self.problems.append(errors.required(f"{path}.level"))
        elif not isinstance(level_name, str) or level_name not in _LEVELS:
            self.problems.append(errors.not_supported(f"{path}.level", level_name, list(_LEVELS)))
        urls = self._strings(raw, "nonResourceURLs", f"{path}.nonResourceURLs")
        for i, url in enumerate(urls):
            if url == "*":
                continue
            if not url.startswith("/"):
                self.problems.append(errors.invalid(f"{path}.nonResourceURLs[{i}]", url,
                                                    "non-resource URL rules must begin with a '/' character"))
            if url and "*" in url[:-1]:
                self.problems.append(errors.invalid(f"{path}.nonResourceURLs[{i}]", url,
                                                    "non-resource URL wildcards '*' must be the final character of the rule"))
        resources = tuple(self.group_resources(gr, f"{path}.resources")
                          for gr in self._list(raw, "resources", f"{path}.resources", dict))
        omit_stages = self.stages(raw, "omitStages", f"{path}.omitStages")
        namespaces = self._strings(raw, "namespaces", f"{path}.namespaces")
        if urls and (resources or namespaces):
            self.problems.append(errors.invalid(f"{path}.nonResourceURLs", urls,
                                                "rules cannot apply to both regular resources and non-resource URLs"))
        return PolicyRule(level, self._strings(raw, "users", f"{path}.users"),
                          self._strings(raw, "userGroups", f"{path}.userGroups"),
                          self._strings(raw, "verbs", f"{path}.verbs"), resources, namespaces, urls, omit_stages,
                          self._bool(raw, "omitManagedFields", f"{path}.omitManagedFields"))

    def group_resources(self, raw: dict[str, Any], path: str) -> GroupResources:
        self._fields(raw, _GROUP_RESOURCE_FIELDS, path + ".")
        group = raw.get("group") or ""
        if not isinstance(group, str):
            self.problems.append(errors.invalid(f"{path}.group", group, "must be a string"))
            group = ""
        if group and group != "*":
            messages = is_dns1123_subdomain(group)
            if messages:
                self.problems.append(errors.invalid(f"{path}.group", group, ",".join(messages)))
        resources = self._strings(raw, "resources", f"{path}.resources")
        names = self._strings(raw, "resourceNames", f"{path}.resourceNames")
        if names and not resources:
            self.problems.append(errors.invalid(f"{path}.resourceNames", list(names),
                                                "using resourceNames requires at least one resource"))
        return GroupResources(group, resources, names)

    def stages(self, raw: dict[str, Any], key: str, path: str) -> frozenset[str]:
        stages = self._strings(raw, key, path)
        for i, stage in enumerate(stages):
            if stage not in STAGES:
                self.problems.append(errors.invalid(f"{path}[{i}]", stage, "allowed stages are " + ",".join(STAGES)))
        return frozenset(s for s in stages if s in STAGES)

    def _fields(self, raw: dict[str, Any], known: set[str], prefix: str) -> None:
        self.unknown += [prefix + k for k in raw if k not in known]

    def _list(self, raw: dict[str, Any], key: str, path: str, kind: type) -> list[Any]:
        value = raw.get(key)
        if value is None:
            return []
        if not isinstance(value, list) or not all(isinstance(v, kind) for v in value):
            what = "a list of objects" if kind is dict else "a list of strings"
            self.problems.append(errors.invalid(path, value, f"must be {what}"))
            return []
        return value

    def _strings(self, raw: dict[str, Any], key: str, path: str) -> tuple[str, ...]:
        return tuple(self._list(raw, key, path, str))

    def _bool(self, raw: dict[str, Any], key: str, path: str) -> bool | None:
        value = raw.get(key)
        if value is not None and not isinstance(value, bool):
            self.problems.append(errors.invalid(path, value, "must be true or false"))
            return None
        return value
