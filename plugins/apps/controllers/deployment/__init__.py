"""The Deployment controller (kube-controller-manager's ``pkg/controller/deployment``).

A Deployment rolls its pods out through ReplicaSets, one per pod template it has had: the
*new* ReplicaSet runs the current template, the *old* ones the earlier templates. A sync of one
Deployment, from the informer caches:

1. claims its ReplicaSets: adopts orphans its selector matches and releases those it controls
   that no longer match (merge patches guarded by the ReplicaSet's resourceVersion);
2. finds the new ReplicaSet, the oldest one whose template equals the Deployment's once the
   ``pod-template-hash`` label and defaulted empties (``creationTimestamp: null``,
   ``resources: {}``) are left out, so ``kubectl rollout undo`` reuses the old ReplicaSet; it
   stamps it with the next revision (``deployment.kubernetes.io/revision``) and copies the
   revision to the Deployment;
3. then, in k8s' order: a paused Deployment or a change of ``spec.replicas`` only scales
   (proportionally across the active ReplicaSets mid-rollout); otherwise the strategy rolls out:
   RollingUpdate creates the new ReplicaSet ``<deployment>-<hash>`` and moves pods over within
   ``maxSurge``/``maxUnavailable``; Recreate scales the old ones to 0, waits until their pods are
   gone, then scales the new one up; once complete, old ReplicaSets beyond
   ``revisionHistoryLimit`` are deleted;
4. writes ``status`` when it changed: counters, observedGeneration, and the Available and
   Progressing conditions (Progressing times out ``progressDeadlineSeconds`` after its
   lastUpdateTime, and the Deployment is requeued to notice it).

Every write to a ReplicaSet or the Deployment carries the resourceVersion the sync read, so a
sync that acted on a stale cache fails with a conflict and runs again on fresher copies. Scaling
events ("Scaled up replica set web-6d4f8 from 0 to 3") are what ``kubectl describe`` shows.

The package follows Kubernetes' files: ``controller`` (events, the sync, claiming), ``sync``
(the new ReplicaSet, scaling, cleanup, status writes), ``rolling`` and ``recreate`` (the two
strategies), ``progress`` (the Progressing condition and its deadline), and the pure parts:
``status`` (status and conditions computed), ``scaling`` (replica arithmetic), ``revisions``
(revisions and template hashes), ``objects`` (reading the wire form).
"""

from __future__ import annotations

from kplane.plugins.apps.controllers.deployment.controller import DeploymentController

__all__ = ["DeploymentController"]
