"""The simulated containers: what a container on a simulated node "runs", writes and answers.

Nothing here ever runs on the host. A container's behaviour is a function of its Pod: the
kubelet (:mod:`kplane.plugins.core.controllers.nodes`) asks :func:`.process.main_process` when
the main process exits and how, and the API server's streaming subresources (``pods/log``,
``exec``, ``attach``, ``portforward``) answer from the same description. The conventions are in
``docs/workloads.md`` (Simulated containers).
"""
