"""The storage.k8s.io API group at v1: StorageClass, CSIDriver, CSINode, CSIStorageCapacity and
VolumeAttachment; the default ``standard`` StorageClass and the DefaultStorageClass admission;
and the volume controllers: the binder and simulated provisioner of PersistentVolumeClaims, and
the claims' and volumes' protection (``plugins/storage/controllers``).

Each function below is one of kplane's hooks (``core/hookspecs.py``), called once at start-up
in this order."""

from __future__ import annotations

from kplane.api import AdmissionChain, ControllerManager, Registry, Scheme, hookimpl
from kplane.plugins.storage import defaultclass, strategy, types
from kplane.plugins.storage.controllers.binder import VolumeBinder
from kplane.plugins.storage.controllers.protection import ClaimProtection, VolumeProtection
from kplane.plugins.storage.v1 import schemas as v1

GROUP = "storage.k8s.io"


@hookimpl
def kplane_register_types(scheme: Scheme, plugin_name: str) -> None:
    for kind, plural, internal, schema, namespaced, short in (
        ("StorageClass", "storageclasses", types.StorageClass, v1.StorageClassSchema, False, ["sc"]),
        ("CSIDriver", "csidrivers", types.CSIDriver, v1.CSIDriverSchema, False, []),
        ("CSINode", "csinodes", types.CSINode, v1.CSINodeSchema, False, []),
        ("CSIStorageCapacity", "csistoragecapacities", types.CSIStorageCapacity, v1.CSIStorageCapacitySchema, True, []),
        ("VolumeAttachment", "volumeattachments", types.VolumeAttachment, v1.VolumeAttachmentSchema, False, []),
    ):
        scheme.add_kind(group=GROUP, kind=kind, plural=plural, internal=internal, versions={"v1": schema},
                        storage_version="v1", namespaced=namespaced, short_names=short, plugin=plugin_name)
    scheme.set_version_priority(GROUP, ["v1"])


@hookimpl
def kplane_register_conversions(scheme: Scheme) -> None:
    scheme.add_defaulter(GROUP, "v1", "StorageClass", v1.default_storage_class)
    scheme.add_defaulter(GROUP, "v1", "CSIDriver", v1.default_csi_driver)


@hookimpl
def kplane_register_strategies(registry: Registry) -> None:
    registry.add_strategy(GROUP, "storageclasses", strategy.StorageClassStrategy())
    registry.add_strategy(GROUP, "csidrivers", strategy.CSIDriverStrategy())
    registry.add_strategy(GROUP, "csinodes", strategy.CSINodeStrategy())
    registry.add_strategy(GROUP, "csistoragecapacities", strategy.CSIStorageCapacityStrategy())
    registry.add_strategy(GROUP, "volumeattachments", strategy.VolumeAttachmentStrategy())
    registry.add_strategy(GROUP, "volumeattachments", strategy.VolumeAttachmentStatusStrategy(), subresource="status")


@hookimpl
def kplane_register_admission(chain: AdmissionChain, registry: Registry) -> None:
    chain.add_mutating("DefaultStorageClass", defaultclass.DefaultStorageClass(registry))


@hookimpl
async def kplane_post_start(registry: Registry) -> None:
    await defaultclass.ensure_standard(registry)


@hookimpl
def kplane_register_controllers(manager: ControllerManager) -> None:
    """kube-controller-manager's names: persistentvolume-binder (with the provisioner kplane
    simulates), persistentvolumeclaim-protection, persistentvolume-protection."""
    manager.add("persistentvolume-binder", VolumeBinder(manager.client_for("persistent-volume-binder"), manager.informers))
    manager.add("persistentvolumeclaim-protection", ClaimProtection(manager.client_for("pvc-protection-controller"), manager.informers))
    manager.add("persistentvolume-protection", VolumeProtection(manager.client_for("pv-protection-controller"), manager.informers))
