"""Validation of core/v1 kinds (``pkg/apis/core/validation``), on internal objects.

``validate_pod_spec`` is public: every kind embedding a pod template validates it the same way.
"""

from __future__ import annotations

import base64
import dataclasses
import re

from kplane.api import (
    FieldError, FieldErrorType, duplicate, forbidden, invalid, is_dns1123_label, is_dns1123_subdomain,
    not_supported, required, too_long, validate_labels,
)
from kplane.plugins.core.tokens import legacy
from kplane.plugins.core.types import ConfigMap, Container, Event, Pod, PodSpec, Secret

RESTART_POLICIES = ["Always", "OnFailure", "Never"]
DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"]
PULL_POLICIES = ["Always", "IfNotPresent", "Never"]
PROTOCOLS = ["TCP", "UDP", "SCTP"]
MAX_CONFIG_SIZE = 1024 * 1024
_CONFIG_KEY = re.compile(r"^[-._a-zA-Z0-9]+$")
_CONFIG_KEY_MSG = (
    "a valid config key must consist of alphanumeric characters, '-', '_' or '.' "
    "(e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"
)
IMMUTABLE_WHEN_SET = "field is immutable when `immutable` is set"
POD_UPDATE_FORBIDDEN = (
    "pod updates may not change fields other than `spec.containers[*].image`,"
    "`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` "
    "(only additions to existing tolerations),`spec.terminationGracePeriodSeconds` "
    "(allow it to be set to 1 if it was previously negative)"
)


def _names(path: str, value: str, validator: object = is_dns1123_label) -> list[FieldError]:
    return [invalid(path, value, msg) for msg in validator(value)]  # type: ignore[operator]


def _validate_container(c: Container, path: str, volumes: set[str]) -> list[FieldError]:
    errs: list[FieldError] = []
    if not c.name:
        errs.append(required(f"{path}.name"))
    else:
        errs += _names(f"{path}.name", c.name)
    if not c.image:
        errs.append(required(f"{path}.image"))
    if c.image_pull_policy and c.image_pull_policy not in PULL_POLICIES:
        errs.append(not_supported(f"{path}.imagePullPolicy", c.image_pull_policy, PULL_POLICIES))
    for i, port in enumerate(c.ports or ()):
        at = f"{path}.ports[{i}]"
        if port.container_port is None:
            errs.append(required(f"{at}.containerPort"))
        elif not 1 <= port.container_port <= 65535:
            errs.append(invalid(f"{at}.containerPort", port.container_port, "must be between 1 and 65535, inclusive"))
        if port.host_port is not None and not 0 <= port.host_port <= 65535:
            errs.append(invalid(f"{at}.hostPort", port.host_port, "must be between 1 and 65535, inclusive"))
        if port.protocol and port.protocol not in PROTOCOLS:
            errs.append(not_supported(f"{at}.protocol", port.protocol, PROTOCOLS))
    for i, env in enumerate(c.env or ()):
        if not env.name:
            errs.append(required(f"{path}.env[{i}].name"))
    for i, mount in enumerate(c.volume_mounts or ()):
        at = f"{path}.volumeMounts[{i}]"
        if not mount.name:
            errs.append(required(f"{at}.name"))
        elif mount.name not in volumes:
            errs.append(FieldError(FieldErrorType.NOT_FOUND, f"{at}.name", "", mount.name))
        if not mount.mount_path:
            errs.append(required(f"{at}.mountPath"))
    return errs


def validate_pod_spec(spec: PodSpec, path: str) -> list[FieldError]:
    errs: list[FieldError] = []
    volumes: set[str] = set()
    for i, volume in enumerate(spec.volumes or ()):
        name = volume.get("name") or ""
        if not isinstance(name, str):  # volumes are kept as wire data: the schema did not check it
            errs.append(invalid(f"{path}.volumes[{i}].name", name, "must be a string"))
            continue
        if not name:
            errs.append(required(f"{path}.volumes[{i}].name"))
        elif name in volumes:
            errs.append(duplicate(f"{path}.volumes[{i}].name", name))
        else:
            errs += _names(f"{path}.volumes[{i}].name", name)
        volumes.add(name)
    if not spec.containers:
        errs.append(required(f"{path}.containers"))
    seen: set[str] = set()
    for group, containers in (("initContainers", spec.init_containers), ("containers", spec.containers)):
        for i, container in enumerate(containers or ()):
            at = f"{path}.{group}[{i}]"
            errs += _validate_container(container, at, volumes)
            if container.name and container.name in seen:
                errs.append(duplicate(f"{at}.name", container.name))
            seen.add(container.name)
    if spec.restart_policy and spec.restart_policy not in RESTART_POLICIES:
        errs.append(not_supported(f"{path}.restartPolicy", spec.restart_policy, RESTART_POLICIES))
    if spec.dns_policy and spec.dns_policy not in DNS_POLICIES:
        errs.append(not_supported(f"{path}.dnsPolicy", spec.dns_policy, DNS_POLICIES))
    if spec.termination_grace_period_seconds is not None and spec.termination_grace_period_seconds < 0:
        errs.append(invalid(f"{path}.terminationGracePeriodSeconds", spec.termination_grace_period_seconds, "must be greater than or equal to 0"))
    if spec.active_deadline_seconds is not None and spec.active_deadline_seconds <= 0:
        errs.append(invalid(f"{path}.activeDeadlineSeconds", spec.active_deadline_seconds, "must be between 1 and 2147483647, inclusive"))
    errs += validate_labels(spec.node_selector, f"{path}.nodeSelector")
    if spec.service_account_name:
        errs += _names(f"{path}.serviceAccountName", spec.service_account_name, is_dns1123_subdomain)
    if spec.node_name:
        errs += _names(f"{path}.nodeName", spec.node_name, is_dns1123_subdomain)
    return errs


