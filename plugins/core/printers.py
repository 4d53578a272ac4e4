"""Table columns of the core kinds, as ``kubectl get`` shows them on a cluster."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kplane.api import AGE, NAME, Column, age, dig


def pod_status(pod: dict[str, Any]) -> str:
    """The STATUS column: a waiting or terminated container's reason beats the phase, and a
    pod being deleted is Terminating (a simplified ``printPod``)."""
    reason = dig(pod, "status.reason") or dig(pod, "status.phase", "Pending")
    running = False
    for status in reversed(dig(pod, "status.containerStatuses", [])):
        state = status.get("state") or {}
        waiting, terminated = state.get("waiting") or {}, state.get("terminated") or {}
        if waiting.get("reason"):
            reason = waiting["reason"]
        elif terminated.get("reason"):
            reason = terminated["reason"]
        elif terminated:
            signal = terminated.get("signal")
            reason = f"Signal:{signal}" if signal else f"ExitCode:{terminated.get('exitCode', 0)}"
        elif status.get("ready") and "running" in state:
            running = True
    if reason == "Completed" and running:
        reason = "Running"
    if pod["metadata"].get("deletionTimestamp"):
        reason = "Terminating"
    return reason


def _ready(pod: dict[str, Any]) -> str:
    statuses = dig(pod, "status.containerStatuses", [])
    return f"{sum(1 for s in statuses if s.get('ready'))}/{len(dig(pod, 'spec.containers', []))}"


def _readiness_gates(pod: dict[str, Any]) -> str:
    gates = dig(pod, "spec.readinessGates", [])
    if not gates:
        return "<none>"
    conditions = {c.get("type"): c.get("status") for c in dig(pod, "status.conditions", [])}
    return f"{sum(1 for g in gates if conditions.get(g.get('conditionType')) == 'True')}/{len(gates)}"


POD_COLUMNS = (
    NAME,
    Column("Ready", "string", _ready, description="The aggregate readiness state of this pod for accepting traffic."),
    Column("Status", "string", pod_status, description="The aggregate status of the containers in this pod."),
    Column("Restarts", "string", lambda p: str(sum(s.get("restartCount", 0) for s in dig(p, "status.containerStatuses", []))),
           description="The number of times the containers in this pod have been restarted."),
    AGE,
    Column("IP", "string", lambda p: dig(p, "status.podIP", "<none>"), priority=1, description="IP address allocated to the pod."),
    Column("Node", "string", lambda p: dig(p, "spec.nodeName", "<none>"), priority=1, description="Name of the node the pod is assigned to."),
    Column("Nominated Node", "string", lambda p: dig(p, "status.nominatedNodeName", "<none>"), priority=1,
           description="Name of the node the pod is nominated to."),
    Column("Readiness Gates", "string", _readiness_gates, priority=1, description="Pod readiness gates."),
)

NAMESPACE_COLUMNS = (
    NAME,
    Column("Status", "string", lambda n: dig(n, "status.phase", ""), description="The status of the namespace."),
    AGE,
)

CONFIG_MAP_COLUMNS = (
    NAME,
    Column("Data", "integer", lambda c: len(c.get("data") or {}) + len(c.get("binaryData") or {}),
           description="Number of entries in the config map."),
    AGE,
)

SECRET_COLUMNS = (
    NAME,
    Column("Type", "string", lambda s: s.get("type", ""), description="The type of the secret."),
    Column("Data", "integer", lambda s: len(s.get("data") or {}), description="Number of entries in the secret."),
    AGE,
)

SERVICE_ACCOUNT_COLUMNS = (
    NAME,
    Column("Secrets", "integer", lambda s: len(s.get("secrets") or []), description="Number of secrets of the service account."),
    AGE,
)


def _event_object(event: dict[str, Any]) -> str:
    return f"{dig(event, 'involvedObject.kind', '').lower()}/{dig(event, 'involvedObject.name', '')}"


def _last_seen(event: dict[str, Any]) -> str:
    return age(event.get("lastTimestamp") or event.get("eventTime") or event["metadata"].get("creationTimestamp"))


EVENT_COLUMNS = (
    Column("Last Seen", "string", _last_seen, description="Time since the event was last seen."),
    Column("Type", "string", lambda e: e.get("type", ""), description="Type of this event (Normal, Warning)."),
    Column("Reason", "string", lambda e: e.get("reason", ""), description="Short, machine understandable reason."),
    Column("Object", "string", _event_object, description="The object this event is about."),
    Column("Subobject", "string", lambda e: dig(e, "involvedObject.fieldPath", ""), priority=1,
           description="The part of the object this event is about."),
    Column("Source", "string", lambda e: dig(e, "source.component", "") or e.get("reportingComponent", ""), priority=1,
           description="The component reporting this event."),
    Column("Message", "string", lambda e: e.get("message", ""), description="A human-readable description of the event."),
    Column("First Seen", "string", lambda e: age(e.get("firstTimestamp") or e.get("eventTime")), priority=1,
           description="Time since the event was first seen."),
    Column("Count", "string", lambda e: str(e.get("count", 1)), priority=1, description="How many times this event occurred."),
    Column("Name", "string", lambda e: e["metadata"].get("name", ""), priority=1, description="Name of the event."),
)


ROLE_LABEL_PREFIX = "node-role.kubernetes.io/"
ROLE_LABEL = "kubernetes.io/role"


def node_status(node: dict[str, Any]) -> str:
    """Ready, NotReady or Unknown from the Ready condition, plus SchedulingDisabled when cordoned."""
    ready = next((c for c in dig(node, "status.conditions", []) if c.get("type") == "Ready"), None)
    status = ["Unknown" if ready is None else "Ready" if ready.get("status") == "True" else "NotReady"]
    if dig(node, "spec.unschedulable"):
        status.append("SchedulingDisabled")
    return ",".join(status)


def node_roles(node: dict[str, Any]) -> str:
    """Roles from ``node-role.kubernetes.io/<role>`` label keys and the ``kubernetes.io/role`` label's value."""
    roles = set()
    for key, value in (node["metadata"].get("labels") or {}).items():
        if key.startswith(ROLE_LABEL_PREFIX) and key[len(ROLE_LABEL_PREFIX):]:
            roles.add(key[len(ROLE_LABEL_PREFIX):])
        elif key == ROLE_LABEL and value:
            roles.add(value)
    return ",".join(sorted(roles)) or "<none>"


