"""Wire schemas of core/v1, with Kubernetes' field names."""

from __future__ import annotations

import base64
import binascii

from marshmallow import ValidationError

from core.meta.schemas import ObjectMetaSchema
from core.runtime import fields
from core.runtime.schema import Schema


class ObjectReferenceSchema(Schema):
    kind = fields.Str()
    namespace = fields.Str()
    name = fields.Str()
    uid = fields.Str()
    api_version = fields.Str()
    resource_version = fields.Str()
    field_path = fields.Str()


class LocalObjectReferenceSchema(Schema):
    name = fields.Str()


# -- Namespace ---------------------------------------------------------------------------------
class NamespaceConditionSchema(Schema):
    type = fields.Str()
    status = fields.Str()
    last_transition_time = fields.Time()
    reason = fields.Str()
    message = fields.Str()


class NamespaceSpecSchema(Schema):
    finalizers = fields.List(fields.Str())


class NamespaceStatusSchema(Schema):
    phase = fields.Str()
    conditions = fields.List(fields.Nested(NamespaceConditionSchema), metadata=fields.merge_by("type"))


class NamespaceSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(NamespaceSpecSchema)
    status = fields.Nested(NamespaceStatusSchema)


# -- Pod ---------------------------------------------------------------------------------------
class ContainerPortSchema(Schema):
    name = fields.Str()
    host_port = fields.Int()
    container_port = fields.Int()
    protocol = fields.Str()
    host_ip = fields.Str(data_key="hostIP")


class EnvVarSchema(Schema):
    name = fields.Str()
    value = fields.Str()
    value_from = fields.Dict()


class VolumeMountSchema(Schema):
    name = fields.Str()
    read_only = fields.Bool()
    recursive_read_only = fields.Str()
    mount_path = fields.Str()
    sub_path = fields.Str()
    mount_propagation = fields.Str()
    sub_path_expr = fields.Str()


class ResourceRequirementsSchema(Schema):
    limits = fields.Dict(keys=fields.Str(), values=fields.Quantity())
    requests = fields.Dict(keys=fields.Str(), values=fields.Quantity())
    claims = fields.List(fields.Dict())


class ContainerSchema(Schema):
    name = fields.Str()
    image = fields.Str()
    command = fields.List(fields.Str())
    args = fields.List(fields.Str())
    working_dir = fields.Str()
    ports = fields.List(fields.Nested(ContainerPortSchema), metadata=fields.merge_by("containerPort", list_map_keys=["containerPort", "protocol"]))
    env_from = fields.List(fields.Dict())
    env = fields.List(fields.Nested(EnvVarSchema), metadata=fields.merge_by("name"))
    resources = fields.Nested(ResourceRequirementsSchema)
    resize_policy = fields.List(fields.Dict())
    restart_policy = fields.Str()
    volume_mounts = fields.List(fields.Nested(VolumeMountSchema), metadata=fields.merge_by("mountPath"))
    volume_devices = fields.List(fields.Dict(), metadata=fields.merge_by("devicePath"))
    liveness_probe = fields.Dict()
    readiness_probe = fields.Dict()
    startup_probe = fields.Dict()
    lifecycle = fields.Dict()
    termination_message_path = fields.Str()
    termination_message_policy = fields.Str()
    image_pull_policy = fields.Str()
    security_context = fields.Dict()
    stdin = fields.Bool()
    stdin_once = fields.Bool()
    tty = fields.Bool()


