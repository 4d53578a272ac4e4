"""The ``default/kubernetes`` Service: how Pods and clients find the API server
(kube-apiserver's ``kubernetesservice`` controller, ``pkg/controlplane/controller``).

kube-apiserver creates it at start with the first address of the service range (10.96.0.1),
one port ``https`` 443 whose targetPort is the server's own port, no selector, and the labels
``component: apiserver`` and ``provider: kubernetes``; when it exists with other ports (the
server restarted on another port) they are put back. Clients such as kr8s and Kubernetes'
``test/cmd`` scripts look it up by name.
"""

from __future__ import annotations

from typing import Any
from urllib.parse import urlsplit

from kplane.api import APIError, Registry, RequestContext, ResourceType
from kplane.plugins.core.services import SERVICE_CIDR

NAMESPACE = "default"
NAME = "kubernetes"
LABELS = {"component": "apiserver", "provider": "kubernetes"}


def service_ports(server_url: str) -> list[dict[str, Any]]:
    """The Service's ports: 443 in front of the port the server listens on."""
    port = urlsplit(server_url).port or 443
    return [{"name": "https", "protocol": "TCP", "port": 443, "targetPort": port}]


def desired(server_url: str) -> dict[str, Any]:
    return {
        "apiVersion": "v1", "kind": "Service",
        "metadata": {"name": NAME, "namespace": NAMESPACE, "labels": dict(LABELS)},
        "spec": {"type": "ClusterIP", "clusterIP": str(SERVICE_CIDR[1]), "sessionAffinity": "None",
                 "ports": service_ports(server_url)},
    }


async def ensure(registry: Registry, server_url: str) -> None:
    """Create the Service, or put its ports back; another server on the same storage may win."""
    rt = registry.scheme.get("", "services")
    if rt is None:
        return
    store = registry.store("", "services")
    ctx = RequestContext(namespace=NAMESPACE, resource="services", name=NAME)
    wanted, _ = rt.decode(desired(server_url), "v1")
    current = await store.get_internal(NAMESPACE, NAME)
    try:
        if current is None:
            await store.create(ctx, wanted)
        elif _ports(rt, current) != _ports(rt, wanted):
            async def put_ports_back(old: Any) -> Any:
                current = rt.encode(old, "v1")
                current["spec"]["ports"] = _ports(rt, wanted)
                return rt.decode(current, "v1")[0]

            await store.update(ctx, NAME, put_ports_back)
    except APIError as err:  # 409: another server created or changed it first
        if err.code != 409:
            raise


def _ports(rt: ResourceType, service: Any) -> Any:
    return rt.encode(service, "v1")["spec"].get("ports")

