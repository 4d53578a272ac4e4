"""Strategies of the apps group (``pkg/registry/apps/{deployment,replicaset,statefulset,daemonset,controllerrevision}/strategy.go``).

Create clears status and sets generation 1; an update keeps the stored status and bumps the
generation when the spec (or, for Deployments, the annotations) changed; the status subresource
changes only status. Selectors are immutable in every version served here.
"""

from __future__ import annotations

from kplane.api import FieldError, RequestContext, Strategy, is_dns1123_label
from kplane.plugins.apps import printers, validation
from kplane.plugins.apps.types import (
    ControllerRevision, DaemonSet, DaemonSetStatus, Deployment, DeploymentStatus, ReplicaSet, ReplicaSetStatus, StatefulSet,
    StatefulSetStatus,
)

Workload = Deployment | ReplicaSet | StatefulSet


class _WorkloadStrategy(Strategy):
    status_type: type = DeploymentStatus

    def prepare_for_create(self, ctx: RequestContext, obj: Workload) -> None:
        obj.status = self.status_type()
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: Workload, old: Workload) -> None:
        obj.status = old.status
        if self._generation_changed(obj, old):
            obj.metadata.generation = (old.metadata.generation or 0) + 1

    def _generation_changed(self, obj: Workload, old: Workload) -> bool:
        return obj.spec != old.spec

    def validate_update(self, ctx: RequestContext, obj: Workload, old: Workload) -> list[FieldError]:
        return self.validate(ctx, obj) + validation.validate_selector_unchanged(obj.spec.selector, old.spec.selector)


class ReplicaSetStatusStrategy(Strategy):
    """``/status`` of ReplicaSets: the spec stays as stored."""

    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: Workload, old: Workload) -> None:
        obj.spec = old.spec

    def validate_update(self, ctx: RequestContext, obj: Workload, old: Workload) -> list[FieldError]:
        return validation.validate_status(obj.status)


class DeploymentStatusStrategy(ReplicaSetStatusStrategy):
    """``/status`` of Deployments: spec and labels stay as stored; annotations may change (the
    controller records the revision there without bumping the generation)."""

    reset_fields = ("spec", "metadata.labels")

    def prepare_for_update(self, ctx: RequestContext, obj: Workload, old: Workload) -> None:
        super().prepare_for_update(ctx, obj, old)
        obj.metadata.labels = old.metadata.labels


class DeploymentStrategy(_WorkloadStrategy):
    status_type = DeploymentStatus
    columns = printers.DEPLOYMENT_COLUMNS

    def _generation_changed(self, obj: Deployment, old: Deployment) -> bool:
        return obj.spec != old.spec or obj.metadata.annotations != old.metadata.annotations

    def validate(self, ctx: RequestContext, obj: Deployment) -> list[FieldError]:
        return validation.validate_deployment_spec(obj.spec)


class ReplicaSetStrategy(_WorkloadStrategy):
    status_type = ReplicaSetStatus
    columns = printers.REPLICA_SET_COLUMNS

    def validate(self, ctx: RequestContext, obj: ReplicaSet) -> list[FieldError]:
        return validation.validate_replica_set_spec(obj.spec)


class ControllerRevisionStrategy(Strategy):
    """No status and no generation: a revision is data written once, renumbered at most."""

    columns = printers.CONTROLLER_REVISION_COLUMNS

    def validate(self, ctx: RequestContext, obj: ControllerRevision) -> list[FieldError]:
        return validation.validate_controller_revision(obj)

    def validate_update(self, ctx: RequestContext, obj: ControllerRevision, old: ControllerRevision) -> list[FieldError]:
        return validation.validate_controller_revision_update(obj, old)


TEMPLATE_GENERATION = "deprecated.daemonset.template.generation"


def template_generation(obj: DaemonSet) -> int:
    """The DaemonSet's template generation (apps/v1 keeps kube's internal field in this annotation)."""
    try:
        return int((obj.metadata.annotations or {}).get(TEMPLATE_GENERATION, 0))
    except ValueError:
        return 0


def _set_template_generation(obj: DaemonSet, generation: int) -> None:
    obj.metadata.annotations = {**(obj.metadata.annotations or {}), TEMPLATE_GENERATION: str(generation)}


class DaemonSetStrategy(_WorkloadStrategy):
    """Generation and template generation count template changes; a change of the rest of the
    spec bumps the generation alone. Clients cannot set the template generation."""

    status_type = DaemonSetStatus
    columns = printers.DAEMON_SET_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: DaemonSet) -> None:
        super().prepare_for_create(ctx, obj)
        _set_template_generation(obj, 1)

    def prepare_for_update(self, ctx: RequestContext, obj: DaemonSet, old: DaemonSet) -> None:
        obj.status = old.status
        generation = template_generation(old)
        if obj.spec.template != old.spec.template:
            generation += 1
            obj.metadata.generation = (old.metadata.generation or 0) + 1
        elif obj.spec != old.spec:
            obj.metadata.generation = (old.metadata.generation or 0) + 1
        _set_template_generation(obj, generation)

    def validate(self, ctx: RequestContext, obj: DaemonSet) -> list[FieldError]:
        return validation.validate_daemon_set_spec(obj.spec)


class DaemonSetStatusStrategy(ReplicaSetStatusStrategy):
    """``/status`` of DaemonSets: the spec stays as stored, the collision count never goes down."""

    def validate_update(self, ctx: RequestContext, obj: DaemonSet, old: DaemonSet) -> list[FieldError]:
        return validation.validate_daemon_set_status_update(obj.status, old.status)
class StatefulSetStrategy(_WorkloadStrategy):
    """Names are DNS labels: they begin the pods' names, which are hostnames."""

    status_type = StatefulSetStatus
    columns = printers.STATEFUL_SET_COLUMNS
    name_validator = staticmethod(is_dns1123_label)

    def validate(self, ctx: RequestContext, obj: StatefulSet) -> list[FieldError]:
        return validation.validate_stateful_set_spec(obj.spec)

    def validate_update(self, ctx: RequestContext, obj: StatefulSet, old: StatefulSet) -> list[FieldError]:
        return self.validate(ctx, obj) + validation.validate_stateful_set_update(obj.spec, old.spec)  # the selector too


class StatefulSetStatusStrategy(ReplicaSetStatusStrategy):
    """``/status`` of StatefulSets: the spec stays as stored."""

    def validate_update(self, ctx: RequestContext, obj: StatefulSet, old: StatefulSet) -> list[FieldError]:
        return validation.validate_stateful_set_status(obj.status, old.status)


