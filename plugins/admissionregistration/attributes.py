"""One admission request as webhooks and policies see it (``admission.Attributes`` with
kube's ``VersionedAttributes``): what is asked, by whom, and the objects in any version of the
kind, converted once per version asked for."""

from __future__ import annotations

import dataclasses
from typing import Any

from kplane.api import AdmissionRequest, GroupVersionKind, Operation

SCALE_KIND = GroupVersionKind("autoscaling", "v1", "Scale")
WARNINGS_TOTAL = 4096  # characters of warnings a request carries, as kube's warning recorder
WARNING_ITEM = 256  # past the total, each one is cut to this (and dropped if still too long)


def add_warnings(warnings: list[str], new: list[str]) -> None:
    """``new`` added to a request's ``warnings`` (a webhook's, a policy's Warn): none twice,
    and past 4096 characters in all each cut to 256 (dropped when even that does not fit), as
    kube's warning recorder keeps them. Linear in ``new``, however long."""
    seen, total = set(warnings), sum(len(w) for w in warnings)
    for text in new:
        if total >= WARNINGS_TOTAL:
            return
        if not text or text in seen:
            continue
        if total + len(text) > WARNINGS_TOTAL:
            text = text[:WARNING_ITEM]
            if total + len(text) > WARNINGS_TOTAL or text in seen:
                continue
        seen.add(text)
        warnings.append(text)
        total += len(text)


# What each operation's ``options`` are (``AdmissionRequest.options``).
_OPTIONS_KIND = {Operation.CREATE: "CreateOptions", Operation.UPDATE: "UpdateOptions",
                 Operation.DELETE: "DeleteOptions"}


@dataclasses.dataclass(slots=True)
class Attributes:
    """``request`` plus its objects' wire forms by version (filled as they are asked for)."""

    request: AdmissionRequest
    _objects: dict[str, tuple[dict[str, Any] | None, dict[str, Any] | None]] = dataclasses.field(default_factory=dict)
    #: What matching worked out once for the request (``matching.equivalent_versions``).
    memo: dict[str, Any] = dataclasses.field(default_factory=dict)
    #: The resource's ``ScaleAdapter`` when the write came through its ``/scale``: the request
    #: is then seen as kube sees it, on subresource ``scale`` with autoscaling/v1 Scale objects.
    scale: Any = None

    # -- what is asked ------------------------------------------------------------------------
    @property
    def operation(self) -> str:
        return self.request.operation.value

    @property
    def group(self) -> str:
        return self.request.resource.group

    @property
    def version(self) -> str:
        """The version the request was made in (the URL's)."""
        rt, asked = self.request.resource, self.request.ctx.version
        return asked if asked in rt.versions else rt.storage_version

    @property
    def resource(self) -> str:
        return self.request.resource.plural

    @property
    def subresource(self) -> str:
        return "scale" if self.scale is not None else self.request.subresource

    @property
    def namespace(self) -> str:
        return self.request.namespace if self.request.resource.namespaced else ""

    @property
    def name(self) -> str:
        return self.request.name

    @property
    def namespaced(self) -> bool:
        return self.request.resource.namespaced

    @property
    def dry_run(self) -> bool:
        return self.request.dry_run

    @property
    def connect(self) -> bool:
        """A CONNECT: the object is the connect options' wire dict, in no version of the resource."""
        return self.request.operation is Operation.CONNECT

    def kind(self, version: str) -> GroupVersionKind:
        if self.scale is not None:
            return SCALE_KIND
        if self.connect:
            group, _, api_version = str(self.request.obj.get("apiVersion") or "").rpartition("/")
            return GroupVersionKind(group, api_version, str(self.request.obj.get("kind") or ""))
        return self.request.resource.gvk(version)

    # -- the objects ----------------------------------------------------------------------------
    def objects(self, version: str) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
        """``(object, oldObject)`` as wire dicts in ``version`` (None where the operation has
        none: no object on DELETE, no old one on CREATE). Callers must not change them."""
        if self.connect:
            return self.request.obj, None
        if self.scale is not None:
            version = self.request.resource.storage_version  # the one the adapter's paths name
        found = self._objects.get(version)
        if found is None:
            rt, req = self.request.resource, self.request
            found = (rt.encode(req.obj, version) if req.obj is not None else None,
                     rt.encode(req.old, version) if req.old is not None else None)
            if self.scale is not None:
                found = (self.scale.scale_of(found[0]) if found[0] is not None else None,
                         self.scale.scale_of(found[1]) if found[1] is not None else None)
            self._objects[version] = found
        return found

    def replace_object(self, wire: dict[str, Any], version: str) -> None:
        """A mutation's result (``wire`` in ``version``): the request's object from now on,
        decoded and defaulted as the kind decodes a client's body (connect options as they are)."""
        if self.connect:
            self.request.obj = wire
            return
        if self.scale is not None:  # a Scale: its replica count written into the parent
            version = self.request.resource.storage_version
            parent = self.request.resource.encode(self.request.obj, version)
            replicas = (wire.get("spec") or {}).get("replicas")
            self.scale.set_replicas(parent, replicas if isinstance(replicas, int) and not isinstance(replicas, bool) else 0)
            wire = parent
        obj, _ = self.request.resource.decode(wire, version, "Ignore")
        self.request.obj = obj
        self._objects.clear()

    # -- the AdmissionReview's request ----------------------------------------------------------
    def review_request(self, uid: str, version: str) -> dict[str, Any]:
        """``admission.k8s.io/v1`` AdmissionRequest for a webhook that matched in ``version``
        (kube's ``CreateV1AdmissionReview``): also the ``request`` variable of CEL expressions."""
        obj, old = self.objects(version)
        rt, kind, asked = self.request.resource, self.kind(version), self.version
        out: dict[str, Any] = {
            "uid": uid,
            "kind": {"group": kind.group, "version": kind.version, "kind": kind.kind},
            "resource": {"group": rt.group, "version": version, "resource": rt.plural},
            "requestKind": {"group": kind.group, "version": kind.version, "kind": kind.kind}
            if self.connect or self.scale is not None else {"group": rt.group, "version": asked, "kind": rt.kind},
            "requestResource": {"group": rt.group, "version": asked, "resource": rt.plural},
            "name": self.name,
            "operation": self.operation,
            "userInfo": self.request.ctx.user.to_api(),
            "object": obj,
            "oldObject": old,
            "dryRun": self.dry_run,
        }
        if self.subresource:
            out["subResource"] = out["requestSubResource"] = self.subresource
        if self.namespace:
            out["namespace"] = self.namespace
        options_kind = _OPTIONS_KIND.get(self.request.operation)
        if options_kind is not None:
            options: dict[str, Any] = {"apiVersion": "meta.k8s.io/v1", "kind": options_kind}
            if self.request.ctx.field_manager and options_kind != "DeleteOptions":
                options["fieldManager"] = self.request.ctx.field_manager
            if self.dry_run:
                options["dryRun"] = ["All"]
            out["options"] = options
        return out
