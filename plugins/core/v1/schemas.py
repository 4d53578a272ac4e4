"""Wire schemas of core/v1, with Kubernetes' field names."""

from __future__ import annotations

from kplane.api import ObjectMetaSchema, Schema, fields


class ObjectReferenceSchema(Schema):
    """Points at another object, or at a part of it."""

    kind = fields.Str(metadata={"description": "Kind of the object."})
    namespace = fields.Str(metadata={"description": "Namespace of the object; empty for cluster-scoped kinds."})
    name = fields.Str(metadata={"description": "Name of the object."})
    uid = fields.Str(metadata={"description": "UID of the object."})
    api_version = fields.Str(metadata={"description": "API version of the object."})
    resource_version = fields.Str(metadata={"description": "The object's resourceVersion when the reference was made."})
    field_path = fields.Str(metadata={"description": (
        "The part of the object meant, when not the whole of it, e.g. spec.containers{web} for one container."
    )})


class LocalObjectReferenceSchema(Schema):
    """Names an object in the same namespace."""

    name = fields.Str(metadata={"description": "Name of the object."})


# -- Namespace ---------------------------------------------------------------------------------
class NamespaceConditionSchema(Schema):
    """One aspect of a Namespace's state at a point in time."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect, such as NamespaceDeletionContentFailure."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_transition_time = fields.Time(metadata={"omitempty": False, "description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class NamespaceSpecSchema(Schema):
    """The desired state of a Namespace."""

    finalizers = fields.List(fields.Str(), metadata={"description": (
        "Cleanups to finish before the namespace is removed. The namespace controller removes kubernetes once "
        "everything in the namespace is gone."
    )})


class NamespaceStatusSchema(Schema):
    """The observed state of a Namespace."""

    phase = fields.Str(metadata={"description": "Active, or Terminating once deletion was requested."})
    conditions = fields.List(fields.Nested(NamespaceConditionSchema), metadata=fields.merge_by("type", description=(
        "The latest observations of the namespace's state, such as problems emptying it."
    )))


class NamespaceSchema(Schema):
    """A Namespace is a scope for names: every object of a namespaced kind lives in exactly one, and deleting a
    namespace deletes everything in it.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(NamespaceSpecSchema, metadata={"description": (
        "The desired state: the finalizers that must run before the namespace goes."
    )})
    status = fields.Nested(NamespaceStatusSchema, metadata={"description": (
        "The observed state: whether the namespace is active or being deleted."
    )})


# -- Pod ---------------------------------------------------------------------------------------
class ContainerPortSchema(Schema):
    """A network port a container listens on."""

    name = fields.Str(metadata={"description": (
        "A name for the port, unique in the Pod, that Services can refer to: up to 15 lowercase letters, "
        "digits and dashes."
    )})
    host_port = fields.Int32(metadata={"description": "A port on the node to expose it on as well. Rarely needed."})
    container_port = fields.Int32(metadata={"omitempty": False, "description": "Port number on the Pod's IP address, from 1 to 65535."})
    protocol = fields.Str(metadata={"description": "TCP, UDP or SCTP. Defaults to TCP.", "default": "TCP"})
    host_ip = fields.Str(data_key="hostIP", metadata={"description": "The node IP address to bind hostPort to."})


class EnvVarSchema(Schema):
    """An environment variable of a container."""

    name = fields.Str(metadata={"omitempty": False, "description": "Name of the variable."})
    value = fields.Str(metadata={"description": (
        "The value. References to earlier variables, $(VAR), are expanded; $$(VAR) is left as $(VAR)."
    )})
    value_from = fields.Dict(metadata={"description": (
        "Where to take the value from instead: a field of the Pod, a resource of a container, or a key of a "
        "ConfigMap or Secret."
    )})


