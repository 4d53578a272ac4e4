"""Strategies of the core group (``pkg/registry/core/*/strategy.go``)."""

from __future__ import annotations

from typing import Any

from core.meta.errors import FieldError, invalid
from core.meta.validation import FIELD_IMMUTABLE, is_dns1123_label
from core.registry.strategy import RequestContext, Strategy
from plugins.core import printers, validation
from plugins.core.types import ConfigMap, Event, Namespace, NamespaceSpec, NamespaceStatus, Pod, PodStatus, Secret

FINALIZER_KUBERNETES = "kubernetes"
NAME_LABEL = "kubernetes.io/metadata.name"


# -- Namespace ---------------------------------------------------------------------------------
class NamespaceStrategy(Strategy):
    """New namespaces are Active and carry the ``kubernetes`` finalizer, so deleting one first
    marks it Terminating while the namespace controller empties it."""

    name_validator = staticmethod(is_dns1123_label)
    columns = printers.NAMESPACE_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: Namespace) -> None:
        obj.status = NamespaceStatus(phase="Active")
        _label_with_name(obj)
        finalizers = obj.spec.finalizers or []
        if FINALIZER_KUBERNETES not in finalizers:
            obj.spec = NamespaceSpec(finalizers=[*finalizers, FINALIZER_KUBERNETES])

    def prepare_for_update(self, ctx: RequestContext, obj: Namespace, old: Namespace) -> None:
        obj.spec.finalizers = old.spec.finalizers  # only /finalize changes them
        obj.status = old.status
        _label_with_name(obj)

    def prepare_for_delete(self, ctx: RequestContext, obj: Namespace) -> bool:
        if not obj.spec.finalizers:
            return False
        obj.status.phase = "Terminating"
        return True


def _label_with_name(namespace: Namespace) -> None:
    """Every namespace carries ``kubernetes.io/metadata.name`` so selectors can pick it by name."""
    namespace.metadata.labels = {**(namespace.metadata.labels or {}), NAME_LABEL: namespace.metadata.name or ""}


class NamespaceStatusStrategy(NamespaceStrategy):
    def prepare_for_update(self, ctx: RequestContext, obj: Namespace, old: Namespace) -> None:
        obj.spec = old.spec


class NamespaceFinalizeStrategy(NamespaceStrategy):
    """``/finalize`` changes only ``spec.finalizers``; emptying them lets deletion complete."""

    def prepare_for_update(self, ctx: RequestContext, obj: Namespace, old: Namespace) -> None:
        obj.status = old.status


# -- Pod ---------------------------------------------------------------------------------------
class PodStrategy(Strategy):
    columns = printers.POD_COLUMNS
    return_deleted_object = True
    selectable_fields = {
        "spec.nodeName": "spec.nodeName",
        "spec.restartPolicy": "spec.restartPolicy",
        "spec.schedulerName": "spec.schedulerName",
        "spec.serviceAccountName": "spec.serviceAccountName",
        "spec.hostNetwork": "spec.hostNetwork",
        "status.phase": "status.phase",
        "status.podIP": "status.podIP",
        "status.nominatedNodeName": "status.nominatedNodeName",
    }

    def prepare_for_create(self, ctx: RequestContext, obj: Pod) -> None:
        obj.status = PodStatus(phase="Pending", qos_class=_qos_class(obj))

    def validate(self, ctx: RequestContext, obj: Pod) -> list[FieldError]:
        return validation.validate_pod_spec(obj.spec, "spec")

    def prepare_for_update(self, ctx: RequestContext, obj: Pod, old: Pod) -> None:
        obj.status = old.status

    def validate_update(self, ctx: RequestContext, obj: Pod, old: Pod) -> list[FieldError]:
        return validation.validate_pod_spec(obj.spec, "spec") + validation.validate_pod_update(obj, old)


class PodStatusStrategy(PodStrategy):
    def prepare_for_update(self, ctx: RequestContext, obj: Pod, old: Pod) -> None:
        obj.spec = old.spec

    def validate_update(self, ctx: RequestContext, obj: Pod, old: Pod) -> list[FieldError]:
        return []


def _qos_class(pod: Pod) -> str:
    """Guaranteed when every container's requests equal its limits, BestEffort with none at all."""
    containers = pod.spec.containers or []
    limited = [c.resources for c in containers if c.resources and (c.resources.limits or c.resources.requests)]
    if not limited:
        return "BestEffort"
    if len(limited) == len(containers) and all(
        r.limits and set(r.limits) >= {"cpu", "memory"} and (not r.requests or r.requests == r.limits) for r in limited
    ):
        return "Guaranteed"
    return "Burstable"


# -- Event, ConfigMap, Secret ------------------------------------------------------------------
class EventStrategy(Strategy):
    columns = printers.EVENT_COLUMNS
    selectable_fields = {
        "involvedObject.kind": "involvedObject.kind",
        "involvedObject.namespace": "involvedObject.namespace",
        "involvedObject.name": "involvedObject.name",
        "involvedObject.uid": "involvedObject.uid",
        "involvedObject.apiVersion": "involvedObject.apiVersion",
        "involvedObject.resourceVersion": "involvedObject.resourceVersion",
        "involvedObject.fieldPath": "involvedObject.fieldPath",
        "reason": "reason",
        "reportingComponent": "reportingComponent",
        "source": "source.component",
        "type": "type",
    }

    def validate(self, ctx: RequestContext, obj: Event) -> list[FieldError]:
        return validation.validate_event(obj)

    def validate_update(self, ctx: RequestContext, obj: Event, old: Event) -> list[FieldError]:
        return validation.validate_event(obj)


class ConfigMapStrategy(Strategy):
    columns = printers.CONFIG_MAP_COLUMNS

    def validate(self, ctx: RequestContext, obj: ConfigMap) -> list[FieldError]:
        return validation.validate_config_map(obj)

    def validate_update(self, ctx: RequestContext, obj: ConfigMap, old: ConfigMap) -> list[FieldError]:
        return validation.validate_config_map(obj) + validation.validate_immutable_data(obj, old, (("binary_data", "binaryData"),))


class SecretStrategy(Strategy):
    selectable_fields = {"type": "type"}
    columns = printers.SECRET_COLUMNS

    def validate(self, ctx: RequestContext, obj: Secret) -> list[FieldError]:
        return validation.validate_secret(obj)

    def validate_update(self, ctx: RequestContext, obj: Secret, old: Secret) -> list[FieldError]:
        errs = validation.validate_secret(obj) + validation.validate_immutable_data(obj, old)
        if obj.type != old.type:
            errs.append(invalid("type", obj.type, FIELD_IMMUTABLE))
        return errs


class ServiceAccountStrategy(Strategy):
    columns = printers.SERVICE_ACCOUNT_COLUMNS


def strategies() -> dict[tuple[str, str], Any]:
    """(resource, subresource) -> strategy, as the plugin registers them."""
    return {
        ("namespaces", ""): NamespaceStrategy(),
        ("namespaces", "status"): NamespaceStatusStrategy(),
        ("namespaces", "finalize"): NamespaceFinalizeStrategy(),
        ("pods", ""): PodStrategy(),
        ("pods", "status"): PodStatusStrategy(),
        ("events", ""): EventStrategy(),
        ("configmaps", ""): ConfigMapStrategy(),
        ("secrets", ""): SecretStrategy(),
        ("serviceaccounts", ""): ServiceAccountStrategy(),
    }
