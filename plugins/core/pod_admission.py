"""The admission plugins of kube-apiserver's default chain that fill in a Pod: ServiceAccount,
Priority and DefaultTolerationSeconds (``plugin/pkg/admission/...``). They see pods proper, not
their subresources.

**ServiceAccount**, on create: ``serviceAccountName`` defaults to ``default``; the account must
exist, and is looked up in storage (kube-apiserver: ``error looking up service account
ns/name: serviceaccount "name" not found``, 403). One exception, a judgment of kplane's: when
``default`` itself is missing, the pod is admitted all the same. That account is the
serviceaccount controller's to create, and kplane runs without controllers (API tests,
``--no-controllers``) far more often than kube-apiserver runs without kube-controller-manager,
where every pod would be refused; kube-apiserver too treats it specially (it retries that
lookup for a second or two). Unless the pod or its account says
``automountServiceAccountToken: false``, every container and init container mounts a projected
``kube-api-access-xxxxx`` volume (token, ``kube-root-ca.crt``, namespace) at
``/var/run/secrets/kubernetes.io/serviceaccount``, as kube-apiserver adds it; kplane issues no
tokens yet, so the volume is a description only. A pod without ``imagePullSecrets`` gets the
account's. Mirror pods (annotation ``kubernetes.io/config.mirror``) are left alone but may
reference no service account, secret or token projection.

**Priority** (``plugin/pkg/admission/priority``): on create, ``priority`` and
``preemptionPolicy`` come from the PriorityClass ``priorityClassName`` names (a 403 ``no
PriorityClass with name x was found`` when none does); a pod naming none gets the global
default class (its name too; of several, the lowest value), or 0 and ``PreemptLowerPriority``.
A priority or preemption policy in the request that differs is refused; an update keeps what
create set. Classes are read from the loopback informer of scheduling.k8s.io PriorityClasses
(:mod:`kplane.plugins.core.lookup`); a server without that group knows the two built-in
``system-*`` classes only. It also refuses a second global default class: ``PriorityClass x is
already marked as default. Only one default can exist``.

**DefaultTolerationSeconds**, on create and update: a pod that does not already tolerate
``node.kubernetes.io/not-ready`` / ``unreachable`` ``NoExecute`` taints gets tolerations for
them lasting 300 seconds.
"""

from __future__ import annotations

from typing import Any

from kplane.api import AdmissionRequest, Informer, Operation, Registry, deny
from kplane.plugins.core import lookup
from kplane.plugins.core.types import Container, LocalObjectReference, Pod, VolumeMount
from kplane.plugins.core.v1.defaults import VOLUME_FILE_MODE, dicts

DEFAULT_SERVICE_ACCOUNT = "default"
MIRROR_POD_ANNOTATION = "kubernetes.io/config.mirror"
TOKEN_VOLUME_PREFIX = "kube-api-access-"
TOKEN_MOUNT_PATH = "/var/run/secrets/kubernetes.io/serviceaccount"
TOKEN_EXPIRATION_SECONDS = 3607  # WarnOnlyBoundTokenExpirationSeconds

