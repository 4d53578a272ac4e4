"""Lease behaviour (``pkg/registry/coordination/lease``, ``pkg/apis/coordination/validation``).

A Lease has no status and no generation. Like kube-apiserver, a PUT may create one and an update
must name the resourceVersion it read: leader election relies on that precondition.
"""

from __future__ import annotations

from kplane.api import (
    AGE, NAME, Column, FieldError, RequestContext, Strategy, dig, forbidden, invalid, is_qualified_name,
    not_supported,
)
from kplane.plugins.coordination.types import Lease, LeaseSpec

LEASE_STRATEGIES = ["OldestEmulationVersion"]

LEASE_COLUMNS = (
    NAME,
    Column("Holder", "string", lambda o: dig(o, "spec.holderIdentity", ""),
           description="holderIdentity contains the identity of the holder of a current lease."),
    AGE,
)


def validate_coordinated_lease_strategy(strategy: str, path: str) -> list[FieldError]:
    """A strategy is a Kubernetes-defined name, or a ``prefix/name`` of one's own."""
    if "/" not in strategy:
        return [] if strategy in LEASE_STRATEGIES else [not_supported(path, strategy, LEASE_STRATEGIES)]
    return [invalid(path, strategy, message) for message in is_qualified_name(strategy)]


def validate_lease_spec(spec: LeaseSpec, path: str = "spec") -> list[FieldError]:
    errs: list[FieldError] = []
    if spec.lease_duration_seconds is not None and spec.lease_duration_seconds <= 0:
        errs.append(invalid(f"{path}.leaseDurationSeconds", spec.lease_duration_seconds, "must be greater than 0"))
    if spec.lease_transitions is not None and spec.lease_transitions < 0:
        errs.append(invalid(f"{path}.leaseTransitions", spec.lease_transitions, "must be greater than or equal to 0"))
    if spec.strategy is not None:
        errs += validate_coordinated_lease_strategy(spec.strategy, f"{path}.strategy")
    if spec.preferred_holder and not spec.strategy:
        errs.append(forbidden(f"{path}.preferredHolder", "may only be specified if `strategy` is defined"))
    return errs


class LeaseStrategy(Strategy):
    allow_create_on_update = True
    allow_unconditional_update = False
    columns = LEASE_COLUMNS

    def validate(self, ctx: RequestContext, obj: Lease) -> list[FieldError]:
        return validate_lease_spec(obj.spec)

    def validate_update(self, ctx: RequestContext, obj: Lease, old: Lease) -> list[FieldError]:
        return validate_lease_spec(obj.spec)
