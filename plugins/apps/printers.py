"""Table columns of the apps kinds, as ``kubectl get`` shows them on a cluster."""

from __future__ import annotations

from typing import Any

from kplane.api import AGE, NAME, Column, controller_ref, dig, format_label_selector


def _containers(obj: dict[str, Any]) -> list[dict[str, Any]]:
    return dig(obj, "spec.template.spec.containers", [])


def _selector(obj: dict[str, Any]) -> str:
    return format_label_selector(dig(obj, "spec.selector")) or "<none>"


CONTAINERS = Column("Containers", "string", lambda o: ",".join(c.get("name", "") for c in _containers(o)), priority=1,
                    description="Names of each container in the template.")
IMAGES = Column("Images", "string", lambda o: ",".join(c.get("image", "") for c in _containers(o)), priority=1,
                description="Images referenced by each container in the template.")
SELECTOR = Column("Selector", "string", _selector, priority=1, description="Label selector for pods.")

DEPLOYMENT_COLUMNS = (
    NAME,
    Column("Ready", "string", lambda o: f"{dig(o, 'status.readyReplicas', 0)}/{dig(o, 'spec.replicas', 0)}",
           description="Number of the pod with ready state"),
    Column("Up-to-date", "integer", lambda o: dig(o, "status.updatedReplicas", 0),
           description="Total number of non-terminated pods targeted by this deployment that have the desired template spec."),
    Column("Available", "integer", lambda o: dig(o, "status.availableReplicas", 0),
           description="Total number of available pods (ready for at least minReadySeconds) targeted by this deployment."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
)

REPLICA_SET_COLUMNS = (
    NAME,
    Column("Desired", "integer", lambda o: dig(o, "spec.replicas", 0), description="Number of desired pods."),
    Column("Current", "integer", lambda o: dig(o, "status.replicas", 0), description="Number of actual pods."),
    Column("Ready", "integer", lambda o: dig(o, "status.readyReplicas", 0), description="Number of ready pods."),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
)

def _node_selector(obj: dict[str, Any]) -> str:
    """``labels.FormatLabels`` of the template's nodeSelector: ``k=v,...`` sorted, or ``<none>``."""
    return format_label_selector({"matchLabels": dig(obj, "spec.template.spec.nodeSelector")}) or "<none>"


DAEMON_SET_COLUMNS = (
    NAME,
    Column("Desired", "integer", lambda o: dig(o, "status.desiredNumberScheduled", 0),
           description="The total number of nodes that should be running the daemon pod."),
    Column("Current", "integer", lambda o: dig(o, "status.currentNumberScheduled", 0),
           description="The number of nodes that are running at least 1 daemon pod and are supposed to run the daemon pod."),
    Column("Ready", "integer", lambda o: dig(o, "status.numberReady", 0),
           description="The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and ready."),
    Column("Up-to-date", "integer", lambda o: dig(o, "status.updatedNumberScheduled", 0),
           description="The total number of nodes that are running updated daemon pod"),
    Column("Available", "integer", lambda o: dig(o, "status.numberAvailable", 0),
           description="The number of nodes that should be running the daemon pod and have one or more of the daemon pod running and available (ready for at least spec.minReadySeconds)"),
    Column("Node Selector", "string", _node_selector,
           description="NodeSelector is a selector which must be true for the pod to fit on a node. Selector which must match a node's labels for the pod to be scheduled on that node. More info: https://kubernetes.io/docs/concepts/configuration/assign-pod-node/"),
    AGE,
    CONTAINERS,
    IMAGES,
    SELECTOR,
)


def _controller(obj: dict[str, Any]) -> str:
    """``kind.group/name`` of the controlling owner, lower-cased as kubectl prints it."""
    ref = controller_ref(obj)
    if ref is None:
        return "<none>"
    group = str(ref.get("apiVersion", "")).rpartition("/")[0]
    kind = f"{ref.get('kind', '')}.{group}" if group else str(ref.get("kind", ""))
    return f"{kind.lower()}/{ref.get('name', '')}"


CONTROLLER_REVISION_COLUMNS = (
    NAME,
    Column("Controller", "string", _controller, description="Controller of the object."),
    Column("Revision", "integer", lambda o: o.get("revision", 0), description="Revision of the ControllerRevision."),
    AGE,
)
STATEFUL_SET_COLUMNS = (
    NAME,
    Column("Ready", "string", lambda o: f"{dig(o, 'status.readyReplicas', 0)}/{dig(o, 'spec.replicas', 0)}",
           description="Number of the pod with ready state"),
    AGE,
    CONTAINERS,
    IMAGES,
)

