"""core/v1 Service: the wire schema and its defaulting (``pkg/apis/core/v1``).

kplane has no kube-proxy and no Endpoints: a Service is a record of an address. The API server
uses it to reach an aggregated API server named by an APIService's ``spec.service``
(:mod:`kplane.plugins.apiregistration.backends`): an ExternalName Service at ``<externalName>:<port>``, any other
at ``<clusterIP>:<port>``.
"""

from __future__ import annotations

from typing import Any

from kplane.api import ConditionSchema, ObjectMetaSchema, Schema, fields

CLIENT_IP_AFFINITY_SECONDS = 10800  # DefaultClientIPServiceAffinitySeconds
_MERGE_PORTS = {"patch_strategy": "merge", "patch_merge_key": "port", "list_type": "map", "list_map_keys": ["port", "protocol"]}


class ServicePortSchema(Schema):
    """A port the Service exposes."""

    name = fields.Str(metadata={"description": (
        "A DNS label naming the port, unique in the Service; required when the Service has more than one port."
    )})
    protocol = fields.Str(metadata={"description": "TCP, UDP or SCTP. Defaults to TCP.", "default": "TCP"})
    app_protocol = fields.Str(metadata={"description": "The application protocol, such as http or kubernetes.io/h2c."})
    port = fields.Int32(metadata={"omitempty": False, "description": "The port the Service listens on, 1-65535."})
    target_port = fields.IntOrString(metadata={"description": (
        "The port, or named container port, on the Pods behind the Service. Defaults to port."
    )})
    node_port = fields.Int32(metadata={"description": (
        "For NodePort and LoadBalancer Services: the port on every node, 30000-32767; allocated when unset."
    )})


class SessionAffinityConfigSchema(Schema):
    """Settings of ClientIP session affinity."""

    client_ip = fields.Dict(data_key="clientIP", metadata={"description": "timeoutSeconds of ClientIP affinity."})


class ServiceSpecSchema(Schema):
    """How the Service is reached."""

    ports = fields.List(fields.Nested(ServicePortSchema), metadata={**_MERGE_PORTS, "description": (
        "The ports the Service exposes. Required, except for ExternalName and headless (clusterIP None) Services."
    )})
    selector = fields.StrMap(metadata={"description": "The labels of the Pods behind the Service."})
    cluster_ip = fields.Str(data_key="clusterIP", metadata={"description": (
        "The Service's virtual IP address, allocated on create unless given; None makes the Service headless. "
        "Cannot change. kplane allocates from 10.96.0.0/12 and does not route to it: give a reachable address "
        "yourself when an APIService is to reach a server through this Service."
    )})
    cluster_ips = fields.List(fields.Str(), data_key="clusterIPs", metadata={
        "description": "clusterIP and, for dual-stack Services, the address of the other family.", "list_type": "atomic"})
    type = fields.Str(metadata={"description": "ClusterIP (the default), NodePort, LoadBalancer or ExternalName."})
    external_ips = fields.List(fields.Str(), data_key="externalIPs", metadata={
        "description": "Addresses outside the cluster that also reach the Service.", "list_type": "atomic"})
    session_affinity = fields.Str(metadata={"description": "ClientIP or None (the default)."})
    session_affinity_config = fields.Nested(SessionAffinityConfigSchema, metadata={
        "pointer": True, "description": "Settings of ClientIP affinity."})
    load_balancer_ip = fields.Str(data_key="loadBalancerIP", metadata={"description": "Deprecated: an address to ask the load balancer for."})
    external_name = fields.Str(metadata={"description": (
        "For ExternalName Services: the DNS name (or address) the Service stands for, e.g. api.example.com."
    )})
    external_traffic_policy = fields.Str(metadata={"description": "Cluster or Local, for NodePort and LoadBalancer Services."})
    internal_traffic_policy = fields.Str(metadata={"description": "Cluster (the default) or Local."})
    ip_families = fields.List(fields.Str(), metadata={"description": "IPv4 and/or IPv6.", "list_type": "atomic"})
    ip_family_policy = fields.Str(metadata={"description": "SingleStack, PreferDualStack or RequireDualStack."})
    publish_not_ready_addresses = fields.Bool(metadata={"description": "Publish the addresses of Pods that are not ready."})
    load_balancer_source_ranges = fields.List(fields.Str(), metadata={
        "description": "CIDRs a cloud load balancer lets in; others are refused.", "list_type": "atomic"})
    health_check_node_port = fields.Int32(metadata={"description": (
        "For LoadBalancer Services with externalTrafficPolicy Local: the node port load balancers health-check."
    )})
    allocate_load_balancer_node_ports = fields.Bool(metadata={"description": (
        "For LoadBalancer Services: whether node ports are allocated. Defaults to true."
    )})
    load_balancer_class = fields.Str(metadata={"description": "The load balancer implementation that handles the Service."})
    traffic_distribution = fields.Str(metadata={"description": "A preference for how traffic reaches the endpoints, e.g. PreferClose."})


