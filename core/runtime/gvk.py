"""Group/version/kind and group/version/resource names, and Kubernetes' version ordering."""

from __future__ import annotations

import re
from typing import NamedTuple


class GroupVersion(NamedTuple):
    group: str
    version: str

    @property
    def api_version(self) -> str:
        """``apps/v1``, or ``v1`` for the core group."""
        return f"{self.group}/{self.version}" if self.group else self.version

    @classmethod
    def parse(cls, api_version: str) -> GroupVersion:
        group, _, version = api_version.rpartition("/")
        return cls(group, version)


class GroupVersionKind(NamedTuple):
    """A kind in one version of its group: what ``apiVersion`` and ``kind`` of a body name."""

    group: str
    version: str
    kind: str

    @property
    def api_version(self) -> str:
        return GroupVersion(self.group, self.version).api_version


class GroupVersionResource(NamedTuple):
    group: str
    version: str
    resource: str


_KUBE_VERSION = re.compile(r"^v(\d+)(?:(alpha|beta)(\d+))?$")
_STABILITY = {None: 3, "beta": 2, "alpha": 1}


def version_priority_key(version: str) -> tuple[int, int, int, str]:
    """Sort key that puts versions in Kubernetes' preference order when sorted ascending.

    GA before beta before alpha, higher numbers first, non-Kubernetes-looking versions last in
    alphabetical order (``CompareKubeAwareVersionStrings``).
    """
    match = _KUBE_VERSION.match(version)
    if not match:
        return (1, 0, 0, version)
    major, stability, minor = match.groups()
    return (0, -_STABILITY[stability], -int(major) * 1000 - int(minor or 0), version)
