"""Simulated nodes, like kwok: Nodes with no machine behind them, so Pods get scheduled and "run".

Without kubelets, every Pod would stay Pending forever and nothing built on readiness (ReplicaSet
status, rollouts, ``kubectl wait``) could be tried. :class:`SimulatedNodes` (:mod:`.controller`)
plays three parts, all through the API like the real components:

* the **kubelets' Nodes** (:mod:`.registrar`): it registers ``count`` Nodes (``kplane-node-1`` ...)
  with capacity, a Ready condition, an InternalIP ``10.244.0.<n>`` and node info, and renews their
  heartbeats;
* the **scheduler** (:mod:`.scheduler`, :mod:`.predicates`): a Pending pod without
  ``spec.nodeName`` (and for ``default-scheduler``) is bound, through ``pods/binding``, to the
  fitting Node with the fewest pods. A Node fits when it is Ready, not cordoned, matches the pod's
  nodeSelector and required node affinity (label expressions, ``matchFields`` on ``metadata.name``),
  has no taint the pod does not tolerate, and has room;
* the **kubelets' pod lifecycle** (:mod:`.kubelet`, :mod:`.pod_status`): a pod bound to one of
  these Nodes first reports ContainerCreating, then, ``ready_delay`` seconds later, Running and
  Ready with container statuses, a pod IP from the node's podCIDR (``10.244.<n>.0/24``,
  :mod:`.addresses`), hostIP and startTime; deleted, its containers stop before it goes.

Nothing is ever contacted: the addresses are made up. A container whose image contains ``:fail``
(``nginx:fail``, ``busybox:fail-1``) never starts: it waits with reason ImagePullBackOff, and its pod
stays Pending and not Ready, to try out failure paths.
"""

from __future__ import annotations

from kplane.plugins.core.controllers.nodes.controller import SimulatedNodes

__all__ = ["SimulatedNodes"]
