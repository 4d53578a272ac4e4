"""Protobuf tables of core/v1, so kubectl's generator commands (``create namespace``,
``create configmap``, ``create secret``, ``create serviceaccount``) can POST protobuf.

Field numbers are those of ``k8s.io/api`` ``core/v1/generated.proto``; see
:mod:`core.runtime.protobuf` for the format. The pod template is covered broadly (containers,
ports, env, resources, security contexts, scheduling scalars) because apps/v1 embeds it for
``kubectl create deployment``; volumes, probes, lifecycle hooks, affinity, DNS config, topology
spread constraints, ephemeral containers and resource claims are not tabled, so a body using
them is refused by field number rather than half-read. Such objects can be sent as JSON.
"""

from __future__ import annotations

from core.meta.protobuf import OBJECT_META, QUANTITY, TIME
from core.runtime.protobuf import Field, Message

OBJECT_REFERENCE = Message(
    "ObjectReference",
    {
        1: Field("kind", "string"),
        2: Field("namespace", "string"),
        3: Field("name", "string"),
        4: Field("uid", "string"),
        5: Field("apiVersion", "string"),
        6: Field("resourceVersion", "string"),
        7: Field("fieldPath", "string"),
    },
)

LOCAL_OBJECT_REFERENCE = Message("LocalObjectReference", {1: Field("name", "string")})

# -- Namespace ------------------------------------------------------------------------------------
NAMESPACE_CONDITION = Message(
    "NamespaceCondition",
    {
        1: Field("type", "string"),
        2: Field("status", "string"),
        4: Field("lastTransitionTime", TIME),
        5: Field("reason", "string"),
        6: Field("message", "string"),
    },
)

NAMESPACE = Message(
    "Namespace",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", Message("NamespaceSpec", {1: Field("finalizers", "string", repeated=True)})),
        3: Field(
            "status",
            Message(
                "NamespaceStatus",
                {1: Field("phase", "string"), 2: Field("conditions", NAMESPACE_CONDITION, repeated=True)},
            ),
        ),
    },
)

# -- ConfigMap, Secret, ServiceAccount ------------------------------------------------------------
CONFIG_MAP = Message(
    "ConfigMap",
    {
        1: Field("metadata", OBJECT_META),
        4: Field("immutable", "bool", pointer=True),
        2: Field("data", "string", map=True),
        3: Field("binaryData", "bytes", map=True),
    },
)

SECRET = Message(
    "Secret",
    {
        1: Field("metadata", OBJECT_META),
        5: Field("immutable", "bool", pointer=True),
        2: Field("data", "bytes", map=True),
        4: Field("stringData", "string", map=True),
        3: Field("type", "string"),
    },
)

SERVICE_ACCOUNT = Message(
    "ServiceAccount",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("secrets", OBJECT_REFERENCE, repeated=True),
        3: Field("imagePullSecrets", LOCAL_OBJECT_REFERENCE, repeated=True),
        4: Field("automountServiceAccountToken", "bool", pointer=True),
    },
)

# -- Containers -------------------------------------------------------------------------------------
CONTAINER_PORT = Message(
    "ContainerPort",
    {
        1: Field("name", "string"),
        2: Field("hostPort", "int32"),
        3: Field("containerPort", "int32"),
        4: Field("protocol", "string"),
        5: Field("hostIP", "string"),
    },
)


def _key_selector(name: str) -> Message:
    """ConfigMapKeySelector and SecretKeySelector share their numbers and shape."""
    return Message(
        name,
        {
            1: Field("localObjectReference", LOCAL_OBJECT_REFERENCE, inline=True),
            2: Field("key", "string"),
            3: Field("optional", "bool", pointer=True),
        },
    )


def _env_source(name: str) -> Message:
    """ConfigMapEnvSource and SecretEnvSource share their numbers and shape."""
    return Message(
        name,
        {
            1: Field("localObjectReference", LOCAL_OBJECT_REFERENCE, inline=True),
            2: Field("optional", "bool", pointer=True),
        },
    )