class PortStatusSchema(Schema):
    """The state of one port of a load balancer address."""

    port = fields.Int32(metadata={"omitempty": False, "description": "The port number."})
    protocol = fields.Str(metadata={"omitempty": False, "description": "TCP, UDP or SCTP."})
    error = fields.Str(metadata={"description": "Why the port is not working, in CamelCase; unset when it is."})


class LoadBalancerIngressSchema(Schema):
    """One address of a load balancer."""

    ip = fields.Str(metadata={"description": "An IP address."})
    hostname = fields.Str(metadata={"description": "A DNS name."})
    ip_mode = fields.Str(metadata={"description": (
        "VIP (the default for an ip) when traffic reaches the nodes addressed to the load balancer's IP, "
        "Proxy when the load balancer rewrites it."
    )})
    ports = fields.List(fields.Nested(PortStatusSchema), metadata={"description": "The state of each port.", "list_type": "atomic"})


class LoadBalancerStatusSchema(Schema):
    """The addresses of a load balancer."""

    ingress = fields.List(fields.Nested(LoadBalancerIngressSchema), metadata={"description": "Its addresses.", "list_type": "atomic"})


class ServiceStatusSchema(Schema):
    """What was provisioned for the Service."""

    load_balancer = fields.Nested(LoadBalancerStatusSchema, metadata={"description": "The load balancer, if any."})
    conditions = fields.List(fields.Nested(ConditionSchema), metadata=fields.merge_by("type", description=(
        "The Service's current state."
    )))


class ServiceSchema(Schema):
    """A Service is a stable name and address for a set of Pods, or for a name outside the cluster (ExternalName).
    In kplane it also tells the API server where an aggregated API server named by an APIService listens.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(ServiceSpecSchema, metadata={"description": "How the Service is reached."})
    status = fields.Nested(ServiceStatusSchema, metadata={"description": "What was provisioned for it; read-only."})


def _externally_accessible(spec: dict[str, Any]) -> bool:
    """``service.ExternallyAccessible``: reachable from outside through nodes, a load balancer or external IPs."""
    return spec["type"] in ("NodePort", "LoadBalancer") or (spec["type"] == "ClusterIP" and bool(spec.get("external_ips")))


def default_service(service: dict[str, Any]) -> None:
    """``SetDefaults_Service``: type ClusterIP, no session affinity (ClientIP affinity lasts 3 hours),
    ports TCP with targetPort = port, Cluster traffic policies; a LoadBalancer allocates node
    ports and its ingress IPs are VIPs."""
    spec = service.get("spec")
    if spec is None:
        spec = service["spec"] = {}
    if not spec.get("session_affinity"):
        spec["session_affinity"] = "None"
    if spec["session_affinity"] == "None":
        spec.pop("session_affinity_config", None)
    elif spec["session_affinity"] == "ClientIP":
        client_ip = (spec.get("session_affinity_config") or {}).get("client_ip") or {}
        if client_ip.get("timeoutSeconds") is None:
            spec["session_affinity_config"] = {"client_ip": {"timeoutSeconds": CLIENT_IP_AFFINITY_SECONDS}}
    if not spec.get("type"):
        spec["type"] = "ClusterIP"
    for port in spec.get("ports") or ():
        if not port.get("protocol"):
            port["protocol"] = "TCP"
        if port.get("target_port") in (None, 0, ""):
            port["target_port"] = port.get("port")
    if _externally_accessible(spec) and not spec.get("external_traffic_policy"):
        spec["external_traffic_policy"] = "Cluster"
    if spec["type"] in ("ClusterIP", "NodePort", "LoadBalancer") and not spec.get("internal_traffic_policy"):
        spec["internal_traffic_policy"] = "Cluster"
    if spec["type"] == "LoadBalancer":
        if spec.get("allocate_load_balancer_node_ports") is None:
            spec["allocate_load_balancer_node_ports"] = True
        for ingress in ((service.get("status") or {}).get("load_balancer") or {}).get("ingress") or ():
            if ingress.get("ip") and not ingress.get("ip_mode"):
                ingress["ip_mode"] = "VIP"
