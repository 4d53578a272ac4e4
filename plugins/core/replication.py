"""core/v1 ReplicationController and PodTemplate: internal types, validation and behaviour
(``pkg/registry/core/{replicationcontroller,podtemplate}/strategy.go``,
``ValidateReplicationController``, ``ValidatePodTemplate``).

A ReplicationController is the ReplicaSet's ancestor: its selector is a plain map of labels
(and, unlike a ReplicaSet's, may change), its template a pointer. The apps plugin's ReplicaSet
controller keeps both kinds' pods (``plugins/apps/controllers/replicaset.py``)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import (
    FieldError, ObjectMeta, RequestContext, ScaleAdapter, Strategy, camel_case, dig, forbidden, format_label_selector, invalid, not_supported,
    required, validate_labels,
)
from kplane.plugins.core import printers
from kplane.plugins.core.types import PodTemplateSpec
from kplane.plugins.core.validation import validate_pod_spec


@dataclass(slots=True)
class ReplicationControllerSpec:
    replicas: int | None = None
    min_ready_seconds: int | None = None
    selector: dict[str, str] | None = None
    template: PodTemplateSpec | None = None


@dataclass(slots=True)
class ReplicationControllerCondition:
    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class ReplicationControllerStatus:
    replicas: int | None = None
    fully_labeled_replicas: int | None = None
    ready_replicas: int | None = None
    available_replicas: int | None = None
    observed_generation: int | None = None
    conditions: list[ReplicationControllerCondition] | None = None


@dataclass(slots=True)
class ReplicationController:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: ReplicationControllerSpec = field(default_factory=ReplicationControllerSpec)
    status: ReplicationControllerStatus = field(default_factory=ReplicationControllerStatus)


@dataclass(slots=True)
class PodTemplate:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    template: PodTemplateSpec = field(default_factory=PodTemplateSpec)


# -- validation --------------------------------------------------------------------------------
NON_NEGATIVE = "must be greater than or equal to 0"
STATUS_COUNTS = ("replicas", "fully_labeled_replicas", "ready_replicas", "available_replicas", "observed_generation")


def _non_negative(value: int | None, path: str) -> list[FieldError]:
    return [invalid(path, value, NON_NEGATIVE)] if value is not None and value < 0 else []


def validate_template(template: PodTemplateSpec, path: str) -> list[FieldError]:
    """``ValidatePodTemplateSpec``: its labels and annotations, and the pod spec."""
    errs = validate_labels(template.metadata.labels, f"{path}.metadata.labels")
    return errs + validate_pod_spec(template.spec, f"{path}.spec")


def validate_replication_controller_spec(spec: ReplicationControllerSpec) -> list[FieldError]:
    """``ValidateReplicationControllerSpec``: a non-empty selector matching the template's
    labels, a template of pods that always restart, counts not negative."""
    errs = _non_negative(spec.replicas, "spec.replicas") + _non_negative(spec.min_ready_seconds, "spec.minReadySeconds")
    selector = spec.selector or {}
    if not selector:
        errs.append(required("spec.selector", ""))
    else:
        errs += validate_labels(selector, "spec.selector")
    template = spec.template
    if template is None:
        return [*errs, required("spec.template", "")]
    labels = template.metadata.labels or {}
    if selector and any(labels.get(key) != value for key, value in selector.items()):
        errs.append(invalid("spec.template.metadata.labels", labels, "`selector` does not match template `labels`"))
    errs += validate_template(template, "spec.template")
    if template.spec.restart_policy and template.spec.restart_policy != "Always":
        errs.append(not_supported("spec.template.spec.restartPolicy", template.spec.restart_policy, ["Always"]))
    if template.spec.active_deadline_seconds is not None:
        errs.append(forbidden("spec.template.spec.activeDeadlineSeconds", "activeDeadlineSeconds in ReplicationController is not Supported"))
    return errs


# -- strategies --------------------------------------------------------------------------------
def validate_status(status: ReplicationControllerStatus) -> list[FieldError]:
    """``ValidateReplicationControllerStatus``: counters are never negative."""
    return [e for name in STATUS_COUNTS for e in _non_negative(getattr(status, name), "status." + camel_case(name))]


class ReplicationControllerStrategy(Strategy):
    """Create clears the status and starts generation 1; a change of the spec bumps it."""

    columns = printers.REPLICATION_CONTROLLER_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: ReplicationController) -> None:
        obj.status = ReplicationControllerStatus()
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: ReplicationController, old: ReplicationController) -> None:
        obj.status = old.status
        if obj.spec != old.spec:
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: ReplicationController) -> list[FieldError]:
        return validate_replication_controller_spec(obj.spec)


class ReplicationControllerStatusStrategy(Strategy):
    """``/status``: the spec stays as stored."""

    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: ReplicationController, old: ReplicationController) -> None:
        obj.spec = old.spec

    def validate_update(self, ctx: RequestContext, obj: ReplicationController, old: ReplicationController) -> list[FieldError]:
        return validate_status(obj.status)


class PodTemplateStrategy(Strategy):
    """A change of the template bumps the generation."""

    columns = printers.POD_TEMPLATE_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: PodTemplate) -> None:
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: PodTemplate, old: PodTemplate) -> None:
        if obj.template != old.template:
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def validate(self, ctx: RequestContext, obj: PodTemplate) -> list[FieldError]:
        return validate_template(obj.template, "template")


class ReplicationControllerScale(ScaleAdapter):
    """``/scale`` of a ReplicationController: its selector is a map of labels, shown as ``app=web``."""

    def scale_of(self, obj: dict[str, Any]) -> dict[str, Any]:
        scale = super().scale_of(obj)
        scale["status"]["selector"] = format_label_selector({"matchLabels": dig(obj, "spec.selector") or {}})
        return scale
