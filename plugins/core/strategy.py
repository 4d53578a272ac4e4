"""Strategies of the core group (``pkg/registry/core/*/strategy.go``)."""

from __future__ import annotations

import ipaddress
from typing import Any

from kplane.api import (
    FIELD_IMMUTABLE, META_FIELDS, RESOURCE_VERBS, SUBRESOURCE_VERBS, FieldError, GroupVersionKind, RequestContext,
    Strategy, bool_field, build, clock, duplicate, errors, forbidden, invalid, is_dns1123_label,
    is_dns1123_subdomain, is_qualified_name, is_valid_label_value, load, not_supported, required, shape_of,
)
from kplane.plugins.core import printers, validation
from kplane.plugins.core.types import (
    Binding,
    ConfigMap,
    Event,
    Namespace,
    NamespaceSpec,
    NamespaceStatus,
    Node,
    NodeSpec,
    Pod,
    PodCondition,
    PodStatus,
    Secret,
)
from kplane.plugins.core.v1 import protobuf
from kplane.plugins.core.v1.schemas import BindingSchema

FINALIZER_KUBERNETES = "kubernetes"
NAME_LABEL = "kubernetes.io/metadata.name"


# -- Namespace ---------------------------------------------------------------------------------
class NamespaceStrategy(Strategy):
    """New namespaces are Active and carry the ``kubernetes`` finalizer, so deleting one first
    marks it Terminating while the namespace controller empties it. As in Kubernetes there is
    no deletecollection of namespaces."""

    name_validator = staticmethod(is_dns1123_label)
    columns = printers.NAMESPACE_COLUMNS
    verbs = RESOURCE_VERBS - {"deletecollection"}
    return_deleted_object = True
    selectable_fields = {"metadata.name": "metadata.name", "status.phase": "status.phase"}

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
    verbs = SUBRESOURCE_VERBS

    def prepare_for_update(self, ctx: RequestContext, obj: Namespace, old: Namespace) -> None:
        obj.spec = old.spec


class NamespaceFinalizeStrategy(NamespaceStrategy):
    """``/finalize`` changes only ``spec.finalizers``; emptying them lets deletion complete. It is
    write-only (PUT), as Kubernetes' ``FinalizeREST``."""

    verbs = frozenset({"update"})

    def prepare_for_update(self, ctx: RequestContext, obj: Namespace, old: Namespace) -> None:
        obj.status = old.status


# -- Pod ---------------------------------------------------------------------------------------
def _first_pod_ip(pod: dict[str, Any]) -> str:
    """``status.podIP`` as Go's field set reads it: the first of ``status.podIPs``."""
    ips = (pod.get("status") or {}).get("podIPs")
    return ips[0].get("ip", "") if isinstance(ips, list) and ips and isinstance(ips[0], dict) else ""


