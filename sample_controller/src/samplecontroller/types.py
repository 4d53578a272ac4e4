"""The Foo type (``pkg/apis/samplecontroller/v1alpha1/types.go``), in kplane's internal form.

The server's strategies and validation work on these dataclasses; the wire form is in
:mod:`samplecontroller.v1alpha1`. Spec and status are optional, as in a custom resource, which
may be stored without either.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from kplane.api import ObjectMeta


@dataclass(slots=True)
class FooSpec:
    deployment_name: str | None = None
    replicas: int | None = None


@dataclass(slots=True)
class FooStatus:
    available_replicas: int | None = None


@dataclass(slots=True)
class Foo:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: FooSpec | None = None
    status: FooStatus | None = None
