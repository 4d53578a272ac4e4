"""core/v1 defaulting (``pkg/apis/core/v1/defaults.go`` and the generated
``zz_generated.defaults.go`` that says which of its functions apply to which nested types), on
decoded Python-named data.

:func:`default_pod_spec` is what every PodSpec gets, a Pod's or a pod template's (Deployments,
ReplicaSets): ``SetDefaults_PodSpec`` and the defaults of its volumes and containers.
:func:`default_pod` adds what only a Pod gets (``SetDefaults_Pod``): requests from limits,
``enableServiceLinks``, host ports under ``hostNetwork``.

Structures the schema keeps as plain dicts (volume sources, probes, lifecycle handlers,
``valueFrom``) hold wire (camelCase) keys.
"""

from __future__ import annotations

import re
from typing import Any

Obj = dict[str, Any]

_COMPONENT = r"[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
_DOMAIN_PART = r"[a-zA-Z0-9](?:[a-zA-Z0-9-]*[a-zA-Z0-9])?"
_IMAGE = re.compile(
    rf"(?P<name>(?:{_DOMAIN_PART}(?:\.{_DOMAIN_PART})*(?::[0-9]+)?/)?{_COMPONENT}(?:/{_COMPONENT})*)"
    r"(?::(?P<tag>[\w][\w.-]{0,127}))?"
    r"(?:@(?P<digest>[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}))?"
)
_MAX_NAME = 255  # docker reference's NameTotalLengthMax
_MAX_REFERENCE = 1024  # beyond any name, tag and digest that parse; keeps the match cheap

