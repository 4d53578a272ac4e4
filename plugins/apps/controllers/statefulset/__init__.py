"""The StatefulSet controller (kube-controller-manager's ``pkg/controller/statefulset``).

A StatefulSet runs pods with stable identities: ``<set>-<ordinal>``, each with its own claims
made from ``volumeClaimTemplates``. The package follows Kubernetes' files: ``controller``
(events, the sync, claiming pods and revisions), ``control`` (revisions, one step of pods,
rolling updates, status), ``pods`` (the writes to pods and claims, with their Events) and
``identity`` (names, labels, storage and pod states, pure).
"""

from __future__ import annotations

from kplane.plugins.apps.controllers.statefulset.controller import StatefulSetController

__all__ = ["StatefulSetController"]
