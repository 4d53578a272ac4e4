"""Protobuf tables of core/v1: every kind the core group serves (Namespace, Pod, Event,
ConfigMap, Secret, ServiceAccount, Node, Service), so that any client may POST or PUT them as
``application/vnd.kubernetes.protobuf``, as client-go and kubectl's generators (``kubectl create
service|secret|configmap|namespace|serviceaccount``, ``kubectl run``) do.

One table per Go struct, complete, with the field numbers of ``k8s.io/api`` v0.32
``core/v1/generated.proto`` (the ``protobuf`` tags of ``types.go``) and the JSON names of its
``json`` tags; ``pointer`` follows the Go field type. See :mod:`kplane.core.runtime.protobuf` for the
format. Fields the JSON schemas keep untyped (volumes, probes, affinity...) are tabled all the
same, so a protobuf body carries everything its JSON form would.
"""

from __future__ import annotations

from kplane.api import CONDITION, INT_OR_STRING, LABEL_SELECTOR, MICRO_TIME, OBJECT_META, QUANTITY, TIME, Field, Message

NAMESPACE_SPEC = Message(
    "NamespaceSpec",
    {
        1: Field("finalizers", "string", repeated=True),
    },
)


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


NAMESPACE_STATUS = Message(
    "NamespaceStatus",
    {
        1: Field("phase", "string"),
        2: Field("conditions", NAMESPACE_CONDITION, repeated=True),
    },
)


NAMESPACE = Message(
    "Namespace",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", NAMESPACE_SPEC),
        3: Field("status", NAMESPACE_STATUS),
    },
)


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


