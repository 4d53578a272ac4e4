"""The ``/scale`` subresource: any resource with a replica count, seen as autoscaling/v1 Scale.

A plugin says where the counts and the selector live (like a CRD's scale subresource), and
``kubectl scale``, HPA-style clients and the Python client's ``*_scale`` calls work::

    registry.add_scale("apps", "deployments", ScaleAdapter())

The registry then serves ``deployments/scale`` with a :class:`ScaleREST` over the Deployments' Store.
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Any

from kplane.core.meta import errors
from kplane.core.meta.protobuf import OBJECT_META
from kplane.core.meta.schemas import ObjectMetaSchema
from kplane.core.meta.selectors import format_label_selector
from kplane.core.registry.printing import dig
from kplane.core.registry.rest import Served, UpdateFunc
from kplane.core.registry.store import Store
from kplane.core.registry.strategy import RequestContext
from kplane.core.runtime import fields
from kplane.core.runtime.gvk import GroupVersionKind
from kplane.core.runtime.protobuf import Field, Message
from kplane.core.runtime.scheme import IGNORE
from kplane.core.runtime.schema import Schema, load, shape_of

GROUP, VERSION, KIND = "autoscaling", "v1", "Scale"
API_VERSION = f"{GROUP}/{VERSION}"
_IDENTITY = ("name", "namespace", "uid", "resourceVersion", "creationTimestamp")


class ScaleSpecSchema(Schema):
    replicas = fields.Int32(metadata={"description": "The desired number of instances for the scaled object."})


class ScaleStatusSchema(Schema):
    replicas = fields.Int32(metadata={"description": "The actual number of observed instances of the scaled object."})
    selector = fields.Str(metadata={"description": "The label query over pods that should match the replicas count."})


class ScaleSchema(Schema):
    """Scale represents a scaling request for a resource."""

    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(ScaleSpecSchema)
    status = fields.Nested(ScaleStatusSchema)


SCALE_SHAPE = shape_of(ScaleSchema)

# autoscaling/v1 generated.proto: a PUT of /scale from a protobuf client (client-go's scale
# client). The replica counts are plain int32 fields, which Go's protobuf always writes: 0 is
# kept as a value (a scale to zero), not dropped as unset.
PROTOBUF = Message(
    "Scale",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", Message("ScaleSpec", {1: Field("replicas", "int32", pointer=True)})),
        3: Field("status", Message("ScaleStatus", {1: Field("replicas", "int32", pointer=True), 2: Field("selector", "string")})),
    },
)


@dataclass(frozen=True, slots=True)
class ScaleAdapter:
    """Where a resource keeps what Scale shows, as dotted paths into its wire form."""

    spec_replicas: str = "spec.replicas"
    status_replicas: str = "status.replicas"
    selector: str = "spec.selector"  # a LabelSelector object or an already formatted string

    def scale_of(self, obj: dict[str, Any]) -> dict[str, Any]:
        meta = obj["metadata"]
        selector = dig(obj, self.selector)
        return {
            "kind": KIND,
            "apiVersion": API_VERSION,
            "metadata": {k: meta[k] for k in _IDENTITY if k in meta},
            "spec": {"replicas": dig(obj, self.spec_replicas, 0)},
            "status": {
                "replicas": dig(obj, self.status_replicas, 0),
                "selector": selector if isinstance(selector, str) else format_label_selector(selector),
            },
        }

    def get_scale(self, obj: dict[str, Any]) -> dict[str, Any]:
        """A GET's answer; an update starts from :meth:`scale_of`. The same unless a subclass
        refuses to show an object lacking its count, as a custom resource's scale does."""
        return self.scale_of(obj)

    def set_replicas(self, obj: dict[str, Any], replicas: int) -> None:
        *parents, last = self.spec_replicas.split(".")
        for part in parents:
            obj = obj.setdefault(part, {})
        obj[last] = replicas


class ScaleREST(Served):
    """get, update and patch of autoscaling/v1 Scale, read from and written to the parent object
    in the parent's Store (``ScaleREST`` of the apps registry)."""

    kind = GroupVersionKind(GROUP, VERSION, KIND)
    schema = ScaleSchema
    protobuf = PROTOBUF
    own_kind = True

    def __init__(self, store: Store, adapter: ScaleAdapter) -> None:
        self.store = store
        self.adapter = adapter

    async def get(self, ctx: RequestContext, name: str) -> dict[str, Any]:
        return self.adapter.get_scale((await self.store.get(ctx, name)).obj)

    async def update(self, ctx: RequestContext, name: str, updater: UpdateFunc, *,
                     force_allow_create: bool = False) -> tuple[dict[str, Any], bool]:
        """``updater`` turns the current Scale into the wanted one; the parent's replica count
        follows. The parent's new state is decoded by ``ctx.decode`` (recording the write in its
        managedFields), or, without one, only decoded. A Scale never creates its parent."""
        rt, storage = self.store.resource, self.store.resource.storage_version

        def decode(old: dict[str, Any], new: dict[str, Any]) -> Any:
            return rt.decode(new, storage, IGNORE)[0]

        async def parent(old: Any) -> Any:
            current = rt.encode(old, storage)
            replicas, resource_version = desired_replicas(await updater(self.adapter.scale_of(current)), name, ctx.namespace)
            scaled = rt.encode(old, storage)
            self.adapter.set_replicas(scaled, replicas)
            scaled["metadata"]["resourceVersion"] = resource_version or None
            return (ctx.decode or decode)(current, scaled)

        # The parent is read and written in the storage version, the one its replica paths name.
        stored, _ = await self.store.update(replace(ctx, version=storage), name, parent)
        return self.adapter.scale_of(stored.obj), False


def desired_replicas(scale: Any, name: str, namespace: str = "") -> tuple[int, str]:
    """The replicas and (optional) resourceVersion a client's Scale asks for; 400/422 otherwise.

    As for any update, the Scale must name the object of the URL (kube-apiserver's ``checkName``).
    """
    if not isinstance(scale, dict):
        raise errors.bad_request("the body of the request must be a Scale object")
    if scale.get("apiVersion") not in (None, API_VERSION) or scale.get("kind") not in (None, KIND):
        raise errors.bad_request(f"the body must be an {API_VERSION} Scale, not {scale.get('apiVersion')} {scale.get('kind')}")
    loaded = load(SCALE_SHAPE, scale, skip=frozenset({"apiVersion", "kind"}))
    if loaded.errors:
        raise errors.bad_request(f'Scale in version "{VERSION}" cannot be handled as a Scale: ' + "; ".join(map(str, loaded.errors)), loaded.errors)
    meta = loaded.data.get("metadata") or {}
    if meta.get("name", "") != name:
        raise errors.bad_request(f"the name of the object ({meta.get('name', '')}) does not match the name on the URL ({name})")
    if meta.get("namespace") and meta["namespace"] != namespace:
        raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
    replicas = (loaded.data.get("spec") or {}).get("replicas")
    if replicas is None:
        replicas = 0
    if replicas < 0:
        raise errors.invalid_object(KIND, GROUP, name, [errors.invalid("spec.replicas", replicas, "must be greater than or equal to 0")])
    return replicas, meta.get("resource_version") or ""
