"""The pods of a Job as its controller sees and makes them: which are active, finished or
terminating, their completion index, what a failed one matches in the pod failure policy, and a
new pod from the template (``pkg/controller/job/indexed_job_utils.go``, ``pod_failure_policy.go``)."""

from __future__ import annotations

import copy
from typing import Any

from kplane.api import get_condition
from kplane.api import ownership as own

Obj = dict[str, Any]

API_VERSION, KIND = "batch/v1", "Job"
TRACKING_FINALIZER = "batch.kubernetes.io/job-tracking"
COMPLETION_INDEX = "batch.kubernetes.io/job-completion-index"
INDEX_ENV = "JOB_COMPLETION_INDEX"


def phase(pod: Obj) -> str:
    return str((pod.get("status") or {}).get("phase") or "")


def is_finished(pod: Obj) -> bool:
    return phase(pod) in ("Succeeded", "Failed")


def is_active(pod: Obj) -> bool:
    return not is_finished(pod) and not pod["metadata"].get("deletionTimestamp")


def is_terminating(pod: Obj) -> bool:
    return not is_finished(pod) and bool(pod["metadata"].get("deletionTimestamp"))


def is_failed(pod: Obj, replacement_policy: str) -> bool:
    """``isPodFailed``: Failed; or, unless only failed pods are replaced, deleted before it succeeded
    (an orphaned pod may never reach a phase)."""
    if phase(pod) == "Failed":
        return True
    if replacement_policy == "Failed":
        return False
    return bool(pod["metadata"].get("deletionTimestamp")) and phase(pod) != "Succeeded"


def has_finalizer(pod: Obj) -> bool:
    return TRACKING_FINALIZER in (pod["metadata"].get("finalizers") or [])


def is_ready(pod: Obj) -> bool:
    return (get_condition(pod.get("status") or {}, "Ready") or {}).get("status") == "True"


def index_of(pod: Obj) -> int | None:
    """The pod's completion index from its annotation (its label as a fallback), None if unreadable."""
    meta = pod["metadata"]
    text = (meta.get("annotations") or {}).get(COMPLETION_INDEX) or (meta.get("labels") or {}).get(COMPLETION_INDEX)
    if text is None or not text.isdigit() or len(text) > 9:
        return None
    return int(text)


def restarts(pod: Obj) -> int:
    status = pod.get("status") or {}
    return sum(int(c.get("restartCount") or 0) for c in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])])


def matched_rule(job: Obj, pod: Obj) -> tuple[str, str] | None:
    """The action of the first pod failure policy rule the failed ``pod`` matches, and the
    message a FailJob rule's condition gets; None when no rule matches."""
    rules = ((own.spec(job).get("podFailurePolicy") or {}).get("rules")) or []
    status = pod.get("status") or {}
    meta = pod["metadata"]
    for i, rule in enumerate(rules):
        codes = rule.get("onExitCodes")
        if codes:
            for c in [*(status.get("initContainerStatuses") or []), *(status.get("containerStatuses") or [])]:
                if codes.get("containerName") and codes["containerName"] != c.get("name"):
                    continue
                code = ((c.get("state") or {}).get("terminated") or {}).get("exitCode")
                if code is None or code == 0:
                    continue
                inside = code in (codes.get("values") or [])
                if inside == (codes.get("operator") == "In"):
                    return rule.get("action", ""), (f"Container {c.get('name')} for pod {meta.get('namespace')}/{meta.get('name')} failed "
                                                   f"with exit code {code} matching {rule.get('action')} rule at index {i}")
        for pattern in rule.get("onPodConditions") or []:
            found = get_condition(status, pattern.get("type", ""))
            if found is not None and found.get("status") == (pattern.get("status") or "True"):
                return rule.get("action", ""), (f"Pod {meta.get('namespace')}/{meta.get('name')} has condition {pattern.get('type')} "
                                               f"matching {rule.get('action')} rule at index {i}")
    return None


def new_pod(job: Obj, index: int | None) -> Obj:
    """A pod of ``job`` from its template, with the tracking finalizer and the Job as controller;
    an Indexed Job's carries its index (annotation, label, hostname, ``JOB_COMPLETION_INDEX``)."""
    template = own.spec(job).get("template") or {}
    template_meta = template.get("metadata") or {}
    name = job["metadata"]["name"]
    meta: Obj = {"generateName": f"{name}-" if index is None else f"{name}-{index}-",
                 "ownerReferences": [own.controller_reference(job, API_VERSION, KIND)]}
    for key in ("labels", "annotations"):
        if template_meta.get(key):
            meta[key] = copy.deepcopy(template_meta[key])
    meta["finalizers"] = [*(template_meta.get("finalizers") or []), TRACKING_FINALIZER]
    spec = copy.deepcopy(template.get("spec") or {})
    if index is not None:
        meta["annotations"] = {**(meta.get("annotations") or {}), COMPLETION_INDEX: str(index)}
        meta["labels"] = {**(meta.get("labels") or {}), COMPLETION_INDEX: str(index)}
        spec.setdefault("hostname", f"{name}-{index}")
        env = {"name": INDEX_ENV, "valueFrom": {"fieldRef": {"apiVersion": "v1", "fieldPath": f"metadata.annotations['{COMPLETION_INDEX}']"}}}
        for group in ("initContainers", "containers"):
            for container in spec.get(group) or []:
                if not any(e.get("name") == INDEX_ENV for e in container.get("env") or []):
                    container["env"] = [*(container.get("env") or []), env]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": spec}
