"""Internal (hub) types of wardle.example.com: Flunder and Fischer.

Mirrors ``pkg/apis/wardle/types.go``. Strategies, validation and admission work on these; they
have no wire format of their own. Every served version converts to and from them: v1beta1 has
exactly this shape, v1alpha1 folds the two references into one (see ``v1alpha1/conversion.py``).

A Go ``string`` field is a Python ``str | None`` here: ``None`` and ``""`` both mean "not set",
as the empty string does in Go.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta

# ReferenceType: what the name in a Flunder's spec refers to.
FLUNDER_REFERENCE_TYPE = "Flunder"
FISCHER_REFERENCE_TYPE = "Fischer"


@dataclass(slots=True)
class FlunderSpec:
    flunder_reference: str | None = None  # a name of another Flunder; excludes fischer_reference
    fischer_reference: str | None = None  # a name of a Fischer; excludes flunder_reference
    reference_type: str | None = None  # FLUNDER_REFERENCE_TYPE or FISCHER_REFERENCE_TYPE


@dataclass(slots=True)
class FlunderStatus:
    """Empty, as in the original: Flunders have no status yet."""


@dataclass(slots=True)
class Flunder:
    """An example namespaced kind with a spec and a status."""

    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: FlunderSpec = field(default_factory=FlunderSpec)
    status: FlunderStatus = field(default_factory=FlunderStatus)


@dataclass(slots=True)
class Fischer:
    """An example cluster-scoped kind: names that Flunders may not have (see ``admission.py``)."""

    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    disallowed_flunders: list[str] = field(default_factory=list)
