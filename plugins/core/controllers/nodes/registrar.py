"""The kubelets' part that concerns Nodes: register each simulated Node with capacity, a Ready
condition, addresses and node info, and renew its heartbeat (the Ready condition's
``lastHeartbeatTime`` and the node's Lease in ``kube-node-lease``, held by the node and owned by
its Node); a deleted Node registers again.

A test stops one simulated kubelet, as if its machine went away, by annotating its Node
``kplane.io/simulated-kubelet: stopped`` (``kubectl annotate node kplane-node-2
kplane.io/simulated-kubelet=stopped``): from then on nothing renews its heartbeat or Lease, and its
pods are left as they are (the node lifecycle controller then marks the Node ``Ready=Unknown`` and
taints it); removing the annotation starts it again."""

from __future__ import annotations

import asyncio
import logging
import uuid
from collections.abc import Callable
from typing import Any

import aiohttp

from kplane.api import STRATEGIC_MERGE_PATCH, ApiError, RESTClient, clock, micro_time
from kplane.plugins.core.controllers.nodes.addresses import host_ip, pod_cidr

log = logging.getLogger(__name__)
Obj = dict[str, Any]

SIMULATED_LABEL = "kplane.io/simulated-node"
KUBELET_ANNOTATION, STOPPED = "kplane.io/simulated-kubelet", "stopped"
LEASE_NAMESPACE = "kube-node-lease"
LEASE_DURATION = 40  # seconds, the kubelet's --node-lease-duration-seconds
CAPACITY = {"cpu": "8", "memory": "32Gi", "pods": "110", "ephemeral-storage": "100Gi"}
KUBELET_PORT = 10250
NODE_CONDITIONS = (  # type, status, reason, message: what a healthy kubelet reports
    ("MemoryPressure", "False", "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
    ("DiskPressure", "False", "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
    ("PIDPressure", "False", "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
    ("Ready", "True", "KubeletReady", "kubelet is posting ready status"),
)


class NodeRegistrar:
    """Registers the ``managed`` Nodes (name -> number) and keeps them alive, as their kubelets would."""

    def __init__(self, client: RESTClient, managed: dict[str, int], stopped: Callable[[str], bool] = lambda name: False) -> None:
        self.client = client
        self.managed = managed
        self.stopped = stopped  # whether a node's kubelet is stopped (see the module's docstring)
        self.nodes = client.resource("", "v1", "nodes")
        self.leases = client.resource("coordination.k8s.io", "v1", "leases", LEASE_NAMESPACE)
        self.kubelet_version = "v0.0.0"
        self._boot_id = str(uuid.uuid4())

    async def register_all(self) -> None:
        """Create the Nodes (or report them Ready again, after a restart), retrying until it works."""
        self.kubelet_version = await self._server_version()
        while True:
            try:
                for name in self.managed:
                    await self._register(name)
                    await self._renew_lease(name)
                return
            except (ApiError, aiohttp.ClientError) as err:
                log.warning("simulated nodes: registration failed (%s); retrying", err)
                await asyncio.sleep(1.0)

    async def heartbeat(self) -> None:
        """Renew each Node's conditions, as a kubelet's status update does, and its Lease;
        re-register deleted Nodes. A stopped kubelet does neither."""
        now = clock.now()
        conditions = [{"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": now} for t, s, r, m in NODE_CONDITIONS]
        for name in self.managed:
            if self.stopped(name):
                continue
            try:
                await self._renew_lease(name)
                await self.nodes.patch(name, {"status": {"conditions": conditions}}, content_type=STRATEGIC_MERGE_PATCH, subresource="status")
            except ApiError as err:
                if err.code != 404:
                    log.warning("simulated node %s: heartbeat failed: %s", name, err)
                    continue
                try:
                    await self._register(name)
                except ApiError as again:
                    log.warning("simulated node %s: registration failed: %s", name, again)
            except aiohttp.ClientError as err:
                log.warning("simulated node %s: heartbeat failed: %s", name, err)

    async def _renew_lease(self, name: str) -> None:
        """The node's Lease, renewed now: created (owned by its Node) when missing."""
        now = micro_time()
        try:
            lease = await self.leases.get(name)
        except ApiError as err:
            if err.code != 404:
                raise
            node = await self.nodes.get(name)
            owner = {"apiVersion": "v1", "kind": "Node", "name": name, "uid": node["metadata"]["uid"]}
            await self.leases.create({"apiVersion": "coordination.k8s.io/v1", "kind": "Lease",
                                      "metadata": {"name": name, "namespace": LEASE_NAMESPACE, "ownerReferences": [owner]},
                                      "spec": {"holderIdentity": name, "leaseDurationSeconds": LEASE_DURATION, "renewTime": now}})
            return
        lease["spec"] = {**(lease.get("spec") or {}), "holderIdentity": name, "leaseDurationSeconds": LEASE_DURATION, "renewTime": now}
        await self.leases.update(lease)

    async def _server_version(self) -> str:
        """The server's version, as a kubelet of the same release would report."""
        try:
            return str((await self.client.request("GET", "/version"))["gitVersion"])
        except (ApiError, aiohttp.ClientError, KeyError, TypeError):
            return "v0.0.0"

    async def _register(self, name: str) -> None:
        node = self._node(name)
        try:
            await self.nodes.create(node)
        except ApiError as err:
            if err.code != 409:
                raise
            await self.nodes.patch(name, {"status": node["status"]}, content_type=STRATEGIC_MERGE_PATCH, subresource="status")

    def _node(self, name: str) -> Obj:
        number = self.managed[name]
        cidr = pod_cidr(number)
        now = clock.now()
        machine = uuid.uuid5(uuid.NAMESPACE_DNS, f"{name}.kplane")
        return {
            "apiVersion": "v1",
            "kind": "Node",
            "metadata": {"name": name, "labels": {
                "kubernetes.io/hostname": name, "kubernetes.io/os": "linux", "kubernetes.io/arch": "amd64",
                "beta.kubernetes.io/os": "linux", "beta.kubernetes.io/arch": "amd64", SIMULATED_LABEL: "true",
            }},
            "spec": {"podCIDR": cidr, "podCIDRs": [cidr], "providerID": f"kplane://{name}"},
            "status": {
                "capacity": dict(CAPACITY),
                "allocatable": dict(CAPACITY),
                "conditions": [
                    {"type": t, "status": s, "reason": r, "message": m, "lastHeartbeatTime": now, "lastTransitionTime": now}
                    for t, s, r, m in NODE_CONDITIONS
                ],
                "addresses": [{"type": "InternalIP", "address": host_ip(number)}, {"type": "Hostname", "address": name}],
                "daemonEndpoints": {"kubeletEndpoint": {"Port": KUBELET_PORT}},
                "nodeInfo": {
                    "machineID": machine.hex, "systemUUID": str(machine), "bootID": self._boot_id,
                    "kernelVersion": "6.8.0-kplane", "osImage": "kplane simulated node", "containerRuntimeVersion": "kplane://1.0.0",
                    "kubeletVersion": self.kubelet_version, "kubeProxyVersion": "", "operatingSystem": "linux", "architecture": "amd64",
                },
            },
        }
