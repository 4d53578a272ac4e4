"""Internal types of the core group: Namespace, Pod, Event, ConfigMap, Secret, ServiceAccount, Node
(and Binding, the body of pods/binding).

Deep structures nobody on the server reads (probes, affinity, volume sources, security contexts)
are kept as plain dicts: they round-trip exactly, and a later change can type them when a
strategy needs to look inside.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from kplane.api import ObjectMeta

Raw = dict[str, Any]


@dataclass(slots=True)
class ObjectReference:
    kind: str | None = None
    namespace: str | None = None
    name: str | None = None
    uid: str | None = None
    api_version: str | None = None
    resource_version: str | None = None
    field_path: str | None = None


@dataclass(slots=True)
class LocalObjectReference:
    name: str | None = None


# -- Namespace ---------------------------------------------------------------------------------
@dataclass(slots=True)
class NamespaceCondition:
    type: str = ""
    status: str = ""
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class NamespaceSpec:
    finalizers: list[str] | None = None


@dataclass(slots=True)
class NamespaceStatus:
    phase: str | None = None
    conditions: list[NamespaceCondition] | None = None


@dataclass(slots=True)
class Namespace:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: NamespaceSpec = field(default_factory=NamespaceSpec)
    status: NamespaceStatus = field(default_factory=NamespaceStatus)


# -- Pod ---------------------------------------------------------------------------------------
@dataclass(slots=True)
class ContainerPort:
    name: str | None = None
    host_port: int | None = None
    container_port: int | None = None
    protocol: str | None = None
    host_ip: str | None = None


@dataclass(slots=True)
class EnvVar:
    name: str = ""
    value: str | None = None
    value_from: Raw | None = None


@dataclass(slots=True)
class VolumeMount:
    name: str = ""
    read_only: bool | None = None
    recursive_read_only: str | None = None
    mount_path: str = ""
    sub_path: str | None = None
    mount_propagation: str | None = None
    sub_path_expr: str | None = None


@dataclass(slots=True)
class ResourceRequirements:
    limits: dict[str, Any] | None = None
    requests: dict[str, Any] | None = None
    claims: list[Raw] | None = None


@dataclass(slots=True)
class Container:
    name: str = ""
    image: str | None = None
    command: list[str] | None = None
    args: list[str] | None = None
    working_dir: str | None = None
    ports: list[ContainerPort] | None = None
    env_from: list[Raw] | None = None
    env: list[EnvVar] | None = None
    resources: ResourceRequirements | None = None
    resize_policy: list[Raw] | None = None
    restart_policy: str | None = None
    volume_mounts: list[VolumeMount] | None = None
    volume_devices: list[Raw] | None = None
    liveness_probe: Raw | None = None
    readiness_probe: Raw | None = None
    startup_probe: Raw | None = None
    lifecycle: Raw | None = None
    termination_message_path: str | None = None
    termination_message_policy: str | None = None
    image_pull_policy: str | None = None
    security_context: Raw | None = None
    stdin: bool | None = None
    stdin_once: bool | None = None
    tty: bool | None = None


@dataclass(slots=True)
class PodSpec:
    volumes: list[Raw] | None = None
    init_containers: list[Container] | None = None
    containers: list[Container] | None = None
    ephemeral_containers: list[Raw] | None = None
    restart_policy: str | None = None
    termination_grace_period_seconds: int | None = None
    active_deadline_seconds: int | None = None
    dns_policy: str | None = None
    node_selector: dict[str, str] | None = None
    service_account_name: str | None = None
    service_account: str | None = None
    automount_service_account_token: bool | None = None
    node_name: str | None = None
    host_network: bool | None = None
    host_pid: bool | None = None
    host_ipc: bool | None = None
    share_process_namespace: bool | None = None
    security_context: Raw | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    hostname: str | None = None
    subdomain: str | None = None
    affinity: Raw | None = None
    scheduler_name: str | None = None
    tolerations: list[Raw] | None = None
    host_aliases: list[Raw] | None = None
    priority_class_name: str | None = None
    priority: int | None = None
    dns_config: Raw | None = None
    readiness_gates: list[Raw] | None = None
    runtime_class_name: str | None = None
    enable_service_links: bool | None = None
    preemption_policy: str | None = None
    overhead: dict[str, Any] | None = None
    topology_spread_constraints: list[Raw] | None = None
    set_hostname_as_fqdn: bool | None = None
    os: Raw | None = None
    host_users: bool | None = None
    scheduling_gates: list[Raw] | None = None
    resource_claims: list[Raw] | None = None


@dataclass(slots=True)
class PodCondition:
    type: str = ""
    status: str = ""
    observed_generation: int | None = None
    last_probe_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class PodStatus:
    observed_generation: int | None = None
    phase: str | None = None
    conditions: list[PodCondition] | None = None
    message: str | None = None
    reason: str | None = None
    nominated_node_name: str | None = None
    host_ip: str | None = None
    host_ips: list[Raw] | None = None
    pod_ip: str | None = None
    pod_ips: list[Raw] | None = None
    start_time: str | None = None
    init_container_statuses: list[Raw] | None = None
    container_statuses: list[Raw] | None = None
    qos_class: str | None = None
    ephemeral_container_statuses: list[Raw] | None = None
    resize: str | None = None
    resource_claim_statuses: list[Raw] | None = None


@dataclass(slots=True)
class Pod:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodSpec = field(default_factory=PodSpec)
    status: PodStatus = field(default_factory=PodStatus)


@dataclass(slots=True)
class PodTemplateSpec:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: PodSpec = field(default_factory=PodSpec)


# -- Event -------------------------------------------------------------------------------------
@dataclass(slots=True)
class EventSource:
    component: str | None = None
    host: str | None = None


@dataclass(slots=True)
class Event:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    involved_object: ObjectReference = field(default_factory=ObjectReference)
    reason: str | None = None
    message: str | None = None
    source: EventSource | None = None
    first_timestamp: str | None = None
    last_timestamp: str | None = None
    count: int | None = None
    type: str | None = None
    event_time: str | None = None
    series: Raw | None = None
    action: str | None = None
    related: ObjectReference | None = None
    reporting_component: str | None = None
    reporting_instance: str | None = None


# -- ConfigMap, Secret, ServiceAccount ---------------------------------------------------------
@dataclass(slots=True)
class ConfigMap:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    immutable: bool | None = None
    data: dict[str, str] | None = None
    binary_data: dict[str, str] | None = None


@dataclass(slots=True)
class Secret:
    """Internally a Secret has only ``data``: ``stringData`` is folded in by the v1 conversion."""

    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    immutable: bool | None = None
    data: dict[str, str] | None = None
    type: str | None = None


@dataclass(slots=True)
class ServiceAccount:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    secrets: list[ObjectReference] | None = None
    image_pull_secrets: list[LocalObjectReference] | None = None
    automount_service_account_token: bool | None = None


# -- Node --------------------------------------------------------------------------------------
@dataclass(slots=True)
class Taint:
    key: str = ""
    value: str | None = None
    effect: str = ""
    time_added: str | None = None


@dataclass(slots=True)
class NodeSpec:
    pod_cidr: str | None = None
    pod_cidrs: list[str] | None = None
    provider_id: str | None = None
    unschedulable: bool | None = None
    taints: list[Taint] | None = None
    config_source: Raw | None = None
    external_id: str | None = None


@dataclass(slots=True)
class NodeCondition:
    type: str = ""
    status: str = ""
    last_heartbeat_time: str | None = None
    last_transition_time: str | None = None
    reason: str | None = None
    message: str | None = None


@dataclass(slots=True)
class NodeAddress:
    type: str = ""
    address: str = ""


@dataclass(slots=True)
class DaemonEndpoint:
    port: int = 0


@dataclass(slots=True)
class NodeDaemonEndpoints:
    kubelet_endpoint: DaemonEndpoint | None = None


@dataclass(slots=True)
class NodeSystemInfo:
    machine_id: str = ""
    system_uuid: str = ""
    boot_id: str = ""
    kernel_version: str = ""
    os_image: str = ""
    container_runtime_version: str = ""
    kubelet_version: str = ""
    kube_proxy_version: str = ""
    operating_system: str = ""
    architecture: str = ""
    swap: Raw | None = None


@dataclass(slots=True)
class ContainerImage:
    names: list[str] | None = None
    size_bytes: int | None = None


@dataclass(slots=True)
class NodeStatus:
    capacity: dict[str, Any] | None = None
    allocatable: dict[str, Any] | None = None
    phase: str | None = None
    conditions: list[NodeCondition] | None = None
    addresses: list[NodeAddress] | None = None
    daemon_endpoints: NodeDaemonEndpoints | None = None
    node_info: NodeSystemInfo | None = None
    images: list[ContainerImage] | None = None
    volumes_in_use: list[str] | None = None
    volumes_attached: list[Raw] | None = None
    config: Raw | None = None
    runtime_handlers: list[Raw] | None = None
    features: Raw | None = None


@dataclass(slots=True)
class Node:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    spec: NodeSpec = field(default_factory=NodeSpec)
    status: NodeStatus = field(default_factory=NodeStatus)


# -- Binding (the body of pods/binding, not a stored kind) -------------------------------------
@dataclass(slots=True)
class Binding:
    metadata: ObjectMeta = field(default_factory=ObjectMeta)
    target: ObjectReference = field(default_factory=ObjectReference)
