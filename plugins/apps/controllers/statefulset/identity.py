"""A StatefulSet pod's identity and storage, read and made from wire-form objects
(``stateful_set_utils.go``): pure functions, no API calls.

Replica ``i`` of set ``web`` is the pod ``web-i`` (``i`` from ``spec.ordinals.start``), labelled
``statefulset.kubernetes.io/pod-name`` and ``apps.kubernetes.io/pod-index``, with hostname
``web-i`` and subdomain ``spec.serviceName``; for each of ``volumeClaimTemplates`` it mounts the
claim ``<template>-web-i`` as the volume of the template's name. Its ``controller-revision-hash``
label is the name of the ControllerRevision it was made from.
"""

from __future__ import annotations

import copy
import re
import time
from typing import Any

from kplane.api import clock, get_condition, ownership as own
from kplane.plugins.apps.controllers.history import HASH_LABEL

Obj = dict[str, Any]

API_VERSION, KIND = "apps/v1", "StatefulSet"
POD_NAME_LABEL = "statefulset.kubernetes.io/pod-name"
POD_INDEX_LABEL = "apps.kubernetes.io/pod-index"
RETAIN, DELETE = "Retain", "Delete"
_ORDINAL = re.compile(r"^(.*)-([0-9]+)$")


def parent_and_ordinal(pod: Obj) -> tuple[str, int]:
    """The set name and ordinal a pod's name ends in; ('', -1) for a name that has none (an
    ordinal is an int32, as kube parses it)."""
    match = _ORDINAL.match(pod["metadata"].get("name", ""))
    if match is None or len(match.group(2)) > 10 or int(match.group(2)) > 2**31 - 1:
        return "", -1
    return match.group(1), int(match.group(2))


def ordinal(pod: Obj) -> int:
    return parent_and_ordinal(pod)[1]


def start_ordinal(sts: Obj) -> int:
    return int((own.spec(sts).get("ordinals") or {}).get("start") or 0)


def pod_name(sts: Obj, index: int) -> str:
    return f"{sts['metadata']['name']}-{index}"


def template_name(template: Obj) -> str:
    """A claim template's name ('' when unset: the claims made from it are then refused, and the
    pods wait with FailedCreate events, as in Kubernetes)."""
    return str((template.get("metadata") or {}).get("name") or "")


def claim_name(sts: Obj, template: Obj, index: int) -> str:
    return f"{template_name(template)}-{sts['metadata']['name']}-{index}"


def claim_templates(sts: Obj) -> list[Obj]:
    return own.spec(sts).get("volumeClaimTemplates") or []


def is_member(sts: Obj, pod: Obj) -> bool:
    return parent_and_ordinal(pod)[0] == sts["metadata"]["name"]


def revision_of(pod: Obj) -> str:
    return (pod["metadata"].get("labels") or {}).get(HASH_LABEL, "")


def identity_matches(sts: Obj, pod: Obj) -> bool:
    """The pod has the name, labels, hostname and subdomain replica ``ordinal(pod)`` must have."""
    parent, index = parent_and_ordinal(pod)
    labels = pod["metadata"].get("labels") or {}
    spec = own.spec(pod)
    return (index >= 0 and parent == sts["metadata"]["name"] and pod["metadata"].get("namespace") == sts["metadata"]["namespace"]
            and labels.get(POD_NAME_LABEL) == pod["metadata"]["name"] and labels.get(POD_INDEX_LABEL) == str(index)
            and spec.get("hostname") == pod["metadata"]["name"] and (spec.get("subdomain") or "") == (own.spec(sts).get("serviceName") or ""))


def storage_matches(sts: Obj, pod: Obj) -> bool:
    """Each claim template is mounted as the pod's own claim."""
    index = ordinal(pod)
    if index < 0:
        return False
    volumes = {v.get("name"): v for v in own.spec(pod).get("volumes") or []}
    for template in claim_templates(sts):
        source = (volumes.get(template_name(template)) or {}).get("persistentVolumeClaim") or {}
        if source.get("claimName") != claim_name(sts, template, index):
            return False
    return True


def claims_for(sts: Obj, index: int) -> dict[str, Obj]:
    """The claims replica ``index`` mounts, by template name: each template's copy named for the
    replica, labelled with the template's labels and the selector's matchLabels."""
    claims: dict[str, Obj] = {}
    for template in claim_templates(sts):
        meta = copy.deepcopy(template.get("metadata") or {})
        meta["name"] = claim_name(sts, template, index)
        meta["namespace"] = sts["metadata"]["namespace"]
        meta["labels"] = {**(meta.get("labels") or {}), **((own.spec(sts).get("selector") or {}).get("matchLabels") or {})}
        claims[template_name(template)] = {"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": meta,
                                                "spec": copy.deepcopy(template.get("spec") or {})}
    return claims