def _node_address(kind: str) -> Callable[[dict[str, Any]], str]:
    def cell(node: dict[str, Any]) -> str:
        return next((a.get("address", "") for a in dig(node, "status.addresses", []) if a.get("type") == kind), "<none>")

    return cell


def _node_info(key: str) -> Callable[[dict[str, Any]], str]:
    return lambda node: dig(node, f"status.nodeInfo.{key}") or "<unknown>"


NODE_COLUMNS = (
    NAME,
    Column("Status", "string", node_status, description="The status of the node"),
    Column("Roles", "string", node_roles, description="The roles of the node"),
    AGE,
    Column("Version", "string", lambda n: dig(n, "status.nodeInfo.kubeletVersion", ""), description="Kubelet Version reported by the node."),
    Column("Internal-IP", "string", _node_address("InternalIP"), priority=1, description="List of addresses reachable to the node."),
    Column("External-IP", "string", _node_address("ExternalIP"), priority=1, description="List of addresses reachable to the node."),
    Column("OS-Image", "string", _node_info("osImage"), priority=1, description="OS Image reported by the node from /etc/os-release."),
    Column("Kernel-Version", "string", _node_info("kernelVersion"), priority=1, description="Kernel Version reported by the node."),
    Column("Container-Runtime", "string", _node_info("containerRuntimeVersion"), priority=1,
           description="ContainerRuntime Version reported by the node through runtime remote API."),
)


def _template_containers(template: dict[str, Any]) -> list[dict[str, Any]]:
    return dig(template, "spec.containers", [])


def _containers_of(template: dict[str, Any]) -> str:
    return ",".join(c.get("name", "") for c in _template_containers(template))


def _images_of(template: dict[str, Any]) -> str:
    return ",".join(c.get("image", "") for c in _template_containers(template))


def _labels(labels: dict[str, str] | None) -> str:
    """``labels.FormatLabels``: sorted ``key=value`` pairs, ``<none>`` for none."""
    return ",".join(f"{k}={v}" for k, v in sorted((labels or {}).items())) or "<none>"


REPLICATION_CONTROLLER_COLUMNS = (
    NAME,
    Column("Desired", "integer", lambda o: dig(o, "spec.replicas", 0), description="Number of desired pods."),
    Column("Current", "integer", lambda o: dig(o, "status.replicas", 0), description="Number of actual pods."),
    Column("Ready", "integer", lambda o: dig(o, "status.readyReplicas", 0), description="Number of ready pods."),
    AGE,
    Column("Containers", "string", lambda o: _containers_of(dig(o, "spec.template", {})), priority=1,
           description="Names of each container in the template."),
    Column("Images", "string", lambda o: _images_of(dig(o, "spec.template", {})), priority=1,
           description="Images referenced by each container in the template."),
    Column("Selector", "string", lambda o: _labels(dig(o, "spec.selector")), priority=1, description="Label selector for pods."),
)

POD_TEMPLATE_COLUMNS = (
    NAME,
    Column("Containers", "string", lambda o: _containers_of(o.get("template") or {}), description="Names of each container in the template."),
    Column("Images", "string", lambda o: _images_of(o.get("template") or {}), description="Images referenced by each container in the template."),
    Column("Pod Labels", "string", lambda o: _labels(dig(o, "template.metadata.labels")), description="The labels for the pod template."),
)

LIMIT_RANGE_COLUMNS = (
    NAME,
    Column("Created At", "date", lambda o: o["metadata"].get("creationTimestamp", ""), description="Creation timestamp of the limit range."),
)


def _quota_usage(prefix_is_limit: bool) -> Callable[[dict[str, Any]], str]:
    """kubectl's REQUEST and LIMIT columns: ``name: used/hard`` of the hard resources, sorted,
    those named ``limits.*`` in LIMIT and the others in REQUEST."""
    def cell(quota: dict[str, Any]) -> str:
        hard, used = dig(quota, "status.hard", {}) or {}, dig(quota, "status.used", {}) or {}
        names = sorted(n for n in hard if n.startswith("limits.") == prefix_is_limit)
        return ", ".join(f"{n}: {used.get(n, '0')}/{hard[n]}" for n in names)

    return cell


RESOURCE_QUOTA_COLUMNS = (
    NAME,
    AGE,
    Column("Request", "string", _quota_usage(False), description="Request represents a minimum amount of cpu/memory that a container may consume."),
    Column("Limit", "string", _quota_usage(True), description="Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."),
)
