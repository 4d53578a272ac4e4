"""The daemon set controller (kube-controller-manager's ``pkg/controller/daemon``): one pod of
each DaemonSet on every node that should run it, kept at the current template.

* :mod:`.placement`: which nodes should run the pod (template nodeName, nodeSelector, required
  node affinity, taints against the template's tolerations plus the daemon defaults), the pod
  pinned to its node by a ``matchFields metadata.name`` affinity term, and what to create or
  delete on each node;
* :mod:`.rolling`: the RollingUpdate strategy (maxUnavailable, or maxSurge); OnDelete replaces a
  pod only once it is deleted;
* :mod:`.revisions`: one ControllerRevision per template run (``kubectl rollout history/undo``);
* :mod:`.status`: the counters ``kubectl get ds`` and ``kubectl rollout status`` read;
* :mod:`.controller`: informers, expectations, events and the sync.
"""

from __future__ import annotations

from kplane.plugins.apps.controllers.daemonset.controller import DaemonSetController

__all__ = ["DaemonSetController"]
