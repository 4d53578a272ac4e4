"""Behaviour of the networking.k8s.io kinds (``pkg/registry/networking/*/strategy.go``): Ingresses
keep their status apart (``/status``) and count spec changes in their generation; so do
NetworkPolicies; IngressClasses are cluster-wide records."""

from __future__ import annotations

from typing import Any

from kplane.api import FieldError, RequestContext, Strategy
from kplane.plugins.networking import printers, validation
from kplane.plugins.networking.types import Ingress, IngressClass, IngressStatus, NetworkPolicy


class _Generational(Strategy):
    """Generation 1 on create, one more each time the spec changes."""

    def prepare_for_create(self, ctx: RequestContext, obj: Any) -> None:
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: Any, old: Any) -> None:
        obj.metadata.generation = (old.metadata.generation or 0) + (obj.spec != old.spec)


class IngressStrategy(_Generational):
    columns = printers.INGRESS_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: Ingress) -> None:
        super().prepare_for_create(ctx, obj)
        obj.status = IngressStatus()

    def prepare_for_update(self, ctx: RequestContext, obj: Ingress, old: Ingress) -> None:
        super().prepare_for_update(ctx, obj, old)
        obj.status = old.status

    def validate(self, ctx: RequestContext, obj: Ingress) -> list[FieldError]:
        return validation.validate_ingress(obj)


class IngressStatusStrategy(Strategy):
    columns = printers.INGRESS_COLUMNS
    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: Ingress, old: Ingress) -> None:
        obj.spec = old.spec


class IngressClassStrategy(_Generational):
    columns = printers.INGRESS_CLASS_COLUMNS

    def validate(self, ctx: RequestContext, obj: IngressClass) -> list[FieldError]:
        return validation.validate_ingress_class(obj)

    def validate_update(self, ctx: RequestContext, obj: IngressClass, old: IngressClass) -> list[FieldError]:
        return validation.validate_ingress_class_update(obj, old)


class NetworkPolicyStrategy(_Generational):
    columns = printers.NETWORK_POLICY_COLUMNS

    def validate(self, ctx: RequestContext, obj: NetworkPolicy) -> list[FieldError]:
        return validation.validate_network_policy(obj)