ENV_VAR_SOURCE = Message(
    "EnvVarSource",
    {
        1: Field(
            "fieldRef",
            Message("ObjectFieldSelector", {1: Field("apiVersion", "string"), 2: Field("fieldPath", "string")}),
        ),
        2: Field(
            "resourceFieldRef",
            Message(
                "ResourceFieldSelector",
                {1: Field("containerName", "string"), 2: Field("resource", "string"), 3: Field("divisor", QUANTITY)},
            ),
        ),
        3: Field("configMapKeyRef", _key_selector("ConfigMapKeySelector")),
        4: Field("secretKeyRef", _key_selector("SecretKeySelector")),
        5: Field(
            "fileKeyRef",
            Message(
                "FileKeySelector",
                {
                    1: Field("volumeName", "string"),
                    2: Field("path", "string"),
                    3: Field("key", "string"),
                    4: Field("optional", "bool", pointer=True),
                },
            ),
        ),
    },
)

ENV_VAR = Message(
    "EnvVar",
    {1: Field("name", "string"), 2: Field("value", "string"), 3: Field("valueFrom", ENV_VAR_SOURCE)},
)

ENV_FROM_SOURCE = Message(
    "EnvFromSource",
    {
        1: Field("prefix", "string"),
        2: Field("configMapRef", _env_source("ConfigMapEnvSource")),
        3: Field("secretRef", _env_source("SecretEnvSource")),
    },
)

VOLUME_MOUNT = Message(
    "VolumeMount",
    {
        1: Field("name", "string"),
        2: Field("readOnly", "bool"),
        7: Field("recursiveReadOnly", "string", pointer=True),
        3: Field("mountPath", "string"),
        4: Field("subPath", "string"),
        5: Field("mountPropagation", "string", pointer=True),
        6: Field("subPathExpr", "string"),
    },
)

RESOURCE_REQUIREMENTS = Message(
    "ResourceRequirements",
    {
        1: Field("limits", QUANTITY, map=True),
        2: Field("requests", QUANTITY, map=True),
        3: Field("claims", Message("ResourceClaim", {1: Field("name", "string"), 2: Field("request", "string")}), repeated=True),
    },
)

SE_LINUX_OPTIONS = Message(
    "SELinuxOptions",
    {1: Field("user", "string"), 2: Field("role", "string"), 3: Field("type", "string"), 4: Field("level", "string")},
)

WINDOWS_OPTIONS = Message(
    "WindowsSecurityContextOptions",
    {
        1: Field("gmsaCredentialSpecName", "string", pointer=True),
        2: Field("gmsaCredentialSpec", "string", pointer=True),
        3: Field("runAsUserName", "string", pointer=True),
        4: Field("hostProcess", "bool", pointer=True),
    },
)

SECCOMP_PROFILE = Message(
    "SeccompProfile", {1: Field("type", "string"), 2: Field("localhostProfile", "string", pointer=True)}
)

APP_ARMOR_PROFILE = Message(
    "AppArmorProfile", {1: Field("type", "string"), 2: Field("localhostProfile", "string", pointer=True)}
)

SECURITY_CONTEXT = Message(
    "SecurityContext",
    {
        1: Field(
            "capabilities",
            Message("Capabilities", {1: Field("add", "string", repeated=True), 2: Field("drop", "string", repeated=True)}),
        ),
        2: Field("privileged", "bool", pointer=True),
        3: Field("seLinuxOptions", SE_LINUX_OPTIONS),
        10: Field("windowsOptions", WINDOWS_OPTIONS),
        4: Field("runAsUser", "int64", pointer=True),
        8: Field("runAsGroup", "int64", pointer=True),
        5: Field("runAsNonRoot", "bool", pointer=True),
        6: Field("readOnlyRootFilesystem", "bool", pointer=True),
        7: Field("allowPrivilegeEscalation", "bool", pointer=True),
        9: Field("procMount", "string", pointer=True),
        11: Field("seccompProfile", SECCOMP_PROFILE),
        12: Field("appArmorProfile", APP_ARMOR_PROFILE),
    },
)

CONTAINER = Message(
    "Container",
    {
        1: Field("name", "string"),
        2: Field("image", "string"),
        3: Field("command", "string", repeated=True),
        4: Field("args", "string", repeated=True),
        5: Field("workingDir", "string"),
        6: Field("ports", CONTAINER_PORT, repeated=True),
        19: Field("envFrom", ENV_FROM_SOURCE, repeated=True),
        7: Field("env", ENV_VAR, repeated=True),
        8: Field("resources", RESOURCE_REQUIREMENTS),
        23: Field(
            "resizePolicy",
            Message("ContainerResizePolicy", {1: Field("resourceName", "string"), 2: Field("restartPolicy", "string")}),
            repeated=True,
        ),
        24: Field("restartPolicy", "string", pointer=True),
        9: Field("volumeMounts", VOLUME_MOUNT, repeated=True),
        21: Field(
            "volumeDevices",
            Message("VolumeDevice", {1: Field("name", "string"), 2: Field("devicePath", "string")}),
            repeated=True,
        ),
        13: Field("terminationMessagePath", "string"),
        20: Field("terminationMessagePolicy", "string"),
        14: Field("imagePullPolicy", "string"),
        15: Field("securityContext", SECURITY_CONTEXT),
        16: Field("stdin", "bool"),
        17: Field("stdinOnce", "bool"),
        18: Field("tty", "bool"),
    },
)

