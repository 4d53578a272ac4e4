"""The node lifecycle (kube-controller-manager's ``pkg/controller/nodelifecycle``) and the
taint-based eviction of pods (``pkg/controller/tainteviction``).

* :class:`NodeLifecycleController` (:mod:`.controller`) watches every Node's heartbeat, the Ready
  condition's ``lastHeartbeatTime`` and its Lease in ``kube-node-lease``, by when it *saw* them
  change. A node silent for ``--node-monitor-grace-period`` has its conditions set ``Unknown``
  (``NodeStatusUnknown``, "Kubelet stopped posting node status."), its pods marked not Ready, a
  ``NodeNotReady`` event, and the taints ``node.kubernetes.io/unreachable`` (NoSchedule and
  NoExecute; ``not-ready`` for a node reporting Ready=False); a cordoned node gets
  ``node.kubernetes.io/unschedulable:NoSchedule``. Taints go again when the node is back.
* :class:`TaintEvictionController` (:mod:`.eviction`) deletes the pods of a node with NoExecute
  taints they do not tolerate at once, and those that tolerate them for ``tolerationSeconds``
  (300 s by default, from the DefaultTolerationSeconds admission) once that time has passed.
"""

from __future__ import annotations

from kplane.plugins.core.controllers.nodelifecycle.controller import NodeLifecycleController
from kplane.plugins.core.controllers.nodelifecycle.eviction import TaintEvictionController

__all__ = ["NodeLifecycleController", "TaintEvictionController"]