VOLUME_FILE_MODE = 0o644  # defaultMode of secret, configMap, downwardAPI and projected volumes
# Declarative (+default) values of volume sources nobody uses much any more, by source.
_SOURCE_DEFAULTS: dict[str, Obj] = {
    "hostPath": {"type": ""},
    "secret": {"defaultMode": VOLUME_FILE_MODE},
    "configMap": {"defaultMode": VOLUME_FILE_MODE},
    "downwardAPI": {"defaultMode": VOLUME_FILE_MODE},
    "projected": {"defaultMode": VOLUME_FILE_MODE},
    "iscsi": {"iscsiInterface": "default"},
    "rbd": {"pool": "rbd", "user": "admin", "keyring": "/etc/ceph/keyring"},
    "azureDisk": {"cachingMode": "ReadWrite", "fsType": "ext4", "readOnly": False, "kind": "Shared"},
    "scaleIO": {"storageMode": "ThinProvisioned", "fsType": "xfs"},
}
_PROBES = ("liveness_probe", "readiness_probe", "startup_probe")
_PROBE_DEFAULTS = {"timeoutSeconds": 1, "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3}


def image_pull_policy(image: str) -> str:
    """``Always`` for the ``latest`` tag, explicit or implied by a reference with neither tag
    nor digest; else ``IfNotPresent``, also for a reference that does not parse (as
    ``parsers.ParseImageName`` fails)."""
    match = _IMAGE.fullmatch(image) if len(image) <= _MAX_REFERENCE else None
    if match is None or len(match["name"]) > _MAX_NAME:
        return "IfNotPresent"
    tag = match["tag"] or ("latest" if not match["digest"] else "")
    return "Always" if tag == "latest" else "IfNotPresent"


def dicts(value: Any) -> list[Obj]:
    """The objects of a list in a part the schema keeps as wire data (which validation checks
    later, so anything may be there yet)."""
    return [item for item in value if isinstance(item, dict)] if isinstance(value, list) else []


def _fill(target: Obj, values: Obj) -> None:
    """Set each of ``values`` that ``target`` lacks (or has as null)."""
    for key, value in values.items():
        if target.get(key) is None:
            target[key] = value


def _field_ref(holder: Any) -> None:
    """``SetDefaults_ObjectFieldSelector``: a fieldRef's apiVersion is v1."""
    if isinstance(holder, dict) and isinstance(holder.get("fieldRef"), dict):
        if not holder["fieldRef"].get("apiVersion"):
            holder["fieldRef"]["apiVersion"] = "v1"


def _downward_items(source: Any) -> None:
    if isinstance(source, dict):
        for item in dicts(source.get("items")):
            _field_ref(item)


def _http_get(handler: Any) -> None:
    """``SetDefaults_HTTPGetAction``: path / and scheme HTTP."""
    if isinstance(handler, dict) and isinstance(handler.get("httpGet"), dict):
        get = handler["httpGet"]
        if not get.get("path"):
            get["path"] = "/"
        if not get.get("scheme"):
            get["scheme"] = "HTTP"


def _probe(probe: Any) -> None:
    """``SetDefaults_Probe``: zero counts and periods get their defaults; a gRPC probe's service is ""."""
    if not isinstance(probe, dict):
        return
    for key, value in _PROBE_DEFAULTS.items():
        if not probe.get(key):
            probe[key] = value
    _http_get(probe)
    if isinstance(probe.get("grpc"), dict) and probe["grpc"].get("service") is None:
        probe["grpc"]["service"] = ""


def default_volume(volume: Obj) -> None:
    """``SetDefaults_Volume``: a volume with no source is an ``emptyDir``; then each source's own."""
    if all(key == "name" or value is None for key, value in volume.items()):
        volume["emptyDir"] = {}
    for source, values in _SOURCE_DEFAULTS.items():
        if isinstance(volume.get(source), dict):
            _fill(volume[source], values)
    _downward_items(volume.get("downwardAPI"))
    projected = volume.get("projected")
    if isinstance(projected, dict):
        for projection in dicts(projected.get("sources")):
            _downward_items(projection.get("downwardAPI"))
            token = projection.get("serviceAccountToken")
            if isinstance(token, dict) and token.get("expirationSeconds") is None:
                token["expirationSeconds"] = 3600
    ephemeral = volume.get("ephemeral")
    claim = ephemeral.get("volumeClaimTemplate") if isinstance(ephemeral, dict) else None
    if isinstance(claim, dict) and isinstance(claim.get("spec"), dict) and not claim["spec"].get("volumeMode"):
        claim["spec"]["volumeMode"] = "Filesystem"


def default_container(container: Obj) -> None:
    """``SetDefaults_Container`` and the defaults of what a container holds."""
    if not container.get("image_pull_policy"):
        container["image_pull_policy"] = image_pull_policy(container.get("image") or "")
    if not container.get("termination_message_path"):
        container["termination_message_path"] = "/dev/termination-log"
    if not container.get("termination_message_policy"):
        container["termination_message_policy"] = "File"
    if container.get("resources") is None:
        container["resources"] = {}  # a struct, not a pointer, in Go: always written
    for port in container.get("ports") or ():
        if not port.get("protocol"):
            port["protocol"] = "TCP"
    for env in container.get("env") or ():
        _field_ref(env.get("value_from"))
    for probe in _PROBES:
        _probe(container.get(probe))
    lifecycle = container.get("lifecycle")
    if isinstance(lifecycle, dict):
        _http_get(lifecycle.get("postStart"))
        _http_get(lifecycle.get("preStop"))


def default_pod_spec(spec: Obj) -> None:
    """What any PodSpec gets, a Pod's or a template's."""
    _fill(spec, {
        "dns_policy": "ClusterFirst",
        "restart_policy": "Always",
        "security_context": {},
        "termination_grace_period_seconds": 30,
        "scheduler_name": "default-scheduler",
    })
    for volume in spec.get("volumes") or ():
        if isinstance(volume, dict):
            default_volume(volume)
    for container in _containers(spec):
        default_container(container)


def _containers(spec: Obj) -> list[Obj]:
    """A pod spec's init containers and containers."""
    return (spec.get("init_containers") or []) + (spec.get("containers") or [])


def default_pod(pod: Obj) -> None:
    """``SetObjectDefaults_Pod``: ``SetDefaults_Pod``, then what every PodSpec gets."""
    spec = pod.get("spec")
    if spec is None:
        spec = pod["spec"] = {}
    for container in _containers(spec):
        resources = container.get("resources") or {}
        if resources.get("limits"):  # requests default to the limits
            requests = resources["requests"] = resources.get("requests") or {}
            for name, quantity in resources["limits"].items():
                requests.setdefault(name, quantity)
        if spec.get("host_network"):  # host ports default to the container ports
            for port in container.get("ports") or ():
                if not port.get("host_port"):
                    port["host_port"] = port.get("container_port")
    if spec.get("enable_service_links") is None:
        spec["enable_service_links"] = True
    default_pod_spec(spec)


def default_secret(secret: Obj) -> None:
    if not secret.get("type"):
        secret["type"] = "Opaque"


def default_node(node: Obj) -> None:
    """``SetDefaults_NodeStatus``: what is allocatable defaults to the capacity."""
    status = node.get("status")
    if status and status.get("allocatable") is None and status.get("capacity") is not None:
        status["allocatable"] = dict(status["capacity"])
