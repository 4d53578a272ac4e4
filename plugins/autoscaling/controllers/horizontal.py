"""The horizontal-pod-autoscaler controller (kube-controller-manager's ``pkg/controller/podautoscaler``).

Every HorizontalPodAutoscaler is synced when it changes and then once per sync period (15 s, as
``--horizontal-pod-autoscaler-sync-period``). A sync:

1. reads the target's ``/scale`` (its kind's resource found by discovery, once per kind): the
   current replicas and the pods' selector; a failure is AbleToScale False, FailedGetScale;
2. outside [minReplicas, maxReplicas] the count is brought back inside; a target at 0 replicas
   is not scaled (ScalingActive False, ScalingDisabled);
3. else asks each metric for a replica count: Resource and ContainerResource metrics from
   metrics.k8s.io's PodMetrics (Utilization of the pods' requests, or AverageValue), through
   ``replicas.py``; Pods, Object and External metrics need the custom or external metrics APIs,
   which are not served, so they are invalid (their Kubernetes reasons, FailedGet*Metric). The
   largest count wins; invalid metrics stop the sync when all are, or when the rest would scale
   down (ScalingActive False);
4. normalizes it (``normalize.py``: stabilization, scale-up limit or the behaviour's policies),
   writes the new count through ``/scale`` (event SuccessfulRescale, or FailedRescale and
   AbleToScale False), and
5. writes the status when it changed: current and desired replicas, the current metrics,
   lastScaleTime, observedGeneration and the three conditions.

What the controller remembers between syncs (recommendations, scale events) is per HPA and in
memory, as Kubernetes' is: a new leader starts afresh.
"""

from __future__ import annotations

import copy
import logging
import time
from dataclasses import dataclass
from typing import Any

from kplane.api import (
    quantity,
    NORMAL, WARNING, ApiError, EventRecorder, Handlers, RESTClient, SharedInformerFactory, WorkQueue, Workers, clock,
    object_key, parse_duration, parse_label_selector, wait_synced,
)
from kplane.plugins.autoscaling.controllers import normalize, replicas
from kplane.plugins.autoscaling.controllers.normalize import History
from kplane.plugins.autoscaling.controllers.replicas import MetricsError, PodMetric
from kplane.plugins.autoscaling.v2.defaults import SCALE_DOWN, SCALE_UP

log = logging.getLogger(__name__)
Obj = dict[str, Any]

API_VERSION, KIND = "autoscaling/v2", "HorizontalPodAutoscaler"
COMPONENT = "horizontal-pod-autoscaler"
SYNC_PERIOD = 15.0
#: Kubernetes' reason for a metric source that cannot be read here, and the API it needs.
UNSERVED = {"Pods": ("FailedGetPodsMetric", "custom.metrics.k8s.io"), "Object": ("FailedGetObjectMetric", "custom.metrics.k8s.io"),
            "External": ("FailedGetExternalMetric", "external.metrics.k8s.io")}


class _SyncFailed(Exception):
    """The sync stops here; the conditions and events are set already."""


@dataclass(slots=True)
class _Scale:
    resource: Any  # ResourceClient of the target's resource
    name: str
    replicas: int
    selector: str


@dataclass(slots=True)
class _Computed:
    replicas: int
    metric_name: str
    statuses: list[Obj]


def _wire_rules(rules: Obj | None, defaults: dict[str, Any]) -> Obj:
    """Scaling rules in wire form, each unset field Kubernetes' default (``GenerateHPAScale*Rules``)."""
    rules = dict(rules or {})
    rules.setdefault("stabilizationWindowSeconds", defaults["stabilization_window_seconds"])
    rules.setdefault("selectPolicy", defaults["select_policy"])
    if not rules.get("policies"):
        rules["policies"] = [{"type": p["type"], "value": p["value"], "periodSeconds": p["period_seconds"]} for p in defaults["policies"]]
    return rules


def _message(err: ApiError) -> str:
    return str(err.status.get("message", "")) or str(err)


def set_condition(status: Obj, type_: str, value: str, reason: str, message: str) -> None:
    """``setConditionInList``: lastTransitionTime moves only when the status does; reason and
    message are always the latest."""
    conditions = status.setdefault("conditions", [])
    for condition in conditions:
        if condition.get("type") == type_:
            if condition.get("status") != value:
                condition["lastTransitionTime"] = clock.now()
            condition.update(status=value, reason=reason, message=message)
            return
    conditions.append({"type": type_, "status": value, "lastTransitionTime": clock.now(), "reason": reason, "message": message})


