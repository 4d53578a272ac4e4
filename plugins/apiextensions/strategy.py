"""CustomResourceDefinition behaviour (apiextensions-apiserver's ``registry/customresourcedefinition``).

* Create empties the status but for ``storedVersions`` (the storage version), sets generation 1.
* An update keeps the stored status, bumps the generation when the spec changed and adds a new
  storage version to ``storedVersions`` (objects may be stored in it from now on).
* Deletion first marks the CRD ``Terminating`` with the cleanup finalizer: the finalizer
  controller then deletes every custom resource of it, and only then is the CRD gone.
* ``/status`` changes only the status (and not the labels, annotations, finalizers or owners).
"""

from __future__ import annotations

import dataclasses

from kplane.api import NAME, Column, FieldError, RequestContext, Strategy, clock
from kplane.plugins.apiextensions import validation
from kplane.plugins.apiextensions.types import (
    CLEANUP_FINALIZER, TERMINATING, CustomResourceDefinition, CustomResourceDefinitionCondition,
    CustomResourceDefinitionStatus, condition, storage_version,
)

COLUMNS = (NAME, Column("Created At", "date", lambda o: o["metadata"].get("creationTimestamp"),
                        description="CreationTimestamp is a timestamp representing the server time when this object was created."))


def _add_stored_version(crd: CustomResourceDefinition) -> None:
    storage = storage_version(crd)
    stored = crd.status.stored_versions or []
    if storage is not None and storage not in stored:
        crd.status.stored_versions = [*stored, storage]


class CustomResourceDefinitionStrategy(Strategy):
    columns = COLUMNS
    validates_in_thread = True  # a schema of thousands of nodes takes a while; validation reads only the CRD

    def prepare_for_create(self, ctx: RequestContext, obj: CustomResourceDefinition) -> None:
        obj.status = CustomResourceDefinitionStatus()
        obj.metadata.generation = 1
        _add_stored_version(obj)

    def prepare_for_update(self, ctx: RequestContext, obj: CustomResourceDefinition, old: CustomResourceDefinition) -> None:
        obj.status = old.status
        if obj.spec != old.spec:
            obj.metadata.generation = (old.metadata.generation or 0) + 1
        _add_stored_version(obj)

    def prepare_for_delete(self, ctx: RequestContext, obj: CustomResourceDefinition) -> bool:
        """The first delete adds the cleanup finalizer and says ``Terminating`` (the REST
        Delete of apiextensions-apiserver), so its custom resources go first."""
        if obj.metadata.deletion_timestamp is None:
            finalizers = obj.metadata.finalizers or []
            if CLEANUP_FINALIZER not in finalizers:
                obj.metadata.finalizers = [*finalizers, CLEANUP_FINALIZER]
            set_condition(obj, TERMINATING, "True", "InstanceDeletionPending",
                          "CustomResourceDefinition marked for deletion; CustomResource deletion will begin soon")
        return False

    def validate(self, ctx: RequestContext, obj: CustomResourceDefinition) -> list[FieldError]:
        return validation.validate_crd(obj)

    def validate_update(self, ctx: RequestContext, obj: CustomResourceDefinition, old: CustomResourceDefinition) -> list[FieldError]:
        return validation.validate_crd_update(obj, old)


class CustomResourceDefinitionStatusStrategy(Strategy):
    reset_fields = ("spec", "metadata.labels", "metadata.annotations", "metadata.finalizers", "metadata.ownerReferences")

    def prepare_for_update(self, ctx: RequestContext, obj: CustomResourceDefinition, old: CustomResourceDefinition) -> None:
        obj.spec = old.spec
        obj.metadata = dataclasses.replace(obj.metadata, labels=old.metadata.labels, annotations=old.metadata.annotations,
                                           finalizers=old.metadata.finalizers, owner_references=old.metadata.owner_references)

    def validate_update(self, ctx: RequestContext, obj: CustomResourceDefinition, old: CustomResourceDefinition) -> list[FieldError]:
        return validation.validate_crd_status(obj)


def set_condition(crd: CustomResourceDefinition, kind: str, status: str, reason: str, message: str) -> None:
    """Set one condition, moving ``lastTransitionTime`` only when its status changes."""
    current = condition(crd, kind)
    if current is None:
        crd.status.conditions = [*(crd.status.conditions or []), CustomResourceDefinitionCondition(
            type=kind, status=status, last_transition_time=clock.now(), reason=reason, message=message)]
        return
    if current.status != status:
        current.last_transition_time = clock.now()
    current.status, current.reason, current.message = status, reason, message