class VolumeMountSchema(Schema):
    """Where a volume of the Pod appears in a container's filesystem."""

    name = fields.Str(metadata={"omitempty": False, "description": "Name of a volume of the Pod."})
    read_only = fields.Bool(metadata={"description": "Mount the volume read-only. Defaults to false."})
    recursive_read_only = fields.Str(metadata={"description": (
        "Whether read-only also applies to mounts below this one: Disabled, IfPossible or Enabled."
    )})
    mount_path = fields.Str(metadata={"omitempty": False, "description": "Path in the container to mount at; must not contain ':'."})
    sub_path = fields.Str(metadata={"description": "A path inside the volume to mount instead of its root."})
    mount_propagation = fields.Str(metadata={"description": (
        "Whether mounts made later propagate between the host and the container: None, HostToContainer or "
        "Bidirectional."
    )})
    sub_path_expr = fields.Str(metadata={"description": (
        "Like subPath, with $(VAR) references to the container's environment expanded."
    )})


class ResourceRequirementsSchema(Schema):
    """The compute resources a container asks for and may not exceed."""

    limits = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "The most of each resource the container may use, e.g. cpu: 500m, memory: 1Gi."
    )})
    requests = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "How much of each resource the scheduler sets aside for the container. Defaults to limits for "
        "resources that only have a limit."
    )})
    claims = fields.List(fields.Dict(), metadata={"description": (
        "Which of the Pod's resourceClaims this container uses."
    )})


class ContainerSchema(Schema):
    """One container of a Pod: the image to run and how to run it."""

    name = fields.Str(metadata={"omitempty": False, "description": (
        "Name of the container, unique in the Pod (a DNS label). Cannot be changed."
    )})
    image = fields.Str(metadata={"description": (
        "The container image, e.g. nginx:1.25 or registry.example.com/team/app@sha256:..."
    )})
    command = fields.List(fields.Str(), metadata={"description": (
        "Replaces the image's ENTRYPOINT. It is not run in a shell; $(VAR) references to the container's "
        "environment are expanded."
    )})
    args = fields.List(fields.Str(), metadata={"description": (
        "Replace the image's CMD as the arguments of the entrypoint; $(VAR) references are expanded."
    )})
    working_dir = fields.Str(metadata={"description": "The directory the command runs in. Defaults to the image's."})
    ports = fields.List(fields.Nested(ContainerPortSchema), metadata=fields.merge_by("containerPort", list_map_keys=["containerPort", "protocol"], description=(
        "Ports the container listens on. Informational: a port not listed here is reachable all the same."
    )))
    env_from = fields.List(fields.Dict(), metadata={"description": (
        "ConfigMaps and Secrets whose keys all become environment variables."
    )})
    env = fields.List(fields.Nested(EnvVarSchema), metadata=fields.merge_by("name", description=(
        "Environment variables to set; they take precedence over envFrom."
    )))
    resources = fields.Nested(ResourceRequirementsSchema, metadata={"description": (
        "The CPU, memory and other resources the container requests and is limited to."
    )})
    resize_policy = fields.List(fields.Dict(), metadata={"description": (
        "For each resource, whether changing it in place restarts the container."
    )})
    restart_policy = fields.Str(metadata={"description": (
        "Init containers only: Always turns the init container into a sidecar that keeps running beside the "
        "main containers."
    )})
    volume_mounts = fields.List(fields.Nested(VolumeMountSchema), metadata=fields.merge_by("mountPath", description=(
        "Volumes of the Pod to mount into the container's filesystem."
    )))
    volume_devices = fields.List(fields.Dict(), metadata=fields.merge_by("devicePath", description=(
        "Block volumes of the Pod to expose to the container as devices."
    )))
    liveness_probe = fields.Dict(metadata={"description": (
        "A check that the container still works; the container is restarted when it fails."
    )})
    readiness_probe = fields.Dict(metadata={"description": (
        "A check that the container can serve; while it fails, the Pod is not Ready and Services send it no "
        "traffic."
    )})
    startup_probe = fields.Dict(metadata={"description": (
        "A check that the container has finished starting; the other probes wait until it succeeds."
    )})
    lifecycle = fields.Dict(metadata={"description": (
        "Actions run right after the container starts and right before it is stopped."
    )})
    termination_message_path = fields.Str(metadata={"description": (
        "A file whose contents become the container's termination message. Defaults to /dev/termination-log."
    )})
    termination_message_policy = fields.Str(metadata={"description": (
        "File, or FallbackToLogsOnError to use the end of the log when the container failed and the file is "
        "empty."
    )})
    image_pull_policy = fields.Str(metadata={"description": (
        "Always, Never or IfNotPresent. Defaults to Always for the latest tag or no tag, and to IfNotPresent "
        "otherwise."
    )})
    security_context = fields.Dict(metadata={"description": (
        "Privileges and access controls of this container; they override the Pod's."
    )})
    stdin = fields.Bool(metadata={"description": "Keep a standard input open for the container."})
    stdin_once = fields.Bool(metadata={"description": (
        "Close standard input after the first client attached to it disconnects."
    )})
    tty = fields.Bool(metadata={"description": "Give the container a terminal; needs stdin."})