# -- Pods ---------------------------------------------------------------------------------------------
POD_SECURITY_CONTEXT = Message(
    "PodSecurityContext",
    {
        1: Field("seLinuxOptions", SE_LINUX_OPTIONS),
        8: Field("windowsOptions", WINDOWS_OPTIONS),
        2: Field("runAsUser", "int64", pointer=True),
        6: Field("runAsGroup", "int64", pointer=True),
        3: Field("runAsNonRoot", "bool", pointer=True),
        4: Field("supplementalGroups", "int64", repeated=True),
        12: Field("supplementalGroupsPolicy", "string", pointer=True),
        5: Field("fsGroup", "int64", pointer=True),
        7: Field("sysctls", Message("Sysctl", {1: Field("name", "string"), 2: Field("value", "string")}), repeated=True),
        9: Field("fsGroupChangePolicy", "string", pointer=True),
        10: Field("seccompProfile", SECCOMP_PROFILE),
        11: Field("appArmorProfile", APP_ARMOR_PROFILE),
        13: Field("seLinuxChangePolicy", "string", pointer=True),
    },
)

TOLERATION = Message(
    "Toleration",
    {
        1: Field("key", "string"),
        2: Field("operator", "string"),
        3: Field("value", "string"),
        4: Field("effect", "string"),
        5: Field("tolerationSeconds", "int64", pointer=True),
    },
)

POD_SPEC = Message(
    "PodSpec",
    {
        20: Field("initContainers", CONTAINER, repeated=True),
        2: Field("containers", CONTAINER, repeated=True),
        3: Field("restartPolicy", "string"),
        4: Field("terminationGracePeriodSeconds", "int64", pointer=True),
        5: Field("activeDeadlineSeconds", "int64", pointer=True),
        6: Field("dnsPolicy", "string"),
        7: Field("nodeSelector", "string", map=True),
        8: Field("serviceAccountName", "string"),
        9: Field("serviceAccount", "string"),
        21: Field("automountServiceAccountToken", "bool", pointer=True),
        10: Field("nodeName", "string"),
        11: Field("hostNetwork", "bool"),
        12: Field("hostPID", "bool"),
        13: Field("hostIPC", "bool"),
        27: Field("shareProcessNamespace", "bool", pointer=True),
        14: Field("securityContext", POD_SECURITY_CONTEXT),
        15: Field("imagePullSecrets", LOCAL_OBJECT_REFERENCE, repeated=True),
        16: Field("hostname", "string"),
        17: Field("subdomain", "string"),
        19: Field("schedulerName", "string"),
        22: Field("tolerations", TOLERATION, repeated=True),
        23: Field(
            "hostAliases",
            Message("HostAlias", {1: Field("ip", "string"), 2: Field("hostnames", "string", repeated=True)}),
            repeated=True,
        ),
        24: Field("priorityClassName", "string"),
        25: Field("priority", "int32", pointer=True),
        28: Field("readinessGates", Message("PodReadinessGate", {1: Field("conditionType", "string")}), repeated=True),
        29: Field("runtimeClassName", "string", pointer=True),
        30: Field("enableServiceLinks", "bool", pointer=True),
        31: Field("preemptionPolicy", "string", pointer=True),
        32: Field("overhead", QUANTITY, map=True),
        35: Field("setHostnameAsFQDN", "bool", pointer=True),
        36: Field("os", Message("PodOS", {1: Field("name", "string")})),
        37: Field("hostUsers", "bool", pointer=True),
        38: Field("schedulingGates", Message("PodSchedulingGate", {1: Field("name", "string")}), repeated=True),
    },
)

POD_TEMPLATE_SPEC = Message("PodTemplateSpec", {1: Field("metadata", OBJECT_META), 2: Field("spec", POD_SPEC)})

MESSAGES = {
    "Namespace": NAMESPACE,
    "ConfigMap": CONFIG_MAP,
    "Secret": SECRET,
    "ServiceAccount": SERVICE_ACCOUNT,
}