LOCAL_OBJECT_REFERENCE = Message(
    "LocalObjectReference",
    {
        1: Field("name", "string"),
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


HOST_PATH_VOLUME_SOURCE = Message(
    "HostPathVolumeSource",
    {
        1: Field("path", "string"),
        2: Field("type", "string", pointer=True),
    },
)


EMPTY_DIR_VOLUME_SOURCE = Message(
    "EmptyDirVolumeSource",
    {
        1: Field("medium", "string"),
        2: Field("sizeLimit", QUANTITY),
    },
)


GCE_PERSISTENT_DISK_VOLUME_SOURCE = Message(
    "GCEPersistentDiskVolumeSource",
    {
        1: Field("pdName", "string"),
        2: Field("fsType", "string"),
        3: Field("partition", "int32"),
        4: Field("readOnly", "bool"),
    },
)


AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE = Message(
    "AWSElasticBlockStoreVolumeSource",
    {
        1: Field("volumeID", "string"),
        2: Field("fsType", "string"),
        3: Field("partition", "int32"),
        4: Field("readOnly", "bool"),
    },
)


GIT_REPO_VOLUME_SOURCE = Message(
    "GitRepoVolumeSource",
    {
        1: Field("repository", "string"),
        2: Field("revision", "string"),
        3: Field("directory", "string"),
    },
)


KEY_TO_PATH = Message(
    "KeyToPath",
    {
        1: Field("key", "string"),
        2: Field("path", "string"),
        3: Field("mode", "int32", pointer=True),
    },
)


SECRET_VOLUME_SOURCE = Message(
    "SecretVolumeSource",
    {
        1: Field("secretName", "string"),
        2: Field("items", KEY_TO_PATH, repeated=True),
        3: Field("defaultMode", "int32", pointer=True),
        4: Field("optional", "bool", pointer=True),
    },
)


NFS_VOLUME_SOURCE = Message(
    "NFSVolumeSource",
    {
        1: Field("server", "string"),
        2: Field("path", "string"),
        3: Field("readOnly", "bool"),
    },
)


ISCSI_VOLUME_SOURCE = Message(
    "ISCSIVolumeSource",
    {
        1: Field("targetPortal", "string"),
        2: Field("iqn", "string"),
        3: Field("lun", "int32"),
        4: Field("iscsiInterface", "string"),
        5: Field("fsType", "string"),
        6: Field("readOnly", "bool"),
        7: Field("portals", "string", repeated=True),
        8: Field("chapAuthDiscovery", "bool"),
        11: Field("chapAuthSession", "bool"),
        10: Field("secretRef", LOCAL_OBJECT_REFERENCE),
        12: Field("initiatorName", "string", pointer=True),
    },
)


GLUSTERFS_VOLUME_SOURCE = Message(
    "GlusterfsVolumeSource",
    {
        1: Field("endpoints", "string"),
        2: Field("path", "string"),
        3: Field("readOnly", "bool"),
    },
)


PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE = Message(
    "PersistentVolumeClaimVolumeSource",
    {
        1: Field("claimName", "string"),
        2: Field("readOnly", "bool"),
    },
)


RBD_VOLUME_SOURCE = Message(
    "RBDVolumeSource",
    {
        1: Field("monitors", "string", repeated=True),
        2: Field("image", "string"),
        3: Field("fsType", "string"),
        4: Field("pool", "string"),
        5: Field("user", "string"),
        6: Field("keyring", "string"),
        7: Field("secretRef", LOCAL_OBJECT_REFERENCE),
        8: Field("readOnly", "bool"),
    },
)


FLEX_VOLUME_SOURCE = Message(
    "FlexVolumeSource",
    {
        1: Field("driver", "string"),
        2: Field("fsType", "string"),
        3: Field("secretRef", LOCAL_OBJECT_REFERENCE),
        4: Field("readOnly", "bool"),
        5: Field("options", "string", map=True),
    },
)


CINDER_VOLUME_SOURCE = Message(
    "CinderVolumeSource",
    {
        1: Field("volumeID", "string"),
        2: Field("fsType", "string"),
        3: Field("readOnly", "bool"),
        4: Field("secretRef", LOCAL_OBJECT_REFERENCE),
    },
)


CEPH_FS_VOLUME_SOURCE = Message(
    "CephFSVolumeSource",
    {
        1: Field("monitors", "string", repeated=True),
        2: Field("path", "string"),
        3: Field("user", "string"),
        4: Field("secretFile", "string"),
        5: Field("secretRef", LOCAL_OBJECT_REFERENCE),
        6: Field("readOnly", "bool"),
    },
)


FLOCKER_VOLUME_SOURCE = Message(
    "FlockerVolumeSource",
    {
        1: Field("datasetName", "string"),
        2: Field("datasetUUID", "string"),
    },
)


OBJECT_FIELD_SELECTOR = Message(
    "ObjectFieldSelector",
    {
        1: Field("apiVersion", "string"),
        2: Field("fieldPath", "string"),
    },
)


RESOURCE_FIELD_SELECTOR = Message(
    "ResourceFieldSelector",
    {
        1: Field("containerName", "string"),
        2: Field("resource", "string"),
        3: Field("divisor", QUANTITY),
    },
)


DOWNWARD_API_VOLUME_FILE = Message(
    "DownwardAPIVolumeFile",
    {
        1: Field("path", "string"),
        2: Field("fieldRef", OBJECT_FIELD_SELECTOR),
        3: Field("resourceFieldRef", RESOURCE_FIELD_SELECTOR),
        4: Field("mode", "int32", pointer=True),
    },
)


DOWNWARD_API_VOLUME_SOURCE = Message(
    "DownwardAPIVolumeSource",
    {
        1: Field("items", DOWNWARD_API_VOLUME_FILE, repeated=True),
        2: Field("defaultMode", "int32", pointer=True),
    },
)


FC_VOLUME_SOURCE = Message(
    "FCVolumeSource",
    {
        1: Field("targetWWNs", "string", repeated=True),
        2: Field("lun", "int32", pointer=True),
        3: Field("fsType", "string"),
        4: Field("readOnly", "bool"),
        5: Field("wwids", "string", repeated=True),
    },
)


AZURE_FILE_VOLUME_SOURCE = Message(
    "AzureFileVolumeSource",
    {
        1: Field("secretName", "string"),
        2: Field("shareName", "string"),
        3: Field("readOnly", "bool"),
    },
)


CONFIG_MAP_VOLUME_SOURCE = Message(
    "ConfigMapVolumeSource",
    {
        1: Field("localObjectReference", LOCAL_OBJECT_REFERENCE, inline=True),
        2: Field("items", KEY_TO_PATH, repeated=True),
        3: Field("defaultMode", "int32", pointer=True),
        4: Field("optional", "bool", pointer=True),
    },
)


VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE = Message(
    "VsphereVirtualDiskVolumeSource",
    {
        1: Field("volumePath", "string"),
        2: Field("fsType", "string"),
        3: Field("storagePolicyName", "string"),
        4: Field("storagePolicyID", "string"),
    },
)


QUOBYTE_VOLUME_SOURCE = Message(
    "QuobyteVolumeSource",
    {
        1: Field("registry", "string"),
        2: Field("volume", "string"),
        3: Field("readOnly", "bool"),
        4: Field("user", "string"),
        5: Field("group", "string"),
        6: Field("tenant", "string"),
    },
)


AZURE_DISK_VOLUME_SOURCE = Message(
    "AzureDiskVolumeSource",
    {
        1: Field("diskName", "string"),
        2: Field("diskURI", "string"),
        3: Field("cachingMode", "string", pointer=True),
        4: Field("fsType", "string", pointer=True),
        5: Field("readOnly", "bool", pointer=True),
        6: Field("kind", "string", pointer=True),
    },
)


PHOTON_PERSISTENT_DISK_VOLUME_SOURCE = Message(
    "PhotonPersistentDiskVolumeSource",
    {
        1: Field("pdID", "string"),
        2: Field("fsType", "string"),
    },
)


SECRET_PROJECTION = Message(
    "SecretProjection",
    {
        1: Field("localObjectReference", LOCAL_OBJECT_REFERENCE, inline=True),
        2: Field("items", KEY_TO_PATH, repeated=True),
        4: Field("optional", "bool", pointer=True),
    },
)


DOWNWARD_API_PROJECTION = Message(
    "DownwardAPIProjection",
    {
        1: Field("items", DOWNWARD_API_VOLUME_FILE, repeated=True),
    },
)


CONFIG_MAP_PROJECTION = Message(
    "ConfigMapProjection",
    {
        1: Field("localObjectReference", LOCAL_OBJECT_REFERENCE, inline=True),
        2: Field("items", KEY_TO_PATH, repeated=True),
        4: Field("optional", "bool", pointer=True),
    },
)


SERVICE_ACCOUNT_TOKEN_PROJECTION = Message(
    "ServiceAccountTokenProjection",
    {
        1: Field("audience", "string"),
        2: Field("expirationSeconds", "int64", pointer=True),
        3: Field("path", "string"),
    },
)


CLUSTER_TRUST_BUNDLE_PROJECTION = Message(
    "ClusterTrustBundleProjection",
    {
        1: Field("name", "string", pointer=True),
        2: Field("signerName", "string", pointer=True),
        3: Field("labelSelector", LABEL_SELECTOR),
        5: Field("optional", "bool", pointer=True),
        4: Field("path", "string"),
    },
)


VOLUME_PROJECTION = Message(
    "VolumeProjection",
    {
        1: Field("secret", SECRET_PROJECTION),
        2: Field("downwardAPI", DOWNWARD_API_PROJECTION),
        3: Field("configMap", CONFIG_MAP_PROJECTION),
        4: Field("serviceAccountToken", SERVICE_ACCOUNT_TOKEN_PROJECTION),
        5: Field("clusterTrustBundle", CLUSTER_TRUST_BUNDLE_PROJECTION),
    },
)


PROJECTED_VOLUME_SOURCE = Message(
    "ProjectedVolumeSource",
    {
        1: Field("sources", VOLUME_PROJECTION, repeated=True),
        2: Field("defaultMode", "int32", pointer=True),
    },
)


PORTWORX_VOLUME_SOURCE = Message(
    "PortworxVolumeSource",
    {
        1: Field("volumeID", "string"),
        2: Field("fsType", "string"),
        3: Field("readOnly", "bool"),
    },
)


SCALE_IO_VOLUME_SOURCE = Message(
    "ScaleIOVolumeSource",
    {
        1: Field("gateway", "string"),
        2: Field("system", "string"),
        3: Field("secretRef", LOCAL_OBJECT_REFERENCE),
        4: Field("sslEnabled", "bool"),
        5: Field("protectionDomain", "string"),
        6: Field("storagePool", "string"),
        7: Field("storageMode", "string"),
        8: Field("volumeName", "string"),
        9: Field("fsType", "string"),
        10: Field("readOnly", "bool"),
    },
)


STORAGE_OS_VOLUME_SOURCE = Message(
    "StorageOSVolumeSource",
    {
        1: Field("volumeName", "string"),
        2: Field("volumeNamespace", "string"),
        3: Field("fsType", "string"),
        4: Field("readOnly", "bool"),
        5: Field("secretRef", LOCAL_OBJECT_REFERENCE),
    },
)


CSI_VOLUME_SOURCE = Message(
    "CSIVolumeSource",
    {
        1: Field("driver", "string"),
        2: Field("readOnly", "bool", pointer=True),
        3: Field("fsType", "string", pointer=True),
        4: Field("volumeAttributes", "string", map=True),
        5: Field("nodePublishSecretRef", LOCAL_OBJECT_REFERENCE),
    },
)


VOLUME_RESOURCE_REQUIREMENTS = Message(
    "VolumeResourceRequirements",
    {
        1: Field("limits", QUANTITY, map=True),
        2: Field("requests", QUANTITY, map=True),
    },
)


TYPED_LOCAL_OBJECT_REFERENCE = Message(
    "TypedLocalObjectReference",
    {
        1: Field("apiGroup", "string", pointer=True),
        2: Field("kind", "string"),
        3: Field("name", "string"),
    },
)


TYPED_OBJECT_REFERENCE = Message(
    "TypedObjectReference",
    {
        1: Field("apiGroup", "string", pointer=True),
        2: Field("kind", "string"),
        3: Field("name", "string"),
        4: Field("namespace", "string", pointer=True),
    },
)


PERSISTENT_VOLUME_CLAIM_SPEC = Message(
    "PersistentVolumeClaimSpec",
    {
        1: Field("accessModes", "string", repeated=True),
        4: Field("selector", LABEL_SELECTOR),
        2: Field("resources", VOLUME_RESOURCE_REQUIREMENTS),
        3: Field("volumeName", "string"),
        5: Field("storageClassName", "string", pointer=True),
        6: Field("volumeMode", "string", pointer=True),
        7: Field("dataSource", TYPED_LOCAL_OBJECT_REFERENCE),
        8: Field("dataSourceRef", TYPED_OBJECT_REFERENCE),
        9: Field("volumeAttributesClassName", "string", pointer=True),
    },
)


PERSISTENT_VOLUME_CLAIM_TEMPLATE = Message(
    "PersistentVolumeClaimTemplate",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", PERSISTENT_VOLUME_CLAIM_SPEC),
    },
)


EPHEMERAL_VOLUME_SOURCE = Message(
    "EphemeralVolumeSource",
    {
        1: Field("volumeClaimTemplate", PERSISTENT_VOLUME_CLAIM_TEMPLATE),
    },
)


IMAGE_VOLUME_SOURCE = Message(
    "ImageVolumeSource",
    {
        1: Field("reference", "string"),
        2: Field("pullPolicy", "string"),
    },
)


VOLUME_SOURCE = Message(
    "VolumeSource",
    {
        1: Field("hostPath", HOST_PATH_VOLUME_SOURCE),
        2: Field("emptyDir", EMPTY_DIR_VOLUME_SOURCE),
        3: Field("gcePersistentDisk", GCE_PERSISTENT_DISK_VOLUME_SOURCE),
        4: Field("awsElasticBlockStore", AWS_ELASTIC_BLOCK_STORE_VOLUME_SOURCE),
        5: Field("gitRepo", GIT_REPO_VOLUME_SOURCE),
        6: Field("secret", SECRET_VOLUME_SOURCE),
        7: Field("nfs", NFS_VOLUME_SOURCE),
        8: Field("iscsi", ISCSI_VOLUME_SOURCE),
        9: Field("glusterfs", GLUSTERFS_VOLUME_SOURCE),
        10: Field("persistentVolumeClaim", PERSISTENT_VOLUME_CLAIM_VOLUME_SOURCE),
        11: Field("rbd", RBD_VOLUME_SOURCE),
        12: Field("flexVolume", FLEX_VOLUME_SOURCE),
        13: Field("cinder", CINDER_VOLUME_SOURCE),
        14: Field("cephfs", CEPH_FS_VOLUME_SOURCE),
        15: Field("flocker", FLOCKER_VOLUME_SOURCE),
        16: Field("downwardAPI", DOWNWARD_API_VOLUME_SOURCE),
        17: Field("fc", FC_VOLUME_SOURCE),
        18: Field("azureFile", AZURE_FILE_VOLUME_SOURCE),
        19: Field("configMap", CONFIG_MAP_VOLUME_SOURCE),
        20: Field("vsphereVolume", VSPHERE_VIRTUAL_DISK_VOLUME_SOURCE),
        21: Field("quobyte", QUOBYTE_VOLUME_SOURCE),
        22: Field("azureDisk", AZURE_DISK_VOLUME_SOURCE),
        23: Field("photonPersistentDisk", PHOTON_PERSISTENT_DISK_VOLUME_SOURCE),
        26: Field("projected", PROJECTED_VOLUME_SOURCE),
        24: Field("portworxVolume", PORTWORX_VOLUME_SOURCE),
        25: Field("scaleIO", SCALE_IO_VOLUME_SOURCE),
        27: Field("storageos", STORAGE_OS_VOLUME_SOURCE),
        28: Field("csi", CSI_VOLUME_SOURCE),
        29: Field("ephemeral", EPHEMERAL_VOLUME_SOURCE),
        30: Field("image", IMAGE_VOLUME_SOURCE),
    },
)


VOLUME = Message(
    "Volume",
    {
        1: Field("name", "string"),
        2: Field("volumeSource", VOLUME_SOURCE, inline=True),
    },
)


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


CONFIG_MAP_ENV_SOURCE = Message(
    "ConfigMapEnvSource",
    {
        1: Field("localObjectReference", LOCAL_OBJECT_REFERENCE, inline=True),
        2: Field("optional", "bool", pointer=True),
    },
)


SECRET_ENV_SOURCE = Message(
    "SecretEnvSource",
    {
        1: Field("localObjectReference", LOCAL_OBJECT_REFERENCE, inline=True),
        2: Field("optional", "bool", pointer=True),
    },
)


ENV_FROM_SOURCE = Message(
    "EnvFromSource",
    {
        1: Field("prefix", "string"),
        2: Field("configMapRef", CONFIG_MAP_ENV_SOURCE),
        3: Field("secretRef", SECRET_ENV_SOURCE),
    },
)


CONFIG_MAP_KEY_SELECTOR = Message(
    "ConfigMapKeySelector",
    {
        1: Field("localObjectReference", LOCAL_OBJECT_REFERENCE, inline=True),
        2: Field("key", "string"),
        3: Field("optional", "bool", pointer=True),
    },
)


SECRET_KEY_SELECTOR = Message(
    "SecretKeySelector",
    {
        1: Field("localObjectReference", LOCAL_OBJECT_REFERENCE, inline=True),
        2: Field("key", "string"),
        3: Field("optional", "bool", pointer=True),
    },
)


ENV_VAR_SOURCE = Message(
    "EnvVarSource",
    {
        1: Field("fieldRef", OBJECT_FIELD_SELECTOR),
        2: Field("resourceFieldRef", RESOURCE_FIELD_SELECTOR),
        3: Field("configMapKeyRef", CONFIG_MAP_KEY_SELECTOR),
        4: Field("secretKeyRef", SECRET_KEY_SELECTOR),
    },
)


ENV_VAR = Message(
    "EnvVar",
    {
        1: Field("name", "string"),
        2: Field("value", "string"),
        3: Field("valueFrom", ENV_VAR_SOURCE),
    },
)


RESOURCE_CLAIM = Message(
    "ResourceClaim",
    {
        1: Field("name", "string"),
        2: Field("request", "string"),
    },
)


RESOURCE_REQUIREMENTS = Message(
    "ResourceRequirements",
    {
        1: Field("limits", QUANTITY, map=True),
        2: Field("requests", QUANTITY, map=True),
        3: Field("claims", RESOURCE_CLAIM, repeated=True),
    },
)


CONTAINER_RESIZE_POLICY = Message(
    "ContainerResizePolicy",
    {
        1: Field("resourceName", "string"),
        2: Field("restartPolicy", "string"),
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


VOLUME_DEVICE = Message(
    "VolumeDevice",
    {
        1: Field("name", "string"),
        2: Field("devicePath", "string"),
    },
)


EXEC_ACTION = Message(
    "ExecAction",
    {
        1: Field("command", "string", repeated=True),
    },
)


HTTP_HEADER = Message(
    "HTTPHeader",
    {
        1: Field("name", "string"),
        2: Field("value", "string"),
    },
)


HTTP_GET_ACTION = Message(
    "HTTPGetAction",
    {
        1: Field("path", "string"),
        2: Field("port", INT_OR_STRING),
        3: Field("host", "string"),
        4: Field("scheme", "string"),
        5: Field("httpHeaders", HTTP_HEADER, repeated=True),
    },
)


TCP_SOCKET_ACTION = Message(
    "TCPSocketAction",
    {
        1: Field("port", INT_OR_STRING),
        2: Field("host", "string"),
    },
)


GRPC_ACTION = Message(
    "GRPCAction",
    {
        1: Field("port", "int32"),
        2: Field("service", "string", pointer=True),
    },
)


PROBE_HANDLER = Message(
    "ProbeHandler",
    {
        1: Field("exec", EXEC_ACTION),
        2: Field("httpGet", HTTP_GET_ACTION),
        3: Field("tcpSocket", TCP_SOCKET_ACTION),
        4: Field("grpc", GRPC_ACTION),
    },
)


PROBE = Message(
    "Probe",
    {
        1: Field("handler", PROBE_HANDLER, inline=True),
        2: Field("initialDelaySeconds", "int32"),
        3: Field("timeoutSeconds", "int32"),
        4: Field("periodSeconds", "int32"),
        5: Field("successThreshold", "int32"),
        6: Field("failureThreshold", "int32"),
        7: Field("terminationGracePeriodSeconds", "int64", pointer=True),
    },
)


SLEEP_ACTION = Message(
    "SleepAction",
    {
        1: Field("seconds", "int64"),
    },
)


LIFECYCLE_HANDLER = Message(
    "LifecycleHandler",
    {
        1: Field("exec", EXEC_ACTION),
        2: Field("httpGet", HTTP_GET_ACTION),
        3: Field("tcpSocket", TCP_SOCKET_ACTION),
        4: Field("sleep", SLEEP_ACTION),
    },
)


LIFECYCLE = Message(
    "Lifecycle",
    {
        1: Field("postStart", LIFECYCLE_HANDLER),
        2: Field("preStop", LIFECYCLE_HANDLER),
    },
)


CAPABILITIES = Message(
    "Capabilities",
    {
        1: Field("add", "string", repeated=True),
        2: Field("drop", "string", repeated=True),
    },
)


SE_LINUX_OPTIONS = Message(
    "SELinuxOptions",
    {
        1: Field("user", "string"),
        2: Field("role", "string"),
        3: Field("type", "string"),
        4: Field("level", "string"),
    },
)


WINDOWS_SECURITY_CONTEXT_OPTIONS = Message(
    "WindowsSecurityContextOptions",
    {
        1: Field("gmsaCredentialSpecName", "string", pointer=True),
        2: Field("gmsaCredentialSpec", "string", pointer=True),
        3: Field("runAsUserName", "string", pointer=True),
        4: Field("hostProcess", "bool", pointer=True),
    },
)


SECCOMP_PROFILE = Message(
    "SeccompProfile",
    {
        1: Field("type", "string"),
        2: Field("localhostProfile", "string", pointer=True),
    },
)


APP_ARMOR_PROFILE = Message(
    "AppArmorProfile",
    {
        1: Field("type", "string"),
        2: Field("localhostProfile", "string", pointer=True),
    },
)


SECURITY_CONTEXT = Message(
    "SecurityContext",
    {
        1: Field("capabilities", CAPABILITIES),
        2: Field("privileged", "bool", pointer=True),
        3: Field("seLinuxOptions", SE_LINUX_OPTIONS),
        10: Field("windowsOptions", WINDOWS_SECURITY_CONTEXT_OPTIONS),
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
        23: Field("resizePolicy", CONTAINER_RESIZE_POLICY, repeated=True),
        24: Field("restartPolicy", "string", pointer=True),
        9: Field("volumeMounts", VOLUME_MOUNT, repeated=True),
        21: Field("volumeDevices", VOLUME_DEVICE, repeated=True),
        10: Field("livenessProbe", PROBE),
        11: Field("readinessProbe", PROBE),
        22: Field("startupProbe", PROBE),
        12: Field("lifecycle", LIFECYCLE),
        13: Field("terminationMessagePath", "string"),
        20: Field("terminationMessagePolicy", "string"),
        14: Field("imagePullPolicy", "string"),
        15: Field("securityContext", SECURITY_CONTEXT),
        16: Field("stdin", "bool"),
        17: Field("stdinOnce", "bool"),
        18: Field("tty", "bool"),
    },
)


# An ephemeral container's fields have a container's numbers (Kubernetes keeps them in step).
EPHEMERAL_CONTAINER_COMMON = Message("EphemeralContainerCommon", CONTAINER.fields)


EPHEMERAL_CONTAINER = Message(
    "EphemeralContainer",
    {
        1: Field("ephemeralContainerCommon", EPHEMERAL_CONTAINER_COMMON, inline=True),
        2: Field("targetContainerName", "string"),
    },
)


SYSCTL = Message(
    "Sysctl",
    {
        1: Field("name", "string"),
        2: Field("value", "string"),
    },
)


POD_SECURITY_CONTEXT = Message(
    "PodSecurityContext",
    {
        1: Field("seLinuxOptions", SE_LINUX_OPTIONS),
        8: Field("windowsOptions", WINDOWS_SECURITY_CONTEXT_OPTIONS),
        2: Field("runAsUser", "int64", pointer=True),
        6: Field("runAsGroup", "int64", pointer=True),
        3: Field("runAsNonRoot", "bool", pointer=True),
        4: Field("supplementalGroups", "int64", repeated=True),
        12: Field("supplementalGroupsPolicy", "string", pointer=True),
        5: Field("fsGroup", "int64", pointer=True),
        7: Field("sysctls", SYSCTL, repeated=True),
        9: Field("fsGroupChangePolicy", "string", pointer=True),
        10: Field("seccompProfile", SECCOMP_PROFILE),
        11: Field("appArmorProfile", APP_ARMOR_PROFILE),
        13: Field("seLinuxChangePolicy", "string", pointer=True),
    },
)


NODE_SELECTOR_REQUIREMENT = Message(
    "NodeSelectorRequirement",
    {
        1: Field("key", "string"),
        2: Field("operator", "string"),
        3: Field("values", "string", repeated=True),
    },
)


NODE_SELECTOR_TERM = Message(
    "NodeSelectorTerm",
    {
        1: Field("matchExpressions", NODE_SELECTOR_REQUIREMENT, repeated=True),
        2: Field("matchFields", NODE_SELECTOR_REQUIREMENT, repeated=True),
    },
)


NODE_SELECTOR = Message(
    "NodeSelector",
    {
        1: Field("nodeSelectorTerms", NODE_SELECTOR_TERM, repeated=True),
    },
)


PREFERRED_SCHEDULING_TERM = Message(
    "PreferredSchedulingTerm",
    {
        1: Field("weight", "int32"),
        2: Field("preference", NODE_SELECTOR_TERM),
    },
)


NODE_AFFINITY = Message(
    "NodeAffinity",
    {
        1: Field("requiredDuringSchedulingIgnoredDuringExecution", NODE_SELECTOR),
        2: Field("preferredDuringSchedulingIgnoredDuringExecution", PREFERRED_SCHEDULING_TERM, repeated=True),
    },
)


POD_AFFINITY_TERM = Message(
    "PodAffinityTerm",
    {
        1: Field("labelSelector", LABEL_SELECTOR),
        2: Field("namespaces", "string", repeated=True),
        3: Field("topologyKey", "string"),
        4: Field("namespaceSelector", LABEL_SELECTOR),
        5: Field("matchLabelKeys", "string", repeated=True),
        6: Field("mismatchLabelKeys", "string", repeated=True),
    },
)


WEIGHTED_POD_AFFINITY_TERM = Message(
    "WeightedPodAffinityTerm",
    {
        1: Field("weight", "int32"),
        2: Field("podAffinityTerm", POD_AFFINITY_TERM),
    },
)


POD_AFFINITY = Message(
    "PodAffinity",
    {
        1: Field("requiredDuringSchedulingIgnoredDuringExecution", POD_AFFINITY_TERM, repeated=True),
        2: Field("preferredDuringSchedulingIgnoredDuringExecution", WEIGHTED_POD_AFFINITY_TERM, repeated=True),
    },
)


POD_ANTI_AFFINITY = Message(
    "PodAntiAffinity",
    {
        1: Field("requiredDuringSchedulingIgnoredDuringExecution", POD_AFFINITY_TERM, repeated=True),
        2: Field("preferredDuringSchedulingIgnoredDuringExecution", WEIGHTED_POD_AFFINITY_TERM, repeated=True),
    },
)


AFFINITY = Message(
    "Affinity",
    {
        1: Field("nodeAffinity", NODE_AFFINITY),
        2: Field("podAffinity", POD_AFFINITY),
        3: Field("podAntiAffinity", POD_ANTI_AFFINITY),
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


HOST_ALIAS = Message(
    "HostAlias",
    {
        1: Field("ip", "string"),
        2: Field("hostnames", "string", repeated=True),
    },
)


POD_DNS_CONFIG_OPTION = Message(
    "PodDNSConfigOption",
    {
        1: Field("name", "string"),
        2: Field("value", "string", pointer=True),
    },
)


POD_DNS_CONFIG = Message(
    "PodDNSConfig",
    {
        1: Field("nameservers", "string", repeated=True),
        2: Field("searches", "string", repeated=True),
        3: Field("options", POD_DNS_CONFIG_OPTION, repeated=True),
    },
)


POD_READINESS_GATE = Message(
    "PodReadinessGate",
    {
        1: Field("conditionType", "string"),
    },
)


TOPOLOGY_SPREAD_CONSTRAINT = Message(
    "TopologySpreadConstraint",
    {
        1: Field("maxSkew", "int32"),
        2: Field("topologyKey", "string"),
        3: Field("whenUnsatisfiable", "string"),
        4: Field("labelSelector", LABEL_SELECTOR),
        5: Field("minDomains", "int32", pointer=True),
        6: Field("nodeAffinityPolicy", "string", pointer=True),
        7: Field("nodeTaintsPolicy", "string", pointer=True),
        8: Field("matchLabelKeys", "string", repeated=True),
    },
)


POD_OS = Message(
    "PodOS",
    {
        1: Field("name", "string"),
    },
)


POD_SCHEDULING_GATE = Message(
    "PodSchedulingGate",
    {
        1: Field("name", "string"),
    },
)


POD_RESOURCE_CLAIM = Message(
    "PodResourceClaim",
    {
        1: Field("name", "string"),
        3: Field("resourceClaimName", "string", pointer=True),
        4: Field("resourceClaimTemplateName", "string", pointer=True),
    },
)


POD_SPEC = Message(
    "PodSpec",
    {
        1: Field("volumes", VOLUME, repeated=True),
        20: Field("initContainers", CONTAINER, repeated=True),
        2: Field("containers", CONTAINER, repeated=True),
        34: Field("ephemeralContainers", EPHEMERAL_CONTAINER, repeated=True),
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
        18: Field("affinity", AFFINITY),
        19: Field("schedulerName", "string"),
        22: Field("tolerations", TOLERATION, repeated=True),
        23: Field("hostAliases", HOST_ALIAS, repeated=True),
        24: Field("priorityClassName", "string"),
        25: Field("priority", "int32", pointer=True),
        26: Field("dnsConfig", POD_DNS_CONFIG),
        28: Field("readinessGates", POD_READINESS_GATE, repeated=True),
        29: Field("runtimeClassName", "string", pointer=True),
        30: Field("enableServiceLinks", "bool", pointer=True),
        31: Field("preemptionPolicy", "string", pointer=True),
        32: Field("overhead", QUANTITY, map=True),
        33: Field("topologySpreadConstraints", TOPOLOGY_SPREAD_CONSTRAINT, repeated=True),
        35: Field("setHostnameAsFQDN", "bool", pointer=True),
        36: Field("os", POD_OS),
        37: Field("hostUsers", "bool", pointer=True),
        38: Field("schedulingGates", POD_SCHEDULING_GATE, repeated=True),
        39: Field("resourceClaims", POD_RESOURCE_CLAIM, repeated=True),
        # 40, pod-level "resources", is behind the PodLevelResources gate, off in 1.32 and not served here
    },
)


POD_CONDITION = Message(
    "PodCondition",
    {
        1: Field("type", "string"),
        2: Field("status", "string"),
        3: Field("lastProbeTime", TIME),
        4: Field("lastTransitionTime", TIME),
        5: Field("reason", "string"),
        6: Field("message", "string"),
    },
)


HOST_IP = Message(
    "HostIP",
    {
        1: Field("ip", "string"),
    },
)


POD_IP = Message(
    "PodIP",
    {
        1: Field("ip", "string"),
    },
)


CONTAINER_STATE_WAITING = Message(
    "ContainerStateWaiting",
    {
        1: Field("reason", "string"),
        2: Field("message", "string"),
    },
)


CONTAINER_STATE_RUNNING = Message(
    "ContainerStateRunning",
    {
        1: Field("startedAt", TIME),
    },
)


CONTAINER_STATE_TERMINATED = Message(
    "ContainerStateTerminated",
    {
        1: Field("exitCode", "int32"),
        2: Field("signal", "int32"),
        3: Field("reason", "string"),
        4: Field("message", "string"),
        5: Field("startedAt", TIME),
        6: Field("finishedAt", TIME),
        7: Field("containerID", "string"),
    },
)


CONTAINER_STATE = Message(
    "ContainerState",
    {
        1: Field("waiting", CONTAINER_STATE_WAITING),
        2: Field("running", CONTAINER_STATE_RUNNING),
        3: Field("terminated", CONTAINER_STATE_TERMINATED),
    },
)


VOLUME_MOUNT_STATUS = Message(
    "VolumeMountStatus",
    {
        1: Field("name", "string"),
        2: Field("mountPath", "string"),
        3: Field("readOnly", "bool"),
        4: Field("recursiveReadOnly", "string", pointer=True),
    },
)


LINUX_CONTAINER_USER = Message(
    "LinuxContainerUser",
    {
        1: Field("uid", "int64"),
        2: Field("gid", "int64"),
        3: Field("supplementalGroups", "int64", repeated=True),
    },
)


CONTAINER_USER = Message(
    "ContainerUser",
    {
        1: Field("linux", LINUX_CONTAINER_USER),
    },
)


RESOURCE_HEALTH = Message(
    "ResourceHealth",
    {
        1: Field("resourceID", "string"),
        2: Field("health", "string"),
    },
)


RESOURCE_STATUS = Message(
    "ResourceStatus",
    {
        1: Field("name", "string"),
        2: Field("resources", RESOURCE_HEALTH, repeated=True),
    },
)


CONTAINER_STATUS = Message(
    "ContainerStatus",
    {
        1: Field("name", "string"),
        2: Field("state", CONTAINER_STATE),
        3: Field("lastState", CONTAINER_STATE),
        4: Field("ready", "bool"),
        5: Field("restartCount", "int32"),
        6: Field("image", "string"),
        7: Field("imageID", "string"),
        8: Field("containerID", "string"),
        9: Field("started", "bool", pointer=True),
        10: Field("allocatedResources", QUANTITY, map=True),
        11: Field("resources", RESOURCE_REQUIREMENTS),
        12: Field("volumeMounts", VOLUME_MOUNT_STATUS, repeated=True),
        13: Field("user", CONTAINER_USER),
        14: Field("allocatedResourcesStatus", RESOURCE_STATUS, repeated=True),
    },
)


POD_RESOURCE_CLAIM_STATUS = Message(
    "PodResourceClaimStatus",
    {
        1: Field("name", "string"),
        2: Field("resourceClaimName", "string", pointer=True),
    },
)


POD_STATUS = Message(
    "PodStatus",
    {
        1: Field("phase", "string"),
        2: Field("conditions", POD_CONDITION, repeated=True),
        3: Field("message", "string"),
        4: Field("reason", "string"),
        11: Field("nominatedNodeName", "string"),
        5: Field("hostIP", "string"),
        16: Field("hostIPs", HOST_IP, repeated=True),
        6: Field("podIP", "string"),
        12: Field("podIPs", POD_IP, repeated=True),
        7: Field("startTime", TIME),
        10: Field("initContainerStatuses", CONTAINER_STATUS, repeated=True),
        8: Field("containerStatuses", CONTAINER_STATUS, repeated=True),
        9: Field("qosClass", "string"),
        13: Field("ephemeralContainerStatuses", CONTAINER_STATUS, repeated=True),
        14: Field("resize", "string"),
        15: Field("resourceClaimStatuses", POD_RESOURCE_CLAIM_STATUS, repeated=True),
    },
)


POD = Message(
    "Pod",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", POD_SPEC),
        3: Field("status", POD_STATUS),
    },
)


POD_TEMPLATE_SPEC = Message(
    "PodTemplateSpec",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", POD_SPEC),
    },
)


EVENT_SOURCE = Message(
    "EventSource",
    {
        1: Field("component", "string"),
        2: Field("host", "string"),
    },
)


EVENT_SERIES = Message(
    "EventSeries",
    {
        1: Field("count", "int32"),
        2: Field("lastObservedTime", MICRO_TIME),
    },
)


EVENT = Message(
    "Event",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("involvedObject", OBJECT_REFERENCE),
        3: Field("reason", "string"),
        4: Field("message", "string"),
        5: Field("source", EVENT_SOURCE),
        6: Field("firstTimestamp", TIME),
        7: Field("lastTimestamp", TIME),
        8: Field("count", "int32"),
        9: Field("type", "string"),
        10: Field("eventTime", MICRO_TIME),
        11: Field("series", EVENT_SERIES),
        12: Field("action", "string"),
        13: Field("related", OBJECT_REFERENCE),
        14: Field("reportingComponent", "string"),
        15: Field("reportingInstance", "string"),
    },
)


TAINT = Message(
    "Taint",
    {
        1: Field("key", "string"),
        2: Field("value", "string"),
        3: Field("effect", "string"),
        4: Field("timeAdded", TIME),
    },
)


CONFIG_MAP_NODE_CONFIG_SOURCE = Message(
    "ConfigMapNodeConfigSource",
    {
        1: Field("namespace", "string"),
        2: Field("name", "string"),
        3: Field("uid", "string"),
        4: Field("resourceVersion", "string"),
        5: Field("kubeletConfigKey", "string"),
    },
)


NODE_CONFIG_SOURCE = Message(
    "NodeConfigSource",
    {
        2: Field("configMap", CONFIG_MAP_NODE_CONFIG_SOURCE),
    },
)


NODE_SPEC = Message(
    "NodeSpec",
    {
        1: Field("podCIDR", "string"),
        7: Field("podCIDRs", "string", repeated=True),
        3: Field("providerID", "string"),
        4: Field("unschedulable", "bool"),
        5: Field("taints", TAINT, repeated=True),
        6: Field("configSource", NODE_CONFIG_SOURCE),
        2: Field("externalID", "string"),
    },
)


NODE_CONDITION = Message(
    "NodeCondition",
    {
        1: Field("type", "string"),
        2: Field("status", "string"),
        3: Field("lastHeartbeatTime", TIME),
        4: Field("lastTransitionTime", TIME),
        5: Field("reason", "string"),
        6: Field("message", "string"),
    },
)


NODE_ADDRESS = Message(
    "NodeAddress",
    {
        1: Field("type", "string"),
        2: Field("address", "string"),
    },
)


DAEMON_ENDPOINT = Message(
    "DaemonEndpoint",
    {
        1: Field("Port", "int32"),
    },
)


NODE_DAEMON_ENDPOINTS = Message(
    "NodeDaemonEndpoints",
    {
        1: Field("kubeletEndpoint", DAEMON_ENDPOINT),
    },
)


NODE_SYSTEM_INFO = Message(
    "NodeSystemInfo",
    {
        1: Field("machineID", "string"),
        2: Field("systemUUID", "string"),
        3: Field("bootID", "string"),
        4: Field("kernelVersion", "string"),
        5: Field("osImage", "string"),
        6: Field("containerRuntimeVersion", "string"),
        7: Field("kubeletVersion", "string"),
        8: Field("kubeProxyVersion", "string"),
        9: Field("operatingSystem", "string"),
        10: Field("architecture", "string"),
    },
)


CONTAINER_IMAGE = Message(
    "ContainerImage",
    {
        1: Field("names", "string", repeated=True),
        2: Field("sizeBytes", "int64"),
    },
)


ATTACHED_VOLUME = Message(
    "AttachedVolume",
    {
        1: Field("name", "string"),
        2: Field("devicePath", "string"),
    },
)


NODE_CONFIG_STATUS = Message(
    "NodeConfigStatus",
    {
        1: Field("assigned", NODE_CONFIG_SOURCE),
        2: Field("active", NODE_CONFIG_SOURCE),
        3: Field("lastKnownGood", NODE_CONFIG_SOURCE),
        4: Field("error", "string"),
    },
)


NODE_RUNTIME_HANDLER_FEATURES = Message(
    "NodeRuntimeHandlerFeatures",
    {
        1: Field("recursiveReadOnlyMounts", "bool", pointer=True),
        2: Field("userNamespaces", "bool", pointer=True),
    },
)


NODE_RUNTIME_HANDLER = Message(
    "NodeRuntimeHandler",
    {
        1: Field("name", "string"),
        2: Field("features", NODE_RUNTIME_HANDLER_FEATURES),
    },
)


NODE_FEATURES = Message(
    "NodeFeatures",
    {
        1: Field("supplementalGroupsPolicy", "bool", pointer=True),
    },
)


NODE_STATUS = Message(
    "NodeStatus",
    {
        1: Field("capacity", QUANTITY, map=True),
        2: Field("allocatable", QUANTITY, map=True),
        3: Field("phase", "string"),
        4: Field("conditions", NODE_CONDITION, repeated=True),
        5: Field("addresses", NODE_ADDRESS, repeated=True),
        6: Field("daemonEndpoints", NODE_DAEMON_ENDPOINTS),
        7: Field("nodeInfo", NODE_SYSTEM_INFO),
        8: Field("images", CONTAINER_IMAGE, repeated=True),
        9: Field("volumesInUse", "string", repeated=True),
        10: Field("volumesAttached", ATTACHED_VOLUME, repeated=True),
        11: Field("config", NODE_CONFIG_STATUS),
        12: Field("runtimeHandlers", NODE_RUNTIME_HANDLER, repeated=True),
        13: Field("features", NODE_FEATURES),
    },
)


NODE = Message(
    "Node",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", NODE_SPEC),
        3: Field("status", NODE_STATUS),
    },
)


SERVICE_PORT = Message(
    "ServicePort",
    {
        1: Field("name", "string"),
        2: Field("protocol", "string"),
        6: Field("appProtocol", "string", pointer=True),
        3: Field("port", "int32"),
        4: Field("targetPort", INT_OR_STRING),
        5: Field("nodePort", "int32"),
    },
)


CLIENT_IP_CONFIG = Message(
    "ClientIPConfig",
    {
        1: Field("timeoutSeconds", "int32", pointer=True),
    },
)


SESSION_AFFINITY_CONFIG = Message(
    "SessionAffinityConfig",
    {
        1: Field("clientIP", CLIENT_IP_CONFIG),
    },
)


SERVICE_SPEC = Message(
    "ServiceSpec",
    {
        1: Field("ports", SERVICE_PORT, repeated=True),
        2: Field("selector", "string", map=True),
        3: Field("clusterIP", "string"),
        18: Field("clusterIPs", "string", repeated=True),
        4: Field("type", "string"),
        5: Field("externalIPs", "string", repeated=True),
        7: Field("sessionAffinity", "string"),
        8: Field("loadBalancerIP", "string"),
        9: Field("loadBalancerSourceRanges", "string", repeated=True),
        10: Field("externalName", "string"),
        11: Field("externalTrafficPolicy", "string"),
        12: Field("healthCheckNodePort", "int32"),
        13: Field("publishNotReadyAddresses", "bool"),
        14: Field("sessionAffinityConfig", SESSION_AFFINITY_CONFIG),
        19: Field("ipFamilies", "string", repeated=True),
        17: Field("ipFamilyPolicy", "string", pointer=True),
        20: Field("allocateLoadBalancerNodePorts", "bool", pointer=True),
        21: Field("loadBalancerClass", "string", pointer=True),
        22: Field("internalTrafficPolicy", "string", pointer=True),
        23: Field("trafficDistribution", "string", pointer=True),
    },
)


PORT_STATUS = Message(
    "PortStatus",
    {
        1: Field("port", "int32"),
        2: Field("protocol", "string"),
        3: Field("error", "string", pointer=True),
    },
)


LOAD_BALANCER_INGRESS = Message(
    "LoadBalancerIngress",
    {
        1: Field("ip", "string"),
        2: Field("hostname", "string"),
        3: Field("ipMode", "string", pointer=True),
        4: Field("ports", PORT_STATUS, repeated=True),
    },
)


LOAD_BALANCER_STATUS = Message(
    "LoadBalancerStatus",
    {
        1: Field("ingress", LOAD_BALANCER_INGRESS, repeated=True),
    },
)


SERVICE_STATUS = Message(
    "ServiceStatus",
    {
        1: Field("loadBalancer", LOAD_BALANCER_STATUS),
        2: Field("conditions", CONDITION, repeated=True),
    },
)


SERVICE = Message(
    "Service",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", SERVICE_SPEC),
        3: Field("status", SERVICE_STATUS),
    },
)