class PodSpecSchema(Schema):
    """The desired state of a Pod: its containers, its volumes, and where and how it may run."""

    volumes = fields.List(fields.Dict(), metadata=fields.merge_by("name", retain_keys=True, description=(
        "Volumes the containers of the Pod can mount."
    )))
    init_containers = fields.List(fields.Nested(ContainerSchema), metadata=fields.merge_by("name", description=(
        "Containers run one after the other, each to completion, before the main containers start."
    )))
    containers = fields.List(fields.Nested(ContainerSchema), metadata=fields.merge_by("name", omitempty=False, description=(
        "The containers of the Pod; at least one. None can be added or removed after creation."
    )))
    ephemeral_containers = fields.List(fields.Dict(), metadata=fields.merge_by("name", description=(
        "Containers added to a running Pod, for debugging, through the ephemeralcontainers subresource."
    )))
    restart_policy = fields.Str(metadata={"description": (
        "Always, OnFailure or Never: whether a container that exits is started again. Defaults to Always."
    )})
    termination_grace_period_seconds = fields.Int(metadata={"description": (
        "Seconds the containers get to stop after they are told to, before they are killed. Defaults to 30."
    )})
    active_deadline_seconds = fields.Int(metadata={"description": (
        "Seconds the Pod may run, from its start, before it is marked failed and its containers are stopped."
    )})
    dns_policy = fields.Str(metadata={"description": (
        "Where the Pod's DNS settings come from: ClusterFirst, ClusterFirstWithHostNet, Default or None. "
        "Defaults to ClusterFirst."
    )})
    node_selector = fields.StrMap(metadata={"description": (
        "Labels a node must have for the Pod to be scheduled onto it."
    )})
    service_account_name = fields.Str(metadata={"description": (
        "The ServiceAccount the Pod runs as. Defaults to default."
    )})
    service_account = fields.Str(metadata={"description": "Deprecated alias of serviceAccountName."})
    automount_service_account_token = fields.Bool(metadata={"description": (
        "Whether the service account's API token is mounted into the containers."
    )})
    node_name = fields.Str(metadata={"description": (
        "The node the Pod runs on. The scheduler sets it; setting it yourself skips scheduling."
    )})
    host_network = fields.Bool(metadata={"description": (
        "Use the node's network namespace instead of one of the Pod's own."
    )})
    host_pid = fields.Bool(data_key="hostPID", metadata={"description": "Use the node's process ID namespace."})
    host_ipc = fields.Bool(data_key="hostIPC", metadata={"description": "Use the node's IPC namespace."})
    share_process_namespace = fields.Bool(metadata={"description": (
        "Put all containers of the Pod in one process namespace, so that they see each other's processes."
    )})
    security_context = fields.Dict(metadata={"description": (
        "Security settings for every container of the Pod, such as the user and group to run as."
    )})
    image_pull_secrets = fields.List(fields.Nested(LocalObjectReferenceSchema), metadata=fields.merge_by("name", description=(
        "Secrets in the Pod's namespace holding credentials for pulling the images."
    )))
    hostname = fields.Str(metadata={"description": "The Pod's hostname. Defaults to the Pod's name."})
    subdomain = fields.Str(metadata={"description": (
        "With a headless Service of this name in the namespace, gives the Pod the DNS name "
        "<hostname>.<subdomain>.<namespace>.svc."
    )})
    affinity = fields.Dict(metadata={"description": (
        "Rules that draw the Pod to certain nodes, or to or away from other Pods."
    )})
    scheduler_name = fields.Str(metadata={"description": (
        "The scheduler to place the Pod. Defaults to default-scheduler."
    )})
    tolerations = fields.List(fields.Dict(), metadata={"description": "Node taints the Pod tolerates."})
    host_aliases = fields.List(fields.Dict(), metadata=fields.merge_by("ip", description=(
        "Extra entries for the /etc/hosts file of the containers."
    )))
    priority_class_name = fields.Str(metadata={"description": "The PriorityClass that gives the Pod its priority."})
    priority = fields.Int32(metadata={"description": (
        "The Pod's priority, filled in from priorityClassName on admission."
    )})
    dns_config = fields.Dict(metadata={"description": "DNS settings merged into the ones dnsPolicy produces."})
    readiness_gates = fields.List(fields.Dict(), metadata={"description": (
        "Further conditions that must be True for the Pod to be Ready."
    )})
    runtime_class_name = fields.Str(metadata={"description": (
        "The RuntimeClass that picks the container runtime configuration."
    )})
    enable_service_links = fields.Bool(metadata={"description": (
        "Whether environment variables describing the Services of the namespace are injected into the "
        "containers. Defaults to true."
    )})
    preemption_policy = fields.Str(metadata={"description": (
        "PreemptLowerPriority or Never: whether the Pod may evict Pods of lower priority to be scheduled."
    )})
    overhead = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "Resources the Pod's sandbox uses beyond its containers, set from its RuntimeClass."
    )})
    topology_spread_constraints = fields.List(fields.Dict(), metadata=fields.merge_by("topologyKey", list_map_keys=["topologyKey", "whenUnsatisfiable"], description=(
        "How Pods spread across zones, nodes or other topology domains."
    )))
    set_hostname_as_fqdn = fields.Bool(data_key="setHostnameAsFQDN", metadata={"description": (
        "Make the fully qualified domain name the Pod's hostname."
    )})
    os = fields.Dict(metadata={"description": "The operating system the containers need: linux or windows."})
    host_users = fields.Bool(metadata={"description": (
        "Whether the Pod shares the host's user namespace. Defaults to true."
    )})
    scheduling_gates = fields.List(fields.Dict(), metadata={"description": (
        "While any remain, the Pod is not scheduled."
    )})
    resource_claims = fields.List(fields.Dict(), metadata={"description": (
        "Dynamic resources, by claim, that the containers may use."
    )})


