"""``pods/eviction``: a POSTed policy Eviction deletes the pod unless a PodDisruptionBudget
forbids it (kube-apiserver's ``pkg/registry/core/pod/storage/eviction.go``).

* A pod that is Pending, Succeeded, Failed or already being deleted is deleted at once: it is
  disrupted already, and no budget is asked.
* Otherwise the namespace's budgets whose selector matches the pod are found (a null or empty
  selector matches nothing here). More than one is a 500; none: the pod is deleted.
* A pod that is not Ready is deleted without using up the budget when the budget says
  ``unhealthyPodEvictionPolicy: AlwaysAllow``, or when it is met already (currentHealthy ≥
  desiredHealthy > 0); the deletion is then guarded by the pod's resourceVersion, and a pod that
  changed meanwhile answers 429 so the client tries again.
* Else the budget must allow a disruption: a status the controller has not computed for the
  current generation is a 429 ("still being processed", retry after 10 s), no disruption left a
  429 "Cannot evict pod as it would violate the pod's disruption budget." with a
  ``DisruptionBudget`` cause saying how many healthy pods it needs. An allowed eviction takes one
  off ``disruptionsAllowed`` and records the pod in ``disruptedPods`` in one guarded write of the
  budget's status, so two evictions never both take the last disruption.

The pod gets the ``DisruptionTarget`` condition (reason ``EvictionByEvictionAPI``) before it is
deleted with the Eviction's ``deleteOptions``. A dry run (``?dryRun=All`` or the options') checks
everything and writes nothing. Without the policy group served there are no budgets.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from kplane.api import (
    APIError, Condition, DeleteOptions, GroupVersionKind, ListOptions, Registry, RequestContext, Served, Store, clock,
    deleteoptions, errors, ownership as own,
)
from kplane.plugins.core.types import Pod, PodCondition
from kplane.plugins.policy.budget import disruption_allowed
from kplane.plugins.policy.types import ALWAYS_ALLOW, DISRUPTION_ALLOWED, PodDisruptionBudget
from kplane.plugins.policy.v1 import protobuf as policy_protobuf
from kplane.plugins.policy.v1 import schemas as policy_schemas

API_VERSIONS = ("policy/v1", "policy/v1beta1")  # ``AcceptsGroupVersion``
#: The most admitted evictions a budget may hold before the controller has seen them carried out.
MAX_DISRUPTED_PODS = 2000
DISRUPTION_BUDGET_CAUSE = "DisruptionBudget"
DISRUPTION_TARGET = "DisruptionTarget"
VIOLATES = "Cannot evict pod as it would violate the pod's disruption budget."
_NO_DISRUPTION = PodCondition(type=DISRUPTION_TARGET, status="True", reason="EvictionByEvictionAPI",
                              message="Eviction API: evicting")


def too_many_requests(cause: str, retry_after: int) -> APIError:
    """kube's ``NewTooManyRequests`` with a ``DisruptionBudget`` cause."""
    details: dict[str, Any] = {"causes": [{"reason": DISRUPTION_BUDGET_CAUSE, "message": cause}]}
    if retry_after:
        details["retryAfterSeconds"] = retry_after
    return APIError(429, errors.StatusReason.TOO_MANY_REQUESTS, VIOLATES, details)


def still_processed(name: str) -> APIError:
    return too_many_requests(f"The disruption budget {name} is still being processed by the server.", 10)


