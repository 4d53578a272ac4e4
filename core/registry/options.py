"""Parsed request options the Store acts on (``metav1.ListOptions`` and ``DeleteOptions``)."""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.core.meta import errors
from kplane.core.meta.selectors import FieldSelectorExpr, LabelSelectorExpr


@dataclass(slots=True)
class ListOptions:
    label_selector: LabelSelectorExpr | None = None
    field_selector: FieldSelectorExpr | None = None
    limit: int = 0
    continue_: str = ""
    resource_version: str = ""
    resource_version_match: str = ""  # "", "Exact" or "NotOlderThan"


@dataclass(slots=True)
class WatchOptions:
    label_selector: LabelSelectorExpr | None = None
    field_selector: FieldSelectorExpr | None = None
    resource_version: str = ""
    allow_bookmarks: bool = False


@dataclass(slots=True)
class DeleteOptions:
    """``metav1.DeleteOptions``; None is "not set", which differs from every value."""

    propagation_policy: str | None = None  # "Foreground", "Background" or "Orphan"
    orphan_dependents: bool | None = None  # deprecated: True is Orphan, False is the default
    precondition_uid: str | None = None
    precondition_resource_version: str | None = None
    grace_period_seconds: int | None = None
    dry_run: list[str] = field(default_factory=list)

    def problems(self) -> list[errors.FieldError]:
        """``ValidateDeleteOptions``: what kube-apiserver refuses with 422 before deleting anything."""
        found = []
        if self.orphan_dependents is not None and self.propagation_policy is not None:
            found.append(errors.invalid("propagationPolicy", self.propagation_policy,
                                        "orphanDependents and deletionPropagation cannot be both set"))
        if self.propagation_policy is not None and self.propagation_policy not in PROPAGATION_POLICIES:
            found.append(errors.not_supported("propagationPolicy", self.propagation_policy, [*PROPAGATION_POLICIES, "nil"]))
        return found + dry_run_problems(self.dry_run)

    def check(self) -> None:
        """Raise the 422 Invalid of :meth:`problems`, if any."""
        found = self.problems()
        if found:
            raise errors.invalid_object("DeleteOptions", "meta.k8s.io", "", found)

    @property
    def policy(self) -> str:
        """The propagation policy asked for, with ``orphanDependents`` translated; "" for none."""
        if self.orphan_dependents is not None:
            return "Orphan" if self.orphan_dependents else "Background"
        return self.propagation_policy or ""


PROPAGATION_POLICIES = ("Foreground", "Background", "Orphan")
DRY_RUN_ALL = "All"


def dry_run_problems(values: list[str]) -> list[errors.FieldError]:
    """``ValidateDryRun``: "All" is the only dry run there is."""
    if any(value != DRY_RUN_ALL for value in values):
        return [errors.not_supported("dryRun", values, [DRY_RUN_ALL])]
    return []