class HorizontalController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory, *, sync_period: float = SYNC_PERIOD,
                 downscale_stabilization: float = normalize.DOWNSCALE_STABILIZATION, tolerance: float = replicas.TOLERANCE,
                 workers: int = 5) -> None:
        self.client = client
        self.informers = informers
        self.sync_period = sync_period
        self.downscale_stabilization = downscale_stabilization
        self.tolerance = tolerance
        self.workers = workers
        self.hpa_informer = informers.informer("autoscaling", "v2", "horizontalpodautoscalers")
        self.pod_informer = informers.informer("", "v1", "pods")
        self.queue: WorkQueue[str] = WorkQueue()
        self.recorder = EventRecorder(client, COMPONENT)
        self.history: dict[str, History] = {}
        self._resources: dict[tuple[str, str], str] = {}  # (apiVersion, kind) -> plural with a scale subresource

    async def run(self) -> None:
        self.hpa_informer.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new),
                                                on_delete=self._deleted))
        self.informers.start()
        async with Workers(self.queue, self.recorder) as workers:
            await wait_synced(self.hpa_informer, self.pod_informer)
            workers.start(self.workers, self._sync, name="horizontal-pod-autoscaler")
            await workers.wait()

    def _enqueue(self, hpa: Obj) -> None:
        self.queue.add(object_key(hpa))

    def _deleted(self, hpa: Obj) -> None:
        self.history.pop(object_key(hpa), None)

    # -- one sync -----------------------------------------------------------------------------
    async def _sync(self, key: str) -> None:
        cached = self.hpa_informer.lister().get(key)
        if cached is None:
            self.history.pop(key, None)
            return
        try:
            await self._reconcile(key, copy.deepcopy(cached))
        finally:
            self.queue.add_after(key, self.sync_period)  # every HPA is looked at again each period

    async def _reconcile(self, key: str, hpa: Obj) -> None:
        hpa.update(apiVersion=API_VERSION, kind=KIND)  # an informer's copy may lack them; Events need them
        old_status = copy.deepcopy(hpa.get("status") or {})
        status = hpa.setdefault("status", {})
        spec = hpa["spec"]
        status["observedGeneration"] = hpa["metadata"].get("generation")
        try:
            scale = await self._scale(hpa, status)
            computed = await self._desired(key, hpa, scale, status)
        except _SyncFailed:
            await self._write_status(hpa, old_status)
            return
        rescale = computed.replicas != scale.replicas
        if rescale:
            reason = self._rescale_reason(computed, scale.replicas)
            try:
                await scale.resource.patch(scale.name, {"spec": {"replicas": computed.replicas}}, subresource="scale")
            except ApiError as err:
                set_condition(status, "AbleToScale", "False", "FailedUpdateScale", f"the HPA controller was unable to update the target scale: {_message(err)}")
                self.recorder.event(hpa, WARNING, "FailedRescale", f"New size: {computed.replicas}; reason: {reason}; error: {_message(err)}")
                await self._write_status(hpa, old_status)
                return
            set_condition(status, "AbleToScale", "True", "SucceededRescale", f"the HPA controller was able to update the target scale to {computed.replicas}")
            self.recorder.event(hpa, NORMAL, "SuccessfulRescale", f"New size: {computed.replicas}; reason: {reason}")
            behavior = spec.get("behavior")
            if behavior is not None:
                up, down = _wire_rules(behavior.get("scaleUp"), SCALE_UP), _wire_rules(behavior.get("scaleDown"), SCALE_DOWN)
                normalize.record_scale(self.history.setdefault(key, History()), scale.replicas, computed.replicas, up, down, time.monotonic())
            status["lastScaleTime"] = clock.now()
        status["currentReplicas"] = scale.replicas
        status["desiredReplicas"] = computed.replicas
        status["currentMetrics"] = computed.statuses or None
        if not status["currentMetrics"]:
            del status["currentMetrics"]
        await self._write_status(hpa, old_status)

    def _rescale_reason(self, computed: _Computed, current: int) -> str:
        if computed.metric_name.startswith("Current number"):
            return computed.metric_name
        return f"{computed.metric_name} above target" if computed.replicas > current else "All metrics below target"

    async def _write_status(self, hpa: Obj, old_status: Obj) -> None:
        if hpa["status"] == old_status:
            return  # nothing changed: no write
        client = self.client.resource("autoscaling", "v2", "horizontalpodautoscalers", hpa["metadata"]["namespace"])
        try:
            await client.update_status(hpa)
        except ApiError as err:
            if err.code not in (404, 409):
                raise
            log.debug("status of %s not written: %s", object_key(hpa), _message(err))

    # -- the target -----------------------------------------------------------------------------
    async def _plural(self, api_version: str, kind: str) -> str | None:
        """The resource of ``kind`` in ``api_version`` that has a scale subresource (discovery, cached)."""
        found = self._resources.get((api_version, kind))
        if found is not None:
            return found
        path = f"/apis/{api_version}" if "/" in api_version else f"/api/{api_version}"
        listing = await self.client.request("GET", path)
        names = {r.get("name", "") for r in listing.get("resources") or ()}
        for resource in listing.get("resources") or ():
            plural = resource.get("name", "")
            if resource.get("kind") == kind and "/" not in plural and f"{plural}/scale" in names:
                self._resources[(api_version, kind)] = plural
                return plural
        return None

    async def _scale(self, hpa: Obj, status: Obj) -> _Scale:
        ref = hpa["spec"]["scaleTargetRef"]
        namespace = hpa["metadata"]["namespace"]
        api_version = ref.get("apiVersion") or "v1"
        try:
            plural = await self._plural(api_version, ref.get("kind", ""))
            if plural is None:
                raise ApiError(404, {"message": f'no matches for kind "{ref.get("kind", "")}" in group version "{api_version}" with a scale subresource'})
            group, _, version = api_version.rpartition("/")
            resource = self.client.resource(group, version, plural, namespace)
            scale = await resource.get(ref.get("name", ""), subresource="scale")
        except ApiError as err:
            message = f"the HPA controller was unable to get the target's current scale: {_message(err)}"
            set_condition(status, "AbleToScale", "False", "FailedGetScale", message)
            self.recorder.event(hpa, WARNING, "FailedGetScale", _message(err))
            raise _SyncFailed from None
        set_condition(status, "AbleToScale", "True", "SucceededGetScale", "the HPA controller was able to get the target's current scale")
        return _Scale(resource, ref.get("name", ""), (scale.get("spec") or {}).get("replicas") or 0,
                      (scale.get("status") or {}).get("selector") or "")

    # -- the count ------------------------------------------------------------------------------
    async def _desired(self, key: str, hpa: Obj, scale: _Scale, status: Obj) -> _Computed:
        spec = hpa["spec"]
        minimum, maximum = spec.get("minReplicas") or 1, spec.get("maxReplicas") or 0
        current = scale.replicas
        if current == 0 and minimum != 0:
            set_condition(status, "ScalingActive", "False", "ScalingDisabled", "scaling is disabled since the replica count of the target is zero")
            return _Computed(0, "", [])
        if current > maximum:  # back inside the bounds, whatever the metrics say
            return _Computed(maximum, "Current number of replicas above Spec.MaxReplicas", [])
        if current < minimum:
            return _Computed(minimum, "Current number of replicas below Spec.MinReplicas", [])
        computed = await self._from_metrics(hpa, scale, status)
        set_condition(status, "ScalingActive", "True", "ValidMetricFound",
                      f"the HPA was able to successfully calculate a replica count from {computed.metric_name}")
        history = self.history.setdefault(key, History())
        behavior = spec.get("behavior")
        now = time.monotonic()
        if behavior is None:
            result = normalize.without_behavior(history, current, computed.replicas, minimum, maximum, now, self.downscale_stabilization)
        else:
            down = _wire_rules(behavior.get("scaleDown"), {**SCALE_DOWN, "stabilization_window_seconds": self.downscale_stabilization})
            result = normalize.with_behavior(history, current, computed.replicas, minimum, maximum,
                                             _wire_rules(behavior.get("scaleUp"), SCALE_UP), down, now)
        set_condition(status, "AbleToScale", "True", result.able_reason, result.able_message)
        set_condition(status, "ScalingLimited", "True" if result.limited else "False", result.limited_reason, result.limited_message)
        return _Computed(result.replicas, computed.metric_name, computed.statuses)

    async def _from_metrics(self, hpa: Obj, scale: _Scale, status: Obj) -> _Computed:
        """``computeReplicasForMetrics``: the largest valid recommendation, or _SyncFailed."""
        if not scale.selector:
            self._invalid(hpa, status, "InvalidSelector", "SelectorRequired", "selector is required")
        try:
            selector = parse_label_selector(scale.selector)
        except Exception:  # an APIError: the selector text is Kubernetes' to have made valid
            self._invalid(hpa, status, "InvalidSelector", "InvalidSelector", f"couldn't convert selector into a corresponding internal selector object: {scale.selector}")
        pods = self.pod_informer.lister().namespaced(hpa["metadata"]["namespace"]).list(selector)
        best: _Computed | None = None
        statuses: list[Obj] = []
        errors: list[tuple[str, str]] = []
        for metric in hpa["spec"].get("metrics") or ():
            try:
                found, metric_status, name = await self._one_metric(hpa, scale, pods, metric)
            except MetricsError as err:
                errors.append((self._reason_of(metric), str(err)))
                statuses.append({"type": ""})
                continue
            statuses.append(metric_status)
            if best is None or found > best.replicas:
                best = _Computed(found, name, [])
        metrics = hpa["spec"].get("metrics") or ()
        if errors and (best is None or best.replicas < scale.replicas):
            reason, first = errors[0]
            if len(errors) > 1 or best is not None:
                first = f"invalid metrics ({len(errors)} invalid out of {len(metrics)}), first error is: {first}"
                self.recorder.event(hpa, WARNING, "FailedComputeMetricsReplicas", first)
            status["currentMetrics"] = statuses  # one per metric, as the spec lists them (empty where invalid)
            set_condition(status, "ScalingActive", "False", reason, f"the HPA was unable to compute the replica count: {first}")
            raise _SyncFailed
        assert best is not None  # at least one metric (defaulting adds one)
        best.statuses = statuses
        return best

    def _invalid(self, hpa: Obj, status: Obj, reason: str, event: str, message: str) -> None:
        self.recorder.event(hpa, WARNING, event, message)
        shown = "the HPA target's scale is missing a selector" if event == "SelectorRequired" else message
        set_condition(status, "ScalingActive", "False", reason, shown)
        raise _SyncFailed

    @staticmethod
    def _reason_of(metric: Obj) -> str:
        kind = metric.get("type", "")
        if kind in UNSERVED:
            return UNSERVED[kind][0]
        return "FailedGetContainerResourceMetric" if kind == "ContainerResource" else "FailedGetResourceMetric"

    async def _one_metric(self, hpa: Obj, scale: _Scale, pods: list[Obj], metric: Obj) -> tuple[int, Obj, str]:
        kind = metric.get("type", "")
        if kind in UNSERVED:
            name = (metric.get(kind.lower()) or {}).get("metric", {}).get("name", "")
            raise MetricsError(f"unable to get metric {name}: no metrics API {UNSERVED[kind][1]} is served")
        field_name = "containerResource" if kind == "ContainerResource" else "resource"
        source = metric.get(field_name) or {}
        resource, container = source.get("name", ""), source.get("container", "")
        target = source.get("target") or {}
        usage = await self._pod_usage(hpa["metadata"]["namespace"], scale.selector, resource, container)
        what = f"{resource} container resource" if container else f"{resource} resource"
        current: Obj
        if target.get("averageUtilization") is not None:
            try:
                found = replicas.resource_replicas(scale.replicas, pods, usage, resource, target_utilization=target["averageUtilization"],
                                                   container=container, tolerance=self.tolerance)
            except MetricsError as err:
                raise MetricsError(f"failed to get {resource} utilization: {err}") from None
            current = {"averageValue": quantity.canonical(quantity.parse(f"{found.raw_average}m").value), "averageUtilization": found.utilization}
            what += " utilization (percentage of request)"
        else:
            try:
                average = quantity.parse(target.get("averageValue") or 0).milli_value()
                found = replicas.resource_replicas(scale.replicas, pods, usage, resource, target_average=average,
                                                   container=container, tolerance=self.tolerance)
            except (MetricsError, ValueError) as err:
                raise MetricsError(f"failed to get {resource} usage: {err}") from None
            current = {"averageValue": quantity.canonical(quantity.parse(f"{found.raw_average}m").value)}
        status = {"name": resource, "current": current}
        if container:
            status["container"] = container
        return found.replicas, {"type": kind, field_name: status}, what

    async def _pod_usage(self, namespace: str, selector: str, resource: str, container: str) -> dict[str, PodMetric]:
        """Each selected pod's use of ``resource`` (one container's when named), from metrics.k8s.io."""
        try:
            listed = await self.client.resource("metrics.k8s.io", "v1beta1", "pods", namespace).list(labelSelector=selector)
        except ApiError as err:
            raise MetricsError(f"unable to get metrics for resource {resource}: unable to fetch metrics from resource metrics API: {_message(err)}") from None
        found = {}
        for item in listed.get("items") or ():
            total = 0
            for c in item.get("containers") or ():
                if container and c.get("name") != container:
                    continue
                total += quantity.parse((c.get("usage") or {}).get(resource, 0)).milli_value()
            try:
                window = parse_duration(item.get("window") or "0s")
            except ValueError:
                window = 0.0
            found[item["metadata"]["name"]] = PodMetric(total, clock.epoch(item.get("timestamp")), window)
        return found
