"""Behaviour of the storage.k8s.io kinds (``pkg/registry/storage/*/strategy.go``): no generation
but for CSIDrivers, VolumeAttachments keep their status apart (``/status``)."""

from __future__ import annotations

from kplane.api import FieldError, RequestContext, Strategy
from kplane.plugins.storage import printers, validation
from kplane.plugins.storage.types import (
    CSIDriver, CSINode, CSIStorageCapacity, StorageClass, VolumeAttachment, VolumeAttachmentStatus,
)


class StorageClassStrategy(Strategy):
    columns = printers.STORAGE_CLASS_COLUMNS

    def validate(self, ctx: RequestContext, obj: StorageClass) -> list[FieldError]:
        return validation.validate_storage_class(obj)

    def validate_update(self, ctx: RequestContext, obj: StorageClass, old: StorageClass) -> list[FieldError]:
        return validation.validate_storage_class_update(obj, old)


class CSIDriverStrategy(Strategy):
    columns = printers.CSI_DRIVER_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: CSIDriver) -> None:
        obj.metadata.generation = 1

    def prepare_for_update(self, ctx: RequestContext, obj: CSIDriver, old: CSIDriver) -> None:
        obj.metadata.generation = (old.metadata.generation or 0) + (obj.spec != old.spec)

    def validate(self, ctx: RequestContext, obj: CSIDriver) -> list[FieldError]:
        return validation.validate_csi_driver(obj)

    def validate_update(self, ctx: RequestContext, obj: CSIDriver, old: CSIDriver) -> list[FieldError]:
        return validation.validate_csi_driver_update(obj, old)


class CSINodeStrategy(Strategy):
    columns = printers.CSI_NODE_COLUMNS

    def validate(self, ctx: RequestContext, obj: CSINode) -> list[FieldError]:
        return validation.validate_csi_node(obj)


class CSIStorageCapacityStrategy(Strategy):
    columns = printers.CSI_STORAGE_CAPACITY_COLUMNS

    def validate(self, ctx: RequestContext, obj: CSIStorageCapacity) -> list[FieldError]:
        return validation.validate_storage_capacity(obj)


class VolumeAttachmentStrategy(Strategy):
    columns = printers.VOLUME_ATTACHMENT_COLUMNS

    def prepare_for_create(self, ctx: RequestContext, obj: VolumeAttachment) -> None:
        obj.status = VolumeAttachmentStatus()

    def prepare_for_update(self, ctx: RequestContext, obj: VolumeAttachment, old: VolumeAttachment) -> None:
        obj.status = old.status

    def validate(self, ctx: RequestContext, obj: VolumeAttachment) -> list[FieldError]:
        return validation.validate_volume_attachment(obj)

    def validate_update(self, ctx: RequestContext, obj: VolumeAttachment, old: VolumeAttachment) -> list[FieldError]:
        return validation.validate_volume_attachment_update(obj, old)


class VolumeAttachmentStatusStrategy(Strategy):
    columns = printers.VOLUME_ATTACHMENT_COLUMNS
    reset_fields = ("spec",)

    def prepare_for_update(self, ctx: RequestContext, obj: VolumeAttachment, old: VolumeAttachment) -> None:
        obj.spec = old.spec