def validate_pod_update(pod: Pod, old: Pod) -> list[FieldError]:
    """Only images, activeDeadlineSeconds, tolerations and the grace period may change."""
    mutable = dataclasses.replace(old.spec)
    mutable.containers = [dataclasses.replace(o, image=n.image) for o, n in zip(old.spec.containers or [], pod.spec.containers or [])]
    mutable.init_containers = (
        [dataclasses.replace(o, image=n.image) for o, n in zip(old.spec.init_containers or [], pod.spec.init_containers or [])]
        if old.spec.init_containers is not None
        else None
    )
    mutable.active_deadline_seconds = pod.spec.active_deadline_seconds
    mutable.tolerations = pod.spec.tolerations
    mutable.termination_grace_period_seconds = pod.spec.termination_grace_period_seconds
    if len(pod.spec.containers or []) != len(old.spec.containers or []) or mutable != pod.spec:
        return [forbidden("spec", POD_UPDATE_FORBIDDEN)]
    return []


def _validate_config_keys(keys: list[str], path: str) -> list[FieldError]:
    errs = []
    for key in keys:
        if not _CONFIG_KEY.match(key):
            errs.append(invalid(f"{path}[{key}]", key, _CONFIG_KEY_MSG))
        elif len(key) > 253:
            errs.append(invalid(f"{path}[{key}]", key, "must be no more than 253 characters"))
    return errs


def validate_config_map(cm: ConfigMap) -> list[FieldError]:
    data, binary = cm.data or {}, cm.binary_data or {}
    errs = _validate_config_keys(list(data), "data") + _validate_config_keys(list(binary), "binaryData")
    for key in data.keys() & binary.keys():
        errs.append(invalid(f"data[{key}]", key, "duplicate of key present in binaryData"))
    size = sum(len(v) for v in data.values()) + sum(len(base64.b64decode(v)) for v in binary.values())
    if size > MAX_CONFIG_SIZE:
        errs.append(too_long("", "", MAX_CONFIG_SIZE))
    return errs


def validate_immutable_data(new: ConfigMap | Secret, old: ConfigMap | Secret, extra: tuple[str, ...] = ()) -> list[FieldError]:
    """Once ``immutable: true`` is set, data (and ``immutable`` itself) can never change."""
    if not old.immutable:
        return []
    errs = []
    if not new.immutable:
        errs.append(forbidden("immutable", IMMUTABLE_WHEN_SET))
    for name, wire in (("data", "data"), *extra):
        if getattr(new, name) != getattr(old, name):
            errs.append(forbidden(wire, IMMUTABLE_WHEN_SET))
    return errs


SECRET_REQUIRED_KEYS = {
    "kubernetes.io/tls": ("tls.crt", "tls.key"),
    "kubernetes.io/dockerconfigjson": (".dockerconfigjson",),
    "kubernetes.io/dockercfg": (".dockercfg",),
}


def validate_secret(secret: Secret) -> list[FieldError]:
    data = secret.data or {}
    errs = _validate_config_keys(list(data), "data")
    for key in SECRET_REQUIRED_KEYS.get(secret.type or "", ()):
        if key not in data:
            errs.append(required(f"data[{key}]"))
    if secret.type == legacy.SECRET_TYPE and not (secret.metadata.annotations or {}).get(legacy.NAME_ANNOTATION):
        errs.append(required(f"metadata.annotations[{legacy.NAME_ANNOTATION}]"))
    if sum(len(base64.b64decode(v)) for v in data.values()) > MAX_CONFIG_SIZE:
        errs.append(too_long("data", "", MAX_CONFIG_SIZE))
    return errs


def validate_event(event: Event) -> list[FieldError]:
    errs = []
    involved = event.involved_object
    if involved.namespace and involved.namespace != event.metadata.namespace:
        errs.append(invalid("involvedObject.namespace", involved.namespace, "does not match event.namespace"))
    if not event.reason and not event.reporting_component and not involved.name:
        errs.append(required("involvedObject.name"))
    return errs
