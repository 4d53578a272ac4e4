"""The system pods a cluster made by kubeadm runs in ``kube-system``, and that clients expect to
find there: CoreDNS (a Deployment of two replicas behind the ``kube-dns`` Service at 10.96.0.10,
with its ServiceAccount and Corefile ConfigMap) and kube-proxy (a DaemonSet on every node, with
its ServiceAccount and configuration ConfigMap).

They are made at start when ``ServerConfig.system_pods`` is on (``kplane serve``'s default;
``--no-system-pods`` turns it off; embedders and the test fixtures start without them), as
kubeadm's addons: each object is created if it is missing and left alone if it is there, so a
change made to them is kept, and one deleted comes back at the next start. Their pods run on the
simulated nodes like any other: nothing answers DNS and nothing proxies.
"""

from __future__ import annotations

import logging
from typing import Any

from kplane.api import APIError, Registry, RequestContext

log = logging.getLogger(__name__)

Obj = dict[str, Any]

NAMESPACE = "kube-system"
DNS_IP = "10.96.0.10"  # kubeadm's: the tenth address of the service range, what kubelets put in resolv.conf
COREDNS_IMAGE = "registry.k8s.io/coredns/coredns:v1.11.3"
KUBE_PROXY_IMAGE = "registry.k8s.io/kube-proxy:v1.32.0"  # the release whose API kplane serves
DNS_LABELS = {"k8s-app": "kube-dns"}
PROXY_LABELS = {"k8s-app": "kube-proxy"}
LINUX = {"kubernetes.io/os": "linux"}

COREFILE = """.:53 {
    errors
    health {
       lameduck 5s
    }
    ready
    kubernetes cluster.local in-addr.arpa ip6.arpa {
       pods insecure
       fallthrough in-addr.arpa ip6.arpa
       ttl 30
    }
    prometheus :9153
    forward . /etc/resolv.conf {
       max_concurrent 1000
    }
    cache 30
    loop
    reload
    loadbalance
}
"""

KUBE_PROXY_CONFIG = """apiVersion: kubeproxy.config.k8s.io/v1alpha1
kind: KubeProxyConfiguration
clusterCIDR: 10.244.0.0/16
mode: iptables
"""


def _meta(name: str, labels: dict[str, str] | None = None, **more: Any) -> Obj:
    meta: Obj = {"name": name, "namespace": NAMESPACE, **more}
    if labels:
        meta["labels"] = dict(labels)
    return meta