class PodConditionSchema(Schema):
    """One aspect of a Pod's state at a point in time."""

    type = fields.Str(metadata={"omitempty": False, "description": (
        "The aspect, such as PodScheduled, Initialized, ContainersReady or Ready."
    )})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    observed_generation = fields.Int(metadata={"description": (
        "The metadata.generation the condition was computed from."
    )})
    last_probe_time = fields.Time(metadata={"omitempty": False, "description": "When the condition was last checked."})
    last_transition_time = fields.Time(metadata={"omitempty": False, "description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class PodStatusSchema(Schema):
    """The observed state of a Pod, as its node reports it; it may lag behind."""

    observed_generation = fields.Int(metadata={"description": "The metadata.generation this status reflects."})
    phase = fields.Str(metadata={"description": (
        "Where the Pod is in its life: Pending, Running, Succeeded, Failed or Unknown."
    )})
    conditions = fields.List(fields.Nested(PodConditionSchema), metadata=fields.merge_by("type", description=(
        "The latest observations of the Pod's state, one per type."
    )))
    message = fields.Str(metadata={"description": "Human-readable details of the Pod's state."})
    reason = fields.Str(metadata={"description": (
        "Machine-readable, CamelCase reason for the Pod's state, such as Evicted."
    )})
    nominated_node_name = fields.Str(metadata={"description": (
        "A node the Pod may run on once preemption has made room there."
    )})
    host_ip = fields.Str(data_key="hostIP", metadata={"description": "IP address of the node the Pod runs on."})
    host_ips = fields.List(fields.Dict(), data_key="hostIPs", metadata={"description": (
        "Every IP address of that node; the first is hostIP."
    )})
    pod_ip = fields.Str(data_key="podIP", metadata={"description": "IP address of the Pod."})
    pod_ips = fields.List(fields.Dict(), data_key="podIPs", metadata={"description": (
        "Every IP address of the Pod; the first is podIP."
    )})
    start_time = fields.Time(metadata={"description": "When the node accepted the Pod, before any image was pulled."})
    init_container_statuses = fields.List(fields.Dict(), metadata={"description": "One status per init container."})
    container_statuses = fields.List(fields.Dict(), metadata={"description": (
        "One status per container: its state, restart count, readiness and image."
    )})
    qos_class = fields.Str(data_key="qosClass", metadata={"description": (
        "Guaranteed, Burstable or BestEffort, from the containers' requests and limits."
    )})
    ephemeral_container_statuses = fields.List(fields.Dict(), metadata={"description": (
        "One status per ephemeral container."
    )})
    resize = fields.Str(metadata={"description": "How far a requested in-place change of container resources has got."})
    resource_claim_statuses = fields.List(fields.Dict(), metadata={"description": (
        "The ResourceClaims made for the Pod's resourceClaims."
    )})


class PodSchema(Schema):
    """A Pod is the smallest thing that runs: one or more containers scheduled together onto one node, sharing a
    network identity and volumes. Controllers such as ReplicaSets usually create them.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    spec = fields.Nested(PodSpecSchema, metadata={"description": (
        "The desired state: containers, volumes and scheduling constraints."
    )})
    status = fields.Nested(PodStatusSchema, metadata={"description": (
        "The most recently observed state, reported by the node. Clients read it."
    )})


class PodTemplateSpecSchema(Schema):
    """The Pods a controller creates: their metadata and their spec."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Labels and annotations of the Pods created. The labels must match the controller's selector."
    )})
    spec = fields.Nested(PodSpecSchema, metadata={"description": "The spec of the Pods created."})