SYSTEM_PRIORITY_CLASSES = {"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}
DEFAULT_PREEMPTION_POLICY = "PreemptLowerPriority"

TOLERATION_SECONDS = 300
NOT_READY_TAINT = "node.kubernetes.io/not-ready"
UNREACHABLE_TAINT = "node.kubernetes.io/unreachable"


def _pod(request: AdmissionRequest) -> Pod | None:
    """The pod a request writes, when it is one these plugins look at."""
    rt = request.resource
    if rt.group != "" or rt.plural != "pods" or request.subresource or not isinstance(request.obj, Pod):
        return None
    return request.obj


def _containers(pod: Pod) -> list[Container]:
    return (pod.spec.init_containers or []) + (pod.spec.containers or [])


# -- ServiceAccount ----------------------------------------------------------------------------
def token_volume(name: str) -> dict[str, Any]:
    """``TokenVolumeSource``: the bound token, the cluster's CA bundle and the namespace."""
    return {"name": name, "projected": {
        "sources": [
            {"serviceAccountToken": {"expirationSeconds": TOKEN_EXPIRATION_SECONDS, "path": "token"}},
            {"configMap": {"name": "kube-root-ca.crt", "items": [{"key": "ca.crt", "path": "ca.crt"}]}},
            {"downwardAPI": {"items": [{"path": "namespace", "fieldRef": {"apiVersion": "v1", "fieldPath": "metadata.namespace"}}]}},
        ],
        "defaultMode": VOLUME_FILE_MODE,  # set explicitly, as kube-apiserver does
    }}


def _volume_references_secret(volume: dict[str, Any]) -> bool:
    for key, source in volume.items():
        if not isinstance(source, dict):
            continue
        if key == "secret" or "secretRef" in source or "nodePublishSecretRef" in source:
            return True
        if key == "azureFile" and source.get("secretName"):
            return True
        if key == "projected" and any(p.get("secret") for p in dicts(source.get("sources"))):
            return True
    return False


def _env_references_secret(value_froms: list[Any], env_froms: Any) -> bool:
    return any(isinstance(v, dict) and v.get("secretKeyRef") for v in value_froms) or any(
        source.get("secretRef") for source in dicts(env_froms)
    )


def _references_secrets(pod: Pod) -> bool:
    """Whether the pod names any Secret (``podutil.VisitPodSecretNames``)."""
    if pod.spec.image_pull_secrets or any(_volume_references_secret(v) for v in pod.spec.volumes or ()):
        return True
    for container in _containers(pod):
        if _env_references_secret([var.value_from for var in container.env or ()], container.env_from or []):
            return True
    for raw in dicts(pod.spec.ephemeral_containers):  # kept as wire data
        if _env_references_secret([var.get("valueFrom") for var in dicts(raw.get("env"))], raw.get("envFrom")):
            return True
    return False


def _check_mirror_pod(request: AdmissionRequest, pod: Pod) -> None:
    if pod.spec.service_account_name:
        raise deny(request, "a mirror pod may not reference service accounts")
    if _references_secrets(pod):
        raise deny(request, "a mirror pod may not reference secrets")
    for volume in pod.spec.volumes or ():
        projected = volume.get("projected")
        if isinstance(projected, dict) and any(p.get("serviceAccountToken") for p in dicts(projected.get("sources"))):
            raise deny(request, "a mirror pod may not use ServiceAccountToken volume projections")


def _mount_token(pod: Pod, new_volume_name: str) -> None:
    """``mountServiceAccountToken``: every container without a mount at the token path gets one;
    the volume is added unless the pod already has a ``kube-api-access-`` one."""
    volumes = pod.spec.volumes or []
    existing = next((v["name"] for v in volumes if isinstance(v.get("name"), str) and v["name"].startswith(TOKEN_VOLUME_PREFIX)), None)
    name = existing or new_volume_name
    mounted = False
    for container in _containers(pod):
        if any(mount.mount_path == TOKEN_MOUNT_PATH for mount in container.volume_mounts or ()):
            continue
        container.volume_mounts = [*(container.volume_mounts or []),
                                   VolumeMount(name=name, read_only=True, mount_path=TOKEN_MOUNT_PATH)]
        mounted = True
    if mounted and existing is None:
        pod.spec.volumes = [*volumes, token_volume(name)]


class ServiceAccountAdmission:
    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def __call__(self, request: AdmissionRequest) -> None:
        pod = _pod(request)
        if pod is None or request.operation != Operation.CREATE:
            return
        if MIRROR_POD_ANNOTATION in (pod.metadata.annotations or {}):
            _check_mirror_pod(request, pod)
            return
        spec = pod.spec
        if not spec.service_account_name:
            spec.service_account_name = DEFAULT_SERVICE_ACCOUNT
        account = await self._lookup(request, spec.service_account_name)
        automount = spec.automount_service_account_token
        if automount is None and account is not None:
            automount = account.get("automountServiceAccountToken")
        if automount is not False:
            _mount_token(pod, self.registry.store("", "pods").strategy.generate_name(TOKEN_VOLUME_PREFIX))
        pull_secrets = (account or {}).get("imagePullSecrets") or []
        if not spec.image_pull_secrets and pull_secrets:
            spec.image_pull_secrets = [LocalObjectReference(name=ref.get("name")) for ref in pull_secrets]

    async def _lookup(self, request: AdmissionRequest, name: str) -> dict[str, Any] | None:
        """The ServiceAccount's stored (v1) wire form."""
        store = self.registry.store("", "serviceaccounts")
        account = await store.get_recent(request.namespace, name) if store else None
        if account is None and name != DEFAULT_SERVICE_ACCOUNT:
            raise deny(request, f'error looking up service account {request.namespace}/{name}: '
                                f'serviceaccount "{name}" not found')
        return account


# -- Priority ----------------------------------------------------------------------------------
SCHEDULING = "scheduling.k8s.io"


class PriorityAdmission:
    """``classes`` is the loopback informer of PriorityClasses (None without that group)."""

    def __init__(self, registry: Registry, classes: Informer | None) -> None:
        self.registry = registry
        self.classes = classes

    def _served(self) -> bool:
        return self.registry.store(SCHEDULING, "priorityclasses") is not None

    async def __call__(self, request: AdmissionRequest) -> None:
        rt = request.resource
        if (rt.group, rt.plural) == (SCHEDULING, "priorityclasses") and not request.subresource:
            await self._one_default(request)
            return
        pod = _pod(request)
        if pod is None:
            return
        spec = pod.spec
        if request.operation == Operation.UPDATE:  # what create set stays (validation keeps it unchanged)
            old = request.old.spec
            if spec.priority is None:
                spec.priority = old.priority
            if spec.preemption_policy is None:
                spec.preemption_policy = old.preemption_policy
            return
        if request.operation != Operation.CREATE:
            return
        if spec.priority_class_name:
            found = await self._class(spec.priority_class_name)
            if found is None:
                raise deny(request, f"no PriorityClass with name {spec.priority_class_name} was found")
            value, policy = found
        else:
            name, value, policy = await self._default()
            spec.priority_class_name = name or None
        if spec.priority is not None and spec.priority != value:
            raise deny(request, f"the integer value of priority ({spec.priority}) must not be provided in pod spec; "
                                f"priority admission controller computed {value} from the given PriorityClass name")
        if spec.preemption_policy and spec.preemption_policy != policy:
            raise deny(request, f"the string value of PreemptionPolicy ({spec.preemption_policy}) must not be provided "
                                f"in pod spec; priority admission controller computed {policy} from the given "
                                "PriorityClass name")
        spec.priority = value
        spec.preemption_policy = policy

    async def _class(self, name: str) -> tuple[int, str] | None:
        if not self._served():
            value = SYSTEM_PRIORITY_CLASSES.get(name)
            return None if value is None else (value, DEFAULT_PREEMPTION_POLICY)
        pc = await lookup.get(self.registry, self.classes, SCHEDULING, "priorityclasses", name)
        return None if pc is None else (int(pc.get("value") or 0), pc.get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY)

    async def _defaults(self) -> list[dict[str, Any]]:
        if not self._served():
            return []
        return [pc for pc in await lookup.objects(self.registry, self.classes, SCHEDULING, "priorityclasses") if pc.get("globalDefault")]

    async def _default(self) -> tuple[str, int, str]:
        """``getDefaultPriority``: the global default class of the lowest value, if any."""
        defaults = await self._defaults()
        if not defaults:
            return "", 0, DEFAULT_PREEMPTION_POLICY
        pc = min(defaults, key=lambda c: int(c.get("value") or 0))
        return pc["metadata"]["name"], int(pc.get("value") or 0), pc.get("preemptionPolicy") or DEFAULT_PREEMPTION_POLICY

    async def _one_default(self, request: AdmissionRequest) -> None:
        """``validatePriorityClass``: a class becoming the global default must be the only one."""
        if request.operation not in (Operation.CREATE, Operation.UPDATE) or not request.obj.global_default:
            return
        for pc in await self._defaults():
            if pc["metadata"]["name"] != request.name:
                raise deny(request, f"PriorityClass {pc['metadata']['name']} is already marked as default. Only one default can exist")


# -- DefaultTolerationSeconds ------------------------------------------------------------------
def _tolerates(tolerations: list[Any], taint: str) -> bool:
    """A toleration of the taint's key, or of every key, for NoExecute or every effect."""
    return any(
        isinstance(t, dict) and t.get("key") in (None, "", taint) and t.get("effect") in (None, "", "NoExecute")
        for t in tolerations
    )


def default_toleration_seconds(request: AdmissionRequest) -> None:
    pod = _pod(request)
    if pod is None or request.operation not in (Operation.CREATE, Operation.UPDATE):
        return
    tolerations = list(pod.spec.tolerations or [])
    for taint in (NOT_READY_TAINT, UNREACHABLE_TAINT):
        if not _tolerates(tolerations, taint):
            tolerations.append({"key": taint, "operator": "Exists", "effect": "NoExecute",
                                "tolerationSeconds": TOLERATION_SECONDS})
    if tolerations != (pod.spec.tolerations or []):
        pod.spec.tolerations = tolerations