class EvictionREST(Served):
    """Creates policy/v1 (or v1beta1) Evictions of the pod named in the URL."""

    kind = GroupVersionKind("policy", "v1", "Eviction")
    schema = policy_schemas.EvictionSchema
    protobuf = policy_protobuf.EVICTION
    own_kind = True

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def create(self, ctx: RequestContext, obj: Any) -> dict[str, Any]:
        options = _eviction_options(ctx, obj)
        pods = self._store("", "pods")
        pod = await pods.get_internal(ctx.namespace, ctx.name)
        if pod is None:
            raise errors.not_found("pods", "", ctx.name)
        if _can_ignore_budgets(pod):
            if _enforce_resource_version(pod) and options.preconditions.resource_version is None:
                options = _pinned(options, pod.metadata.resource_version)
            await self._delete(ctx, options)
            return _success()
        budgets = await self._budgets_of(ctx, pod)
        if len(budgets) > 1:
            raise APIError(500, errors.StatusReason.INTERNAL_ERROR,
                           "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.")
        if budgets:
            budget = budgets[0]
            if not _ready(pod) and _unhealthy_may_go(budget):
                guarded = options.preconditions.resource_version is None
                if guarded:
                    options = _pinned(options, pod.metadata.resource_version)
                try:
                    await self._delete(ctx, options)
                except APIError as err:
                    if err.code == 409 and guarded:
                        raise still_processed(budget.metadata.name or "") from None
                    raise
                return _success()
            await self._take_disruption(ctx, budget.metadata.name or "", ctx.name, dry_run=bool(options.dry_run))
        await self._delete(ctx, options)
        return _success()

    def _store(self, group: str, plural: str, subresource: str = "") -> Store:
        store = self.registry.store(group, plural, subresource)
        assert store is not None  # pods are served whenever their eviction is
        return store

    async def _budgets_of(self, ctx: RequestContext, pod: Pod) -> list[PodDisruptionBudget]:
        """The budgets of the pod's namespace whose selector matches it (``getPodDisruptionBudgets``)."""
        store = self.registry.store("policy", "poddisruptionbudgets")
        if store is None:
            return []
        listing = dataclasses.replace(ctx, group="policy", version="v1", resource="poddisruptionbudgets", subresource="", name="")
        page = await store.list(listing, ListOptions())
        found = []
        for item in page.items:
            wire = item.obj
            selector = own.selector(wire)  # None for a null or empty selector: it matches nothing here
            if selector is not None and selector.matches(pod.metadata.labels):
                found.append(await store.get_internal(ctx.namespace, wire["metadata"]["name"]))
        return [b for b in found if b is not None]

    async def _take_disruption(self, ctx: RequestContext, name: str, pod_name: str, *, dry_run: bool) -> None:
        """``checkAndDecrement``, inside the guarded write of the budget's status."""
        store = self._store("policy", "poddisruptionbudgets", "status")
        writing = dataclasses.replace(ctx, group="policy", version="v1", resource="poddisruptionbudgets", subresource="status",
                                      name=name, dry_run=ctx.dry_run or dry_run)

        async def take(budget: PodDisruptionBudget) -> PodDisruptionBudget:
            status = budget.status
            if (status.observed_generation or 0) < (budget.metadata.generation or 0):
                raise still_processed(name)
            allowed = status.disruptions_allowed or 0
            if allowed < 0:
                raise errors.forbidden_error("poddisruptionbudget", "policy", name, "pdb disruptions allowed is negative")
            if len(status.disrupted_pods or {}) > MAX_DISRUPTED_PODS:
                raise errors.forbidden_error("poddisruptionbudget", "policy", name,
                                             "DisruptedPods map too big - too many evictions not confirmed by PDB controller")
            if allowed == 0:
                raise too_many_requests(f"The disruption budget {name} needs {status.desired_healthy or 0} healthy pods "
                                        f"and has {status.current_healthy or 0} currently", 0)
            status.disruptions_allowed = allowed - 1
            if status.disruptions_allowed == 0:
                _set_disruption_allowed(budget)
            status.disrupted_pods = {**(status.disrupted_pods or {}), pod_name: clock.now()}
            return budget

        await store.update(writing, name, take)

    async def _delete(self, ctx: RequestContext, options: DeleteOptions) -> None:
        """``addConditionAndDeletePod``: the DisruptionTarget condition first, then the deletion."""
        deleting = dataclasses.replace(ctx, subresource="", dry_run=ctx.dry_run or bool(options.dry_run))
        if not deleting.dry_run:
            status = self._store("", "pods", "status")

            async def mark(pod: Pod) -> Pod:
                _check(pod, options)
                _set_pod_condition(pod, _NO_DISRUPTION)
                return pod

            written, _ = await status.update(dataclasses.replace(ctx, subresource="status"), ctx.name, mark)
            if options.preconditions.resource_version is not None:  # our own write must not trip the deletion
                options = _pinned(options, written.obj["metadata"]["resourceVersion"])
        await self._store("", "pods").delete(deleting, ctx.name, options)