# -- Event -------------------------------------------------------------------------------------
class EventSourceSchema(Schema):
    """The component that reported an event."""

    component = fields.Str(metadata={"description": "Name of the component, such as deployment-controller."})
    host = fields.Str(metadata={"description": "The node the component runs on."})


class EventSchema(Schema):
    """An Event records something that happened to an object: a scheduling decision, a scaling step, an image pull,
    an error. Events are informational and expire after a while.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    involved_object = fields.Nested(ObjectReferenceSchema, metadata={"description": "The object the event is about."})
    reason = fields.Str(metadata={"description": (
        "Short, machine-readable, CamelCase reason, such as ScalingReplicaSet."
    )})
    message = fields.Str(metadata={"description": "Human-readable description of what happened."})
    source = fields.Nested(EventSourceSchema, metadata={"description": (
        "The component that reported the event (older form of reportingComponent)."
    )})
    first_timestamp = fields.Time(metadata={"omitempty": False, "description": "When the event was first seen."})
    last_timestamp = fields.Time(metadata={"omitempty": False, "description": "When the event was most recently seen."})
    count = fields.Int32(metadata={"description": "How many times the event was seen."})
    type = fields.Str(metadata={"description": "Normal or Warning."})
    event_time = fields.Time(metadata={"omitempty": False, "description": (
        "When the event happened, to the microsecond (newer form of the timestamps)."
    )})
    series = fields.Dict(metadata={"description": "Repeated occurrences of the event, in the newer form."})
    action = fields.Str(metadata={"description": "What was done, or failed to be done, to the object."})
    related = fields.Nested(ObjectReferenceSchema, metadata={"pointer": True, "description": "A second object involved, if any."})
    reporting_component = fields.Str(metadata={"omitempty": False, "description": (
        "The controller that emitted the event, such as kubernetes.io/kubelet."
    )})
    reporting_instance = fields.Str(metadata={"omitempty": False, "description": (
        "Which instance of that controller emitted it, such as the kubelet's node name."
    )})


# -- ConfigMap, Secret, ServiceAccount ---------------------------------------------------------

class ConfigMapSchema(Schema):
    """A ConfigMap holds configuration for Pods to use as environment variables, command-line arguments or files in a
    volume. It is not meant for secrets.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    immutable = fields.Bool(metadata={"description": (
        "When true, data and binaryData can no longer change; the ConfigMap can only be deleted."
    )})
    data = fields.StrMap(metadata={"description": (
        "Configuration values (UTF-8 text) by key. Keys consist of letters, digits, '-', '_' and '.'."
    )})
    binary_data = fields.Dict(keys=fields.Str(), values=fields.Bytes(), metadata={"description": (
        "Binary values, base64-encoded, by key. A key must not also be in data."
    )})