def set_identity(sts: Obj, pod: Obj) -> None:
    """Give ``pod`` (a copy) the name, labels, hostname, subdomain and claims of its ordinal (``updateIdentity``, ``updateStorage``)."""
    index = ordinal(pod)
    meta, spec = pod["metadata"], pod.setdefault("spec", {})
    meta["name"] = pod_name(sts, index)
    meta["namespace"] = sts["metadata"]["namespace"]
    meta["labels"] = {**(meta.get("labels") or {}), POD_NAME_LABEL: meta["name"], POD_INDEX_LABEL: str(index)}
    spec["hostname"] = meta["name"]
    if own.spec(sts).get("serviceName"):
        spec["subdomain"] = own.spec(sts)["serviceName"]
    else:
        spec.pop("subdomain", None)
    claims = claims_for(sts, index)
    mounted = [{"name": name, "persistentVolumeClaim": {"claimName": claim["metadata"]["name"]}} for name, claim in claims.items()]
    spec["volumes"] = mounted + [v for v in spec.get("volumes") or [] if v.get("name") not in claims]
    if not spec["volumes"]:
        del spec["volumes"]


def new_pod(sts: Obj, template_owner: Obj, revision: str, index: int) -> Obj:
    """Replica ``index`` made from ``template_owner``'s template (the set as of ``revision``),
    controlled by ``sts`` (``newVersionedStatefulSetPod``)."""
    template = own.spec(template_owner).get("template") or {}
    template_meta = template.get("metadata") or {}
    meta: Obj = {"name": pod_name(sts, index), "ownerReferences": [own.controller_reference(sts, API_VERSION, KIND)]}
    for key in ("labels", "annotations", "finalizers"):
        if template_meta.get(key):
            meta[key] = copy.deepcopy(template_meta[key])
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(template.get("spec") or {})}
    set_identity(sts, pod)
    pod["metadata"]["labels"][HASH_LABEL] = revision
    return pod


def apply_revision(sts: Obj, revision: Obj) -> Obj:
    """``sts`` with the template ``revision`` holds (``ApplyRevision``: its data replaces the template)."""
    template = copy.deepcopy(((revision.get("data") or {}).get("spec") or {}).get("template") or {})
    template.pop("$patch", None)
    return {**sts, "spec": {**own.spec(sts), "template": template}}


def retention(sts: Obj) -> tuple[str, str]:
    """(whenDeleted, whenScaled); Retain when unset."""
    policy = own.spec(sts).get("persistentVolumeClaimRetentionPolicy") or {}
    return policy.get("whenDeleted") or RETAIN, policy.get("whenScaled") or RETAIN


def claim_owner_refs(claim: Obj, sts: Obj, pod: Obj | None, condemned: bool) -> list[Obj]:
    """The ownerReferences ``claim`` must have under the set's retention policy
    (``updateClaimOwnerRefForSetAndPod``): a condemned pod's (one a scale-down removes) when
    whenScaled is Delete, else the set's when whenDeleted is Delete; never both, since the
    garbage collector only drops the reference to a gone owner while another owner exists.
    Others' references are kept."""
    when_deleted, when_scaled = retention(sts)
    ours = {own.uid(sts)} | ({own.uid(pod)} if pod is not None else set())
    refs = [r for r in own.owner_refs(claim) if r.get("uid") not in ours]
    if when_scaled == DELETE and condemned and pod is not None and own.uid(pod):
        refs.append(_reference(pod, "v1", "Pod"))
    elif when_deleted == DELETE:
        refs.append(_reference(sts, API_VERSION, KIND))
    return refs


def _reference(owner: Obj, api_version: str, kind: str) -> Obj:
    return {"apiVersion": api_version, "kind": kind, "name": owner["metadata"]["name"], "uid": own.uid(owner)}


# -- pod states ------------------------------------------------------------------------------
def is_created(pod: Obj) -> bool:
    return bool((pod.get("status") or {}).get("phase"))


def is_terminating(pod: Obj) -> bool:
    return bool(pod["metadata"].get("deletionTimestamp"))


def is_finished(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") in ("Failed", "Succeeded")


def is_pending(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Pending"


def _ready(pod: Obj) -> Obj | None:
    condition = get_condition(pod.get("status") or {}, "Ready")
    return condition if condition is not None and condition.get("status") == "True" else None


def is_running_and_ready(pod: Obj) -> bool:
    return (pod.get("status") or {}).get("phase") == "Running" and _ready(pod) is not None


def is_running_and_available(pod: Obj, min_ready_seconds: int, now: float | None = None) -> bool:
    """Ready for at least ``min_ready_seconds``."""
    ready = _ready(pod) if (pod.get("status") or {}).get("phase") == "Running" else None
    if ready is None:
        return False
    return min_ready_seconds <= 0 or clock.epoch(ready.get("lastTransitionTime")) + min_ready_seconds <= (now or time.time())


def is_healthy(pod: Obj) -> bool:
    return is_running_and_ready(pod) and not is_terminating(pod)