class PodSpecSchema(Schema):
    volumes = fields.List(fields.Dict(), metadata=fields.merge_by("name", retain_keys=True))
    init_containers = fields.List(fields.Nested(ContainerSchema), metadata=fields.merge_by("name"))
    containers = fields.List(fields.Nested(ContainerSchema), metadata=fields.merge_by("name"))
    ephemeral_containers = fields.List(fields.Dict(), metadata=fields.merge_by("name"))
    restart_policy = fields.Str()
    termination_grace_period_seconds = fields.Int()
    active_deadline_seconds = fields.Int()
    dns_policy = fields.Str()
    node_selector = fields.StrMap()
    service_account_name = fields.Str()
    service_account = fields.Str()
    automount_service_account_token = fields.Bool()
    node_name = fields.Str()
    host_network = fields.Bool()
    host_pid = fields.Bool(data_key="hostPID")
    host_ipc = fields.Bool(data_key="hostIPC")
    share_process_namespace = fields.Bool()
    security_context = fields.Dict()
    image_pull_secrets = fields.List(fields.Nested(LocalObjectReferenceSchema), metadata=fields.merge_by("name"))
    hostname = fields.Str()
    subdomain = fields.Str()
    affinity = fields.Dict()
    scheduler_name = fields.Str()
    tolerations = fields.List(fields.Dict())
    host_aliases = fields.List(fields.Dict(), metadata=fields.merge_by("ip"))
    priority_class_name = fields.Str()
    priority = fields.Int()
    dns_config = fields.Dict()
    readiness_gates = fields.List(fields.Dict())
    runtime_class_name = fields.Str()
    enable_service_links = fields.Bool()
    preemption_policy = fields.Str()
    overhead = fields.Dict(keys=fields.Str(), values=fields.Quantity())
    topology_spread_constraints = fields.List(fields.Dict(), metadata=fields.merge_by("topologyKey", list_map_keys=["topologyKey", "whenUnsatisfiable"]))
    set_hostname_as_fqdn = fields.Bool(data_key="setHostnameAsFQDN")
    os = fields.Dict()
    host_users = fields.Bool()
    scheduling_gates = fields.List(fields.Dict())
    resource_claims = fields.List(fields.Dict())


class PodConditionSchema(Schema):
    type = fields.Str()
    status = fields.Str()
    observed_generation = fields.Int()
    last_probe_time = fields.Time()
    last_transition_time = fields.Time()
    reason = fields.Str()
    message = fields.Str()


class PodStatusSchema(Schema):
    observed_generation = fields.Int()
    phase = fields.Str()
    conditions = fields.List(fields.Nested(PodConditionSchema), metadata=fields.merge_by("type"))
    message = fields.Str()
    reason = fields.Str()
    nominated_node_name = fields.Str()
    host_ip = fields.Str(data_key="hostIP")
    host_ips = fields.List(fields.Dict(), data_key="hostIPs")
    pod_ip = fields.Str(data_key="podIP")
    pod_ips = fields.List(fields.Dict(), data_key="podIPs")
    start_time = fields.Time()
    init_container_statuses = fields.List(fields.Dict())
    container_statuses = fields.List(fields.Dict())
    qos_class = fields.Str(data_key="qosClass")
    ephemeral_container_statuses = fields.List(fields.Dict())
    resize = fields.Str()
    resource_claim_statuses = fields.List(fields.Dict())


class PodSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(PodSpecSchema)
    status = fields.Nested(PodStatusSchema)


class PodTemplateSpecSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    spec = fields.Nested(PodSpecSchema)


# -- Event -------------------------------------------------------------------------------------
class EventSourceSchema(Schema):
    component = fields.Str()
    host = fields.Str()


class EventSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    involved_object = fields.Nested(ObjectReferenceSchema)
    reason = fields.Str()
    message = fields.Str()
    source = fields.Nested(EventSourceSchema)
    first_timestamp = fields.Time()
    last_timestamp = fields.Time()
    count = fields.Int()
    type = fields.Str()
    event_time = fields.Time()
    series = fields.Dict()
    action = fields.Str()
    related = fields.Nested(ObjectReferenceSchema)
    reporting_component = fields.Str()
    reporting_instance = fields.Str()


# -- ConfigMap, Secret, ServiceAccount ---------------------------------------------------------
def _base64(value: str) -> None:
    try:
        base64.b64decode(value, validate=True)
    except (binascii.Error, ValueError):
        raise ValidationError("illegal base64 data") from None


class ConfigMapSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    immutable = fields.Bool()
    data = fields.StrMap()
    binary_data = fields.Dict(keys=fields.Str(), values=fields.Str(validate=_base64))


class SecretSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    immutable = fields.Bool()
    data = fields.Dict(keys=fields.Str(), values=fields.Str(validate=_base64))
    string_data = fields.StrMap()
    type = fields.Str()


class ServiceAccountSchema(Schema):
    metadata = fields.Nested(ObjectMetaSchema)
    secrets = fields.List(fields.Nested(ObjectReferenceSchema), metadata=fields.merge_by("name"))
    image_pull_secrets = fields.List(fields.Nested(LocalObjectReferenceSchema))
    automount_service_account_token = fields.Bool()