# The body of POST pods/binding (kube-scheduler, client-go configured for protobuf); not a kind
# of the scheme, so the binding strategy declares it (PodBindingStrategy.response_protobuf).
BINDING = Message(
    "Binding",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("target", OBJECT_REFERENCE),
    },
)

SCOPED_RESOURCE_SELECTOR_REQUIREMENT = Message(
    "ScopedResourceSelectorRequirement",
    {
        1: Field("scopeName", "string"),
        2: Field("operator", "string"),
        3: Field("values", "string", repeated=True),
    },
)


SCOPE_SELECTOR = Message(
    "ScopeSelector",
    {
        1: Field("matchExpressions", SCOPED_RESOURCE_SELECTOR_REQUIREMENT, repeated=True),
    },
)


RESOURCE_QUOTA_SPEC = Message(
    "ResourceQuotaSpec",
    {
        1: Field("hard", QUANTITY, map=True),
        2: Field("scopes", "string", repeated=True),
        3: Field("scopeSelector", SCOPE_SELECTOR, pointer=True),
    },
)


RESOURCE_QUOTA_STATUS = Message(
    "ResourceQuotaStatus",
    {
        1: Field("hard", QUANTITY, map=True),
        2: Field("used", QUANTITY, map=True),
    },
)


RESOURCE_QUOTA = Message(
    "ResourceQuota",
    {
        1: Field("metadata", OBJECT_META),
        2: Field("spec", RESOURCE_QUOTA_SPEC),
        3: Field("status", RESOURCE_QUOTA_STATUS),
    },
)


MESSAGES = {
    "Namespace": NAMESPACE,
    "Pod": POD,
    "Event": EVENT,
    "ConfigMap": CONFIG_MAP,
    "Secret": SECRET,
    "ServiceAccount": SERVICE_ACCOUNT,
    "Node": NODE,
    "Service": SERVICE,
    "ResourceQuota": RESOURCE_QUOTA,  # `kubectl create quota`
}
