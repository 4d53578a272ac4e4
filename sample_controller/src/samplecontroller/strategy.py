"""How the server treats Foos: as kube-apiserver treats a custom resource of a CRD with a structural
schema and ``subresources: {status: {}}`` (``apiextensions-apiserver/pkg/registry/customresource``).

* Create drops ``status`` and sets generation 1; an update keeps the stored status and bumps the
  generation when the spec changed; ``/status`` changes the status alone (spec and metadata stay as
  stored, only managedFields record the write).
* Updates must name the resourceVersion they read, as for every custom resource.
* ``spec.replicas`` must lie in 1..10, reported as the CRD's ``minimum``/``maximum`` would be: 422
  with the cause on ``spec.replicas``.
* ``kubectl get`` shows NAME and AGE, as for a CRD without printer columns (the default columns).
"""

from __future__ import annotations

import copy
import dataclasses

from kplane.api import FieldError, ObjectMeta, RequestContext, Strategy, invalid
from samplecontroller.types import Foo

MIN_REPLICAS, MAX_REPLICAS = 1, 10


def validate_foo(foo: Foo) -> list[FieldError]:
    replicas = foo.spec.replicas if foo.spec is not None else None
    if replicas is None:
        return []
    if replicas < MIN_REPLICAS:
        return [invalid("spec.replicas", replicas, f"spec.replicas in body should be greater than or equal to {MIN_REPLICAS}")]
    if replicas > MAX_REPLICAS:
        return [invalid("spec.replicas", replicas, f"spec.replicas in body should be less than or equal to {MAX_REPLICAS}")]
    return []


class FooStrategy(Strategy):
    allow_unconditional_update = False

    def prepare_for_create(self, ctx: RequestContext, obj: Foo) -> None:
        obj.status = None
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: Foo, old: Foo) -> None:
        obj.status = old.status
        if obj.spec != old.spec:
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: Foo) -> list[FieldError]:
        return validate_foo(obj)

    def validate_update(self, ctx: RequestContext, obj: Foo, old: Foo) -> list[FieldError]:
        return validate_foo(obj)


class FooStatusStrategy(Strategy):
    allow_unconditional_update = False

    def prepare_for_update(self, ctx: RequestContext, obj: Foo, old: Foo) -> None:
        obj.spec = old.spec
        for f in dataclasses.fields(ObjectMeta):
            if f.name != "managed_fields":
                setattr(obj.metadata, f.name, copy.deepcopy(getattr(old.metadata, f.name)))

    def validate_update(self, ctx: RequestContext, obj: Foo, old: Foo) -> list[FieldError]:
        return validate_foo(obj)