class SecretSchema(Schema):
    """A Secret holds a small amount of sensitive data, such as a password, a token or a key, for Pods to use as
    files or environment variables.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    immutable = fields.Bool(metadata={"description": (
        "When true, data can no longer change; the Secret can only be deleted."
    )})
    data = fields.Dict(keys=fields.Str(), values=fields.Bytes(), metadata={"description": (
        "Values, base64-encoded, by key. Keys consist of letters, digits, '-', '_' and '.'."
    )})
    string_data = fields.StrMap(metadata={"description": (
        "For writing only: plain-text values merged into data, where they win over data's own. Never returned "
        "by reads."
    )})
    type = fields.Str(metadata={"description": (
        "What the secret is for, so that programs can handle it, such as Opaque (the default) or "
        "kubernetes.io/dockerconfigjson."
    )})


class ServiceAccountSchema(Schema):
    """A ServiceAccount is an identity for the processes of Pods, with credentials for the API server."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, namespace, labels, annotations, and what the server records about "
        "the object."
    )})
    secrets = fields.List(fields.Nested(ObjectReferenceSchema), metadata=fields.merge_by("name", description=(
        "Deprecated: Secrets holding long-lived tokens for this account. Pods now get short-lived tokens "
        "instead."
    )))
    image_pull_secrets = fields.List(fields.Nested(LocalObjectReferenceSchema), metadata={"description": (
        "Secrets with registry credentials, added to every Pod running as this account."
    )})
    automount_service_account_token = fields.Bool(metadata={"description": (
        "Whether Pods running as this account get its API token mounted, unless the Pod says otherwise."
    )})


# -- Node --------------------------------------------------------------------------------------
class TaintSchema(Schema):
    """Keeps Pods that do not tolerate it off a node (or away from it, or out of it)."""

    key = fields.Str(metadata={"omitempty": False, "description": "The taint key, a qualified name such as node.kubernetes.io/unschedulable."})
    value = fields.Str(metadata={"description": "The taint value."})
    effect = fields.Str(metadata={"omitempty": False, "description": (
        "What happens to Pods that do not tolerate the taint: NoSchedule, PreferNoSchedule or NoExecute."
    )})
    time_added = fields.Time(metadata={"description": "When a NoExecute taint was added."})


