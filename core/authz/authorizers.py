"""Decisions, the authorizer protocols, and the union of ``--authorization-mode``'s modes.

Members of ``system:masters`` are allowed everything before any mode is asked (kube's
privileged-groups authorizer). Then each mode is asked in order: the first that allows or
denies decides; when all have no opinion the request is denied, with their reasons.
"""

from __future__ import annotations

import enum
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol

from kplane.core.authn.user import SYSTEM_MASTERS, UserInfo
from kplane.core.authz.attributes import Attributes


class Decision(enum.Enum):
    """What an authorizer says of a request; no opinion hands it to the next mode."""

    ALLOW = "Allow"
    DENY = "Deny"
    NO_OPINION = "NoOpinion"


@dataclass(frozen=True, slots=True)
class Verdict:
    """An authorizer's decision and why."""

    decision: Decision
    reason: str = ""  # why, for the 403 message and SubjectAccessReview's status.reason

    @property
    def allowed(self) -> bool:
        return self.decision is Decision.ALLOW


#: Allowed, no reason needed.
ALLOWED = Verdict(Decision.ALLOW)
#: No opinion, no reason: the next mode decides.
NO_OPINION = Verdict(Decision.NO_OPINION)


@dataclass(frozen=True, slots=True)
class ResourceRule:
    """What a user may do to resources (``authorization.k8s.io/v1`` ResourceRule)."""

    verbs: tuple[str, ...]
    api_groups: tuple[str, ...] = ()
    resources: tuple[str, ...] = ()
    resource_names: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class NonResourceRule:
    """What a user may do to paths (``authorization.k8s.io/v1`` NonResourceRule)."""

    verbs: tuple[str, ...]
    non_resource_urls: tuple[str, ...] = ()


@dataclass
class Rules:
    """What a user may do in a namespace (SelfSubjectRulesReview's status)."""

    resource: list[ResourceRule] = field(default_factory=list)
    non_resource: list[NonResourceRule] = field(default_factory=list)
    incomplete: bool = False  # an authorizer could not list all it allows
    errors: list[str] = field(default_factory=list)


class Authorizer(Protocol):
    """Decides requests for one authorization mode."""

    async def authorize(self, attributes: Attributes) -> Verdict:
        """Allow, deny, or have no opinion (then the next mode is asked)."""
        ...


class RuleResolver(Protocol):
    """An authorizer that can also list what it allows (RBAC can; a webhook cannot)."""

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        ...


class AlwaysAllow:
    """The ``AlwaysAllow`` mode."""

    async def authorize(self, attributes: Attributes) -> Verdict:
        return ALLOWED

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules([ResourceRule(("*",), ("*",), ("*",))], [NonResourceRule(("*",), ("*",))])


class AlwaysDeny:
    """The ``AlwaysDeny`` mode."""

    async def authorize(self, attributes: Attributes) -> Verdict:
        return Verdict(Decision.DENY, "Everything is forbidden.")

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        return Rules()


ALWAYS_ALLOW = "AlwaysAllow"
ALWAYS_DENY = "AlwaysDeny"


class Authorizers:
    """The modes the server knows, by name (kplane's two and what plugins add through
    ``kplane_register_authorizers``), and the union of those ``--authorization-mode`` chose."""

    def __init__(self, modes: Sequence[str] = (ALWAYS_ALLOW,)) -> None:
        self.modes = tuple(modes)
        self.registered: list[tuple[str, Authorizer]] = [(ALWAYS_ALLOW, AlwaysAllow()), (ALWAYS_DENY, AlwaysDeny())]

    def add(self, mode: str, authorizer: Authorizer) -> None:
        """Offer ``authorizer`` as the mode ``mode`` (``--authorization-mode`` may then name it)."""
        if any(name == mode for name, _ in self.registered):
            raise ValueError(f"the authorization mode {mode!r} is registered already")
        self.registered.append((mode, authorizer))

    def unknown_modes(self) -> list[str]:
        """Chosen modes nobody registered (a start-up error: kube refuses unknown modes)."""
        known = {name for name, _ in self.registered}
        return [m for m in self.modes if m not in known]

    def _chosen(self) -> list[Authorizer]:
        by_name = dict(self.registered)
        return [by_name[m] for m in self.modes if m in by_name]

    async def authorize(self, attributes: Attributes) -> Verdict:
        if SYSTEM_MASTERS in attributes.user.groups:
            return ALLOWED
        reasons: list[str] = []
        for authorizer in self._chosen():
            verdict = await authorizer.authorize(attributes)
            if verdict.decision is not Decision.NO_OPINION:
                return verdict
            if verdict.reason:
                reasons.append(verdict.reason)
        return Verdict(Decision.NO_OPINION, "\n".join(reasons))

    async def rules_for(self, user: UserInfo, namespace: str) -> Rules:
        """Everything the chosen modes allow ``user`` in ``namespace``, as far as they can say."""
        rules = Rules()
        if SYSTEM_MASTERS in user.groups:
            rules = await AlwaysAllow().rules_for(user, namespace)
        for authorizer in self._chosen():
            resolve = getattr(authorizer, "rules_for", None)
            if resolve is None:
                rules.incomplete = True
                continue
            found: Rules = await resolve(user, namespace)
            rules.resource += found.resource
            rules.non_resource += found.non_resource
            rules.incomplete = rules.incomplete or found.incomplete
            rules.errors += found.errors
        return rules