def _eviction_options(ctx: RequestContext, body: Any) -> DeleteOptions:
    """The Eviction's checked deleteOptions, with the request's dry run (``propagateDryRun``)."""
    if not isinstance(body, dict):
        raise errors.bad_request("the body of an eviction must be an Eviction object")
    if body.get("kind") not in (None, "", "Eviction") or body.get("apiVersion") not in (None, "", *API_VERSIONS):
        raise errors.bad_request(f"not a Eviction object: {body.get('apiVersion', '')} {body.get('kind', '')}".rstrip())
    metadata = body.get("metadata")
    if not isinstance(metadata, dict) or metadata.get("name") != ctx.name:
        raise errors.bad_request("name in URL does not match name in Eviction object")
    given = body.get("deleteOptions")
    options = deleteoptions.decode(given) if given is not None else DeleteOptions()
    requested = ["All"] if ctx.dry_run else []
    if not options.dry_run:
        options.dry_run = requested
    elif requested and options.dry_run != requested:
        raise errors.bad_request(f"Non-matching dry-run options in request and content: {requested} and {options.dry_run}")
    options.check()
    return options


def _can_ignore_budgets(pod: Pod) -> bool:
    """``canIgnorePDB``: disrupted already."""
    return pod.status.phase in ("Succeeded", "Failed", "Pending") or pod.metadata.deletion_timestamp is not None


def _enforce_resource_version(pod: Pod) -> bool:
    """``shouldEnforceResourceVersion``: a pending pod must not have become ready meanwhile."""
    return pod.status.phase not in ("Succeeded", "Failed") and pod.metadata.deletion_timestamp is None


def _unhealthy_may_go(budget: PodDisruptionBudget) -> bool:
    """An unready pod may go without using up the budget."""
    if budget.spec.unhealthy_pod_eviction_policy == ALWAYS_ALLOW:
        return True
    status = budget.status
    return (status.current_healthy or 0) >= (status.desired_healthy or 0) and (status.desired_healthy or 0) > 0


def _ready(pod: Pod) -> bool:
    return any(c.type == "Ready" and c.status == "True" for c in pod.status.conditions or ())


def _pinned(options: DeleteOptions, resource_version: str | None) -> DeleteOptions:
    return dataclasses.replace(options, preconditions=dataclasses.replace(options.preconditions, resource_version=resource_version))


def _check(pod: Pod, options: DeleteOptions) -> None:
    """The deletion's preconditions hold of the pod about to be marked."""
    uid, version = options.preconditions.uid, options.preconditions.resource_version
    if uid and uid != pod.metadata.uid:
        raise errors.conflict("pods", "", pod.metadata.name or "",
                              f"Precondition failed: UID in precondition: {uid}, UID in object meta: {pod.metadata.uid}")
    if version and version != pod.metadata.resource_version:
        raise errors.conflict("pods", "", pod.metadata.name or "",
                              f"Precondition failed: ResourceVersion in precondition: {version}, "
                              f"ResourceVersion in object meta: {pod.metadata.resource_version}")


def _set_pod_condition(pod: Pod, condition: PodCondition) -> None:
    """``UpdatePodCondition``: the transition time moves only with the status."""
    conditions = pod.status.conditions or []
    current = next((c for c in conditions if c.type == condition.type), None)
    now = clock.now()
    new = dataclasses.replace(condition, last_probe_time=None, last_transition_time=now)
    if current is not None and current.status == condition.status:
        new.last_transition_time = current.last_transition_time
    pod.status.conditions = [c for c in conditions if c.type != condition.type] + [new]


def _set_disruption_allowed(budget: PodDisruptionBudget) -> None:
    """``UpdateDisruptionAllowedCondition`` on the internal budget."""
    value, reason = disruption_allowed(budget.status.disruptions_allowed or 0)
    conditions = budget.status.conditions or []
    current = next((c for c in conditions if c.type == DISRUPTION_ALLOWED), None)
    since = current.last_transition_time if current is not None and current.status == value else clock.now()
    condition = Condition(type=DISRUPTION_ALLOWED, status=value, observed_generation=budget.status.observed_generation,
                          last_transition_time=since, reason=reason, message="")
    budget.status.conditions = [c for c in conditions if c.type != DISRUPTION_ALLOWED] + [condition]


def _success() -> dict[str, Any]:
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": "Success", "code": 201}