class NodeSpecSchema(Schema):
    """The desired state of a Node."""

    pod_cidr = fields.Str(data_key="podCIDR", metadata={"description": (
        "The Pod IP range of the node; the first entry of podCIDRs."
    )})
    pod_cidrs = fields.List(fields.Str(), data_key="podCIDRs", metadata={"patch_strategy": "merge", "list_type": "set", "description": (
        "The Pod IP ranges of the node, at most one per IP family. Once set, they cannot change."
    )})
    provider_id = fields.Str(data_key="providerID", metadata={"description": (
        "The node's ID in its cloud provider: <ProviderName>://<ProviderSpecificNodeID>."
    )})
    unschedulable = fields.Bool(metadata={"description": (
        "When true, no new Pods are scheduled onto the node (kubectl cordon)."
    )})
    taints = fields.List(fields.Nested(TaintSchema), metadata={"description": "Taints of the node."})
    config_source = fields.Dict(metadata={"description": "Deprecated: no longer used."})
    external_id = fields.Str(data_key="externalID", metadata={"description": "Deprecated: no longer used."})


class NodeConditionSchema(Schema):
    """One aspect of a Node's state, as its kubelet reports it."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect: Ready, MemoryPressure, DiskPressure, PIDPressure, ..."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    last_heartbeat_time = fields.Time(metadata={"omitempty": False, "description": "When the kubelet last reported the condition."})
    last_transition_time = fields.Time(metadata={"omitempty": False, "description": "When status last changed."})
    reason = fields.Str(metadata={"description": "Machine-readable, CamelCase reason for the last transition."})
    message = fields.Str(metadata={"description": "Human-readable details of the last transition."})


class NodeAddressSchema(Schema):
    """One address of a Node."""

    type = fields.Str(metadata={"omitempty": False, "description": "Hostname, InternalIP, ExternalIP, InternalDNS or ExternalDNS."})
    address = fields.Str(metadata={"omitempty": False, "description": "The address."})


class DaemonEndpointSchema(Schema):
    """A port a daemon of the node listens on."""

    port = fields.Int32(data_key="Port", metadata={"omitempty": False, "description": "Port number."})


class NodeDaemonEndpointsSchema(Schema):
    """Ports of the daemons running on the node."""

    kubelet_endpoint = fields.Nested(DaemonEndpointSchema, metadata={"description": "The port the kubelet listens on."})


class NodeSystemInfoSchema(Schema):
    """Identity and software versions of a node, as its kubelet reports them."""

    machine_id = fields.Str(data_key="machineID", metadata={"omitempty": False, "description": "The node's /etc/machine-id."})
    system_uuid = fields.Str(data_key="systemUUID", metadata={"omitempty": False, "description": "The system UUID from the firmware."})
    boot_id = fields.Str(data_key="bootID", metadata={"omitempty": False, "description": "Changes on every reboot of the node."})
    kernel_version = fields.Str(metadata={"omitempty": False, "description": "Kernel version (uname -r)."})
    os_image = fields.Str(metadata={"omitempty": False, "description": "Operating system image, from /etc/os-release."})
    container_runtime_version = fields.Str(metadata={"omitempty": False, "description": "Container runtime: <runtime>://<version>."})
    kubelet_version = fields.Str(metadata={"omitempty": False, "description": "Kubelet version."})
    kube_proxy_version = fields.Str(metadata={"omitempty": False, "description": "Deprecated: kube-proxy version, not reliable."})
    operating_system = fields.Str(metadata={"omitempty": False, "description": "The operating system: linux or windows."})
    architecture = fields.Str(metadata={"omitempty": False, "description": "The CPU architecture, such as amd64 or arm64."})
    swap = fields.Dict(metadata={"description": "Swap memory of the node."})


class ContainerImageSchema(Schema):
    """A container image present on a node."""

    names = fields.List(fields.Str(), metadata={"omitempty": False, "description": "Names (tags and digests) of the image."})
    size_bytes = fields.Int(metadata={"description": "Size of the image in bytes."})


class NodeStatusSchema(Schema):
    """The observed state of a Node, reported by its kubelet."""

    capacity = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "Total resources of the node: cpu, memory, pods, ephemeral-storage, ..."
    )})
    allocatable = fields.Dict(keys=fields.Str(), values=fields.Quantity(), metadata={"description": (
        "The resources of the node available to Pods; defaults to capacity."
    )})
    phase = fields.Str(metadata={"description": "Deprecated: no longer set."})
    conditions = fields.List(fields.Nested(NodeConditionSchema), metadata=fields.merge_by("type", description=(
        "The latest observations of the node's state, one per type."
    )))
    addresses = fields.List(fields.Nested(NodeAddressSchema), metadata=fields.merge_by("type", description=(
        "Addresses the node is reachable at."
    )))
    daemon_endpoints = fields.Nested(NodeDaemonEndpointsSchema, metadata={"description": (
        "Ports of the daemons running on the node."
    )})
    node_info = fields.Nested(NodeSystemInfoSchema, metadata={"description": "Identity and software versions of the node."})
    images = fields.List(fields.Nested(ContainerImageSchema), metadata={"description": "Container images on the node."})
    volumes_in_use = fields.List(fields.Str(), metadata={"description": "Volumes attached and mounted on the node."})
    volumes_attached = fields.List(fields.Dict(), metadata={"description": "Volumes attached to the node."})
    config = fields.Dict(metadata={"description": "Status of the node's dynamic configuration (deprecated)."})
    runtime_handlers = fields.List(fields.Dict(), metadata={"description": "The runtime handlers available on the node."})
    features = fields.Dict(metadata={"description": "Features the node's implementation supports."})


class NodeSchema(Schema):
    """A Node is a machine Pods run on. Its kubelet registers it and reports its capacity, addresses and health;
    the scheduler places Pods onto Nodes that are Ready and schedulable.
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "Standard object metadata: name, labels, annotations, and what the server records about the object."
    )})
    spec = fields.Nested(NodeSpecSchema, metadata={"description": (
        "The desired state: Pod IP ranges, taints, and whether new Pods may be scheduled."
    )})
    status = fields.Nested(NodeStatusSchema, metadata={"description": (
        "The most recently observed state, reported by the node's kubelet."
    )})


# -- Binding -----------------------------------------------------------------------------------
class BindingSchema(Schema):
    """A Binding assigns a Pod to a Node: POSTed to pods/{name}/binding by the scheduler."""

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": (
        "The Pod's name; uid and resourceVersion, when set, are preconditions on the Pod."
    )})
    target = fields.Nested(ObjectReferenceSchema, metadata={"description": "The Node to bind to (kind Node, and its name)."})


class ComponentConditionSchema(Schema):
    """One aspect of a component's health."""

    type = fields.Str(metadata={"omitempty": False, "description": "The aspect: Healthy."})
    status = fields.Str(metadata={"omitempty": False, "description": "True, False or Unknown."})
    message = fields.Str(metadata={"description": "What the component answered."})
    error = fields.Str(metadata={"description": "Why it could not be asked, or what failed."})


class ComponentStatusSchema(Schema):
    """ComponentStatus (and ComponentStatusList) holds the cluster validation info. Deprecated: This API is
    deprecated in v1.19+
    """

    metadata = fields.Nested(ObjectMetaSchema, metadata={"description": "Standard object metadata: the component's name."})
    conditions = fields.List(fields.Nested(ComponentConditionSchema), metadata=fields.merge_by("type", description=(
        "The component's conditions."
    )))
