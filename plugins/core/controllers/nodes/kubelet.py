"""The pod lifecycle on simulated nodes, as their kubelets carry it out: a pod bound to one of
them first reports ContainerCreating, then, ``ready_delay`` seconds later, Running and Ready
(:mod:`.pod_status`); its containers exit after their run time (``run_seconds`` unless the pod
says otherwise) and restart with the crash-loop back-off (``restart_backoff``) as its
restartPolicy says, until it Succeeds or Fails; a pod being deleted has its containers stopped,
then is removed. A finished pod gives its IP back (its status keeps showing it, as a kubelet's)."""

from __future__ import annotations

import asyncio
import time
from typing import Any

from kplane.api import ApiError, RESTClient, WorkQueue
from kplane.api import ownership as own
from kplane.plugins.core.controllers.nodes.addresses import PodAddresses, host_ip
from kplane.plugins.core.controllers.nodes.pod_status import TERMINAL, accepted_status, running_status, stopped_status
from kplane.plugins.core.controllers.nodes.status_writer import write_status

Obj = dict[str, Any]


class Kubelets:
    """The kubelets of the ``managed`` nodes (name -> number), for the pods bound to them; a pod
    to look at again later goes back on ``queue``."""

    def __init__(self, client: RESTClient, managed: dict[str, int], queue: WorkQueue[str], *, ready_delay: float,
                 run_seconds: float, restart_backoff: float) -> None:
        self.client = client
        self.managed = managed
        self.queue = queue
        self.ready_delay = ready_delay
        self.run_seconds = run_seconds
        self.restart_backoff = restart_backoff
        self.addresses = PodAddresses()
        self._accepted: dict[str, float] = {}  # pod uid -> loop time its node accepted it

    def seen(self, pod: Obj) -> None:
        """A pod seen for the first time: one of ours keeps the IP it was given before a restart."""
        status = pod.get("status") or {}
        ip = status.get("podIP")
        if ip and own.spec(pod).get("nodeName") in self.managed and status.get("phase") not in TERMINAL:
            self.addresses.keep(own.uid(pod), ip)

    def forget(self, uid: str) -> None:
        self._accepted.pop(uid, None)
        self.addresses.release(uid)

    async def run(self, key: str, pod: Obj, node: str) -> None:
        """First accept the pod (ContainerCreating), then, ``ready_delay`` later, report it running."""
        uid = own.uid(pod)
        now = asyncio.get_running_loop().time()
        if not (pod.get("status") or {}).get("startTime"):
            self._accepted[uid] = now
            await write_status(self.client, pod, lambda p: accepted_status(p, host_ip(self.managed[node])))
            self.queue.add_after(key, self.ready_delay)
            return
        left = self._accepted.setdefault(uid, now) + self.ready_delay - now
        if left > 0:
            self.queue.add_after(key, left)
            return
        wake: float | None = None

        def running(p: Obj) -> Obj:
            nonlocal wake
            status, wake = running_status(p, self._pod_ip(p, node), now=time.time(), default_seconds=self.run_seconds,
                                          backoff=self.restart_backoff)
            return status

        await write_status(self.client, pod, running)
        if wake is not None:
            self.queue.add_after(key, max(wake, 0.01))

    def finished(self, uid: str) -> None:
        """A pod of ours Succeeded or Failed: its sandbox is gone, and with it the IP."""
        self.addresses.release(uid)

    async def terminate(self, pod: Obj, node: str) -> None:
        """A graceful deletion, as the kubelet carries it out: first stop the containers (the pod
        reports Ready=False, its containers terminated), then, once that status is stored, remove
        the pod with grace 0 and its uid as precondition (so a new pod of the same name is safe)."""
        if await write_status(self.client, pod, lambda p: stopped_status(p, default_seconds=self.run_seconds)):
            return  # the informer brings the stopped pod back, and its next sync removes it
        meta = pod["metadata"]
        options = {"kind": "DeleteOptions", "apiVersion": "v1", "gracePeriodSeconds": 0, "preconditions": {"uid": meta["uid"]}}
        try:
            await self.client.request("DELETE", f"/api/v1/namespaces/{meta['namespace']}/pods/{meta['name']}", options)
        except ApiError as err:
            if err.code not in (404, 409):  # gone already, or another pod by that name now
                raise

    def _pod_ip(self, pod: Obj, node: str) -> str:
        """The node's own address for a hostNetwork pod, else one from the node's podCIDR."""
        number = self.managed[node]
        if own.spec(pod).get("hostNetwork"):
            return host_ip(number)
        return self.addresses.assign(own.uid(pod), node, number)