def coredns() -> list[tuple[str, str, Obj]]:
    """(group, plural, object) of CoreDNS, in the order they are created."""
    probe = {"initialDelaySeconds": 60, "timeoutSeconds": 5, "successThreshold": 1, "failureThreshold": 5, "periodSeconds": 10}
    container = {
        "name": "coredns", "image": COREDNS_IMAGE, "imagePullPolicy": "IfNotPresent",
        "args": ["-conf", "/etc/coredns/Corefile"],
        "resources": {"limits": {"memory": "170Mi"}, "requests": {"cpu": "100m", "memory": "70Mi"}},
        "volumeMounts": [{"name": "config-volume", "mountPath": "/etc/coredns", "readOnly": True}],
        "ports": [{"name": "dns", "containerPort": 53, "protocol": "UDP"},
                  {"name": "dns-tcp", "containerPort": 53, "protocol": "TCP"},
                  {"name": "metrics", "containerPort": 9153, "protocol": "TCP"}],
        "securityContext": {"allowPrivilegeEscalation": False, "capabilities": {"add": ["NET_BIND_SERVICE"], "drop": ["ALL"]},
                            "readOnlyRootFilesystem": True},
        "livenessProbe": {"httpGet": {"path": "/health", "port": 8080, "scheme": "HTTP"}, **probe},
        "readinessProbe": {"httpGet": {"path": "/ready", "port": 8181, "scheme": "HTTP"}},
    }
    deployment = {
        "apiVersion": "apps/v1", "kind": "Deployment", "metadata": _meta("coredns", DNS_LABELS),
        "spec": {
            "replicas": 2,
            "strategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "selector": {"matchLabels": dict(DNS_LABELS)},
            "template": {"metadata": {"labels": dict(DNS_LABELS)}, "spec": {
                "priorityClassName": "system-cluster-critical",
                "serviceAccountName": "coredns",
                "affinity": {"podAntiAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [{"weight": 100, "podAffinityTerm": {
                    "labelSelector": {"matchExpressions": [{"key": "k8s-app", "operator": "In", "values": ["kube-dns"]}]},
                    "topologyKey": "kubernetes.io/hostname"}}]}},
                "tolerations": [{"key": "CriticalAddonsOnly", "operator": "Exists"},
                                {"key": "node-role.kubernetes.io/control-plane", "effect": "NoSchedule"}],
                "nodeSelector": dict(LINUX),
                "containers": [container],
                "dnsPolicy": "Default",
                "volumes": [{"name": "config-volume", "configMap": {"name": "coredns", "items": [{"key": "Corefile", "path": "Corefile"}]}}],
            }},
        },
    }
    service = {
        "apiVersion": "v1", "kind": "Service",
        "metadata": _meta("kube-dns", {**DNS_LABELS, "kubernetes.io/cluster-service": "true", "kubernetes.io/name": "CoreDNS"},
                          annotations={"prometheus.io/port": "9153", "prometheus.io/scrape": "true"}),
        "spec": {"clusterIP": DNS_IP, "selector": dict(DNS_LABELS), "ports": [
            {"name": "dns", "port": 53, "protocol": "UDP", "targetPort": 53},
            {"name": "dns-tcp", "port": 53, "protocol": "TCP", "targetPort": 53},
            {"name": "metrics", "port": 9153, "protocol": "TCP", "targetPort": 9153},
        ]},
    }
    return [
        ("", "serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("coredns")}),
        ("", "configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("coredns"), "data": {"Corefile": COREFILE}}),
        ("apps", "deployments", deployment),
        ("", "services", service),
    ]


def kube_proxy() -> list[tuple[str, str, Obj]]:
    """(group, plural, object) of kube-proxy, in the order they are created."""
    container = {
        "name": "kube-proxy", "image": KUBE_PROXY_IMAGE, "imagePullPolicy": "IfNotPresent",
        "command": ["/usr/local/bin/kube-proxy", "--config=/var/lib/kube-proxy/config.conf", "--hostname-override=$(NODE_NAME)"],
        "env": [{"name": "NODE_NAME", "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": "spec.nodeName"}}}],
        "securityContext": {"privileged": True},
        "volumeMounts": [{"name": "kube-proxy", "mountPath": "/var/lib/kube-proxy"},
                         {"name": "xtables-lock", "mountPath": "/run/xtables.lock"},
                         {"name": "lib-modules", "mountPath": "/lib/modules", "readOnly": True}],
    }
    daemon_set = {
        "apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": _meta("kube-proxy", PROXY_LABELS),
        "spec": {
            "selector": {"matchLabels": dict(PROXY_LABELS)},
            "updateStrategy": {"type": "RollingUpdate", "rollingUpdate": {"maxUnavailable": 1}},
            "template": {"metadata": {"labels": dict(PROXY_LABELS)}, "spec": {
                "priorityClassName": "system-node-critical",
                "hostNetwork": True,
                "serviceAccountName": "kube-proxy",
                "nodeSelector": dict(LINUX),
                "tolerations": [{"operator": "Exists"}],
                "containers": [container],
                "volumes": [
                    {"name": "kube-proxy", "configMap": {"name": "kube-proxy"}},
                    {"name": "xtables-lock", "hostPath": {"path": "/run/xtables.lock", "type": "FileOrCreate"}},
                    {"name": "lib-modules", "hostPath": {"path": "/lib/modules", "type": ""}},
                ],
            }},
        },
    }
    return [
        ("", "serviceaccounts", {"apiVersion": "v1", "kind": "ServiceAccount", "metadata": _meta("kube-proxy")}),
        ("", "configmaps", {"apiVersion": "v1", "kind": "ConfigMap", "metadata": _meta("kube-proxy", PROXY_LABELS),
                            "data": {"config.conf": KUBE_PROXY_CONFIG}}),
        ("apps", "daemonsets", daemon_set),
    ]


async def ensure(registry: Registry) -> None:
    """Create each system object that is missing; another server on the same storage may win."""
    namespaces = registry.store("", "namespaces") if registry.scheme.get("", "namespaces") is not None else None
    if namespaces is None or await namespaces.get_internal("", NAMESPACE) is None:
        log.warning("system pods: namespace %s is not there; none made", NAMESPACE)
        return
    for group, plural, wire in [*coredns(), *kube_proxy()]:
        rt = registry.scheme.get(group, plural)
        if rt is None:
            continue  # its kind is not served here (the core plugin left out)
        store = registry.store(group, plural)
        name = wire["metadata"]["name"]
        if await store.get_internal(NAMESPACE, name) is not None:
            continue
        obj, _ = rt.decode(wire, "v1")
        try:
            await store.create(RequestContext(namespace=NAMESPACE, resource=plural, name=name), obj)
        except APIError as err:
            if err.code != 409:
                raise