class PodStrategy(Strategy):
    columns = printers.POD_COLUMNS
    return_deleted_object = True
    selectable_fields = {
        **META_FIELDS,
        "spec.nodeName": "spec.nodeName",
        "spec.host": "spec.nodeName",  # what pre-1.0 clients send; converted as kube-apiserver does
        "spec.restartPolicy": "spec.restartPolicy",
        "spec.schedulerName": "spec.schedulerName",
        "spec.serviceAccountName": "spec.serviceAccountName",
        "spec.hostNetwork": bool_field("spec.hostNetwork"),
        "status.phase": "status.phase",
        "status.podIP": _first_pod_ip,
        # accepted by Go's conversion but absent from its field set: it always reads ""
        "status.podIPs": lambda pod: "",
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

    def grace_period(self, ctx: RequestContext, obj: Pod, requested: int | None) -> int | None:
        """The grace asked for, else ``spec.terminationGracePeriodSeconds``; 0 (removed at once)
        for a pod no kubelet runs: not scheduled yet, or finished."""
        if not obj.spec.node_name or obj.status.phase in ("Succeeded", "Failed"):
            return 0
        if requested is not None:
            return requested
        return obj.spec.termination_grace_period_seconds or 0


class PodStatusStrategy(PodStrategy):
    def prepare_for_update(self, ctx: RequestContext, obj: Pod, old: Pod) -> None:
        obj.spec = old.spec

    def validate_update(self, ctx: RequestContext, obj: Pod, old: Pod) -> list[FieldError]:
        return []


class PodBindingStrategy(PodStrategy):
    """``pods/binding``: a POSTed v1 Binding sets ``spec.nodeName`` of a pod that has none, as
    kube-scheduler binds pods; it is the only way to change a pod's node. The handler runs
    :meth:`apply_post` inside the Store's guarded update, so two binders never both win."""

    response_kind = GroupVersionKind("", "v1", "Binding")
    response_schema = BindingSchema
    response_protobuf = protobuf.BINDING

    def apply_post(self, ctx: RequestContext, body: Any, pod: Pod) -> Pod:
        """The stored pod bound as ``body`` asks; 409 when it is bound already or being deleted."""
        binding = _decode_binding(body)
        name = binding.metadata.name
        if name != ctx.name:
            raise errors.bad_request("name in URL does not match name in Binding object")
        if binding.metadata.namespace and binding.metadata.namespace != ctx.namespace:
            raise errors.bad_request("the namespace of the provided object does not match the namespace sent on the request")
        problems = _validate_binding(binding)
        if problems:
            raise errors.invalid_object("Binding", "", name or "", problems)
        if pod.metadata.deletion_timestamp:
            raise errors.conflict("pods/binding", "", ctx.name, f"pod {ctx.name} is being deleted, cannot be assigned to a host")
        if pod.spec.node_name:
            raise errors.conflict("pods/binding", "", ctx.name, f'pod {ctx.name} is already assigned to node "{pod.spec.node_name}"')
        # Preconditions of the binding: the Store answers a mismatch with 409.
        pod.metadata.uid = binding.metadata.uid or pod.metadata.uid
        pod.metadata.resource_version = binding.metadata.resource_version or pod.metadata.resource_version
        if binding.metadata.annotations:
            pod.metadata.annotations = {**(pod.metadata.annotations or {}), **binding.metadata.annotations}
        pod.spec.node_name = binding.target.name
        conditions = [c for c in pod.status.conditions or () if c.type != "PodScheduled"]
        pod.status.conditions = [*conditions, PodCondition(type="PodScheduled", status="True", last_transition_time=clock.now())]
        return pod

    def prepare_for_update(self, ctx: RequestContext, obj: Pod, old: Pod) -> None:
        """Nothing to reset: :meth:`apply_post` built the new pod from the stored one."""

    def validate_update(self, ctx: RequestContext, obj: Pod, old: Pod) -> list[FieldError]:
        return []


def _decode_binding(body: Any) -> Binding:
    """The posted Binding, decoded strictly (unknown fields are refused, as for any body)."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of the request must be a Binding object")
    api_version, kind = body.get("apiVersion"), body.get("kind")
    if api_version and api_version != "v1":
        raise errors.bad_request(f"the API version in the data ({api_version}) does not match the expected API version (v1)")
    if kind and kind != "Binding":
        raise errors.bad_request(f"the kind in the data ({kind}) does not match the expected kind (Binding)")
    loaded = load(shape_of(BindingSchema), body, skip=frozenset({"apiVersion", "kind"}))
    problems = [f'unknown field "{path}"' for path in loaded.unknown] + [str(e) for e in loaded.errors]
    if problems:
        raise errors.bad_request(f'Binding in version "v1" cannot be handled as a Binding: {"; ".join(problems)}', loaded.errors)
    return build(Binding, loaded.data)


def _validate_binding(binding: Binding) -> list[FieldError]:
    """``ValidatePodBinding``: the target is a Node, by a valid name."""
    errs: list[FieldError] = []
    target = binding.target
    if target.kind and target.kind != "Node":
        errs.append(not_supported("target.kind", target.kind, ["Node", "<empty>"]))
    if not target.name:
        errs.append(required("target.name"))
    else:
        errs += [invalid("target.name", target.name, msg) for msg in is_dns1123_subdomain(target.name)]
    return errs


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
def _event_source(event: dict[str, Any]) -> str:
    """An Event's ``source``: its source component, else its reporting controller."""
    source = event.get("source")
    return (source.get("component") if isinstance(source, dict) else "") or event.get("reportingComponent") or ""


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
        "source": _event_source,
        "type": "type",
        **META_FIELDS,
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
    selectable_fields = {"type": "type", **META_FIELDS}
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
    return_deleted_object = True


# -- Node --------------------------------------------------------------------------------------
TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"]


class NodeStrategy(Strategy):
    """A kubelet registers its Node with the status it observed, so create keeps the status;
    an update keeps the stored status, and ``/status`` keeps the spec."""

    columns = printers.NODE_COLUMNS
    selectable_fields = {"metadata.name": "metadata.name", "spec.unschedulable": bool_field("spec.unschedulable")}

    def prepare_for_create(self, ctx: RequestContext, obj: Node) -> None:
        _sync_pod_cidrs(obj.spec)

    def validate(self, ctx: RequestContext, obj: Node) -> list[FieldError]:
        return _validate_node_spec(obj.spec)

    def prepare_for_update(self, ctx: RequestContext, obj: Node, old: Node) -> None:
        obj.status = old.status
        _sync_pod_cidrs(obj.spec)

    def validate_update(self, ctx: RequestContext, obj: Node, old: Node) -> list[FieldError]:
        errs = _validate_node_spec(obj.spec)
        if old.spec.pod_cidrs and obj.spec.pod_cidrs != old.spec.pod_cidrs:
            errs.append(forbidden("spec.podCIDRs", 'node updates may not change podCIDR except from "" to valid'))
        if old.spec.provider_id and obj.spec.provider_id != old.spec.provider_id:
            errs.append(forbidden("spec.providerID", 'node updates may not change providerID except from "" to valid'))
        return errs


class NodeStatusStrategy(NodeStrategy):
    def prepare_for_update(self, ctx: RequestContext, obj: Node, old: Node) -> None:
        obj.spec = old.spec


def _sync_pod_cidrs(spec: NodeSpec) -> None:
    """v1 has both podCIDR and podCIDRs: podCIDRs wins, and podCIDR is always its first entry."""
    if spec.pod_cidrs:
        spec.pod_cidr = spec.pod_cidrs[0]
    elif spec.pod_cidr:
        spec.pod_cidrs = [spec.pod_cidr]


def _validate_node_spec(spec: NodeSpec) -> list[FieldError]:
    errs: list[FieldError] = []
    families: list[int | None] = []
    for i, cidr in enumerate(spec.pod_cidrs or ()):
        try:
            families.append(ipaddress.ip_network(cidr, strict=False).version if "/" in cidr else None)
        except ValueError:
            families.append(None)
        if families[-1] is None:
            errs.append(invalid(f"spec.podCIDRs[{i}]", cidr, "must be a valid CIDR"))
    if len(families) > 2 or (len(families) == 2 and families[0] == families[1]):
        errs.append(invalid("spec.podCIDRs", spec.pod_cidrs, "may specify no more than one CIDR for each IP family"))
    seen: set[tuple[str, str]] = set()
    for i, taint in enumerate(spec.taints or ()):
        at = f"spec.taints[{i}]"
        if not taint.key:
            errs.append(required(f"{at}.key"))
        else:
            errs += [invalid(f"{at}.key", taint.key, msg) for msg in is_qualified_name(taint.key)]
        errs += [invalid(f"{at}.value", taint.value, msg) for msg in is_valid_label_value(taint.value or "")]
        if not taint.effect:
            errs.append(required(f"{at}.effect"))
        elif taint.effect not in TAINT_EFFECTS:
            errs.append(not_supported(f"{at}.effect", taint.effect, TAINT_EFFECTS))
        if (taint.key, taint.effect) in seen:
            errs.append(duplicate(f"{at}.effect", taint.effect))
        seen.add((taint.key, taint.effect))
    return errs

