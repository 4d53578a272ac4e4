"""The metrics.k8s.io resources, served without storage (``registry.add_rest``): each GET or LIST
reads the pods (and nodes) from their Stores, that is the watch cache, and reports what their
containers declare using (``usage.py``), as metrics-server answers from its last scrape.

Served here rather than by an aggregated APIService: the simulated kubelets' usage is a
function of the pods the server already holds, so a second server, its certificate and the
proxy hop would add nothing but moving parts; clients see the same group, kinds and verbs (get
and list) as metrics-server's."""

from __future__ import annotations

from collections import defaultdict
from fractions import Fraction
from typing import Any

from kplane.api import ListOptions, ListPage, ObjectMeta, Registry, RequestContext, Served, Store, clock, errors
from kplane.plugins.metrics import usage
from kplane.plugins.metrics.types import ContainerMetrics, NodeMetrics, PodMetrics

GROUP = "metrics.k8s.io"
#: The window every reading stands for. A declared usage holds from the moment it is declared,
#: so a reading needs no longer window than a second (metrics-server's is its scrape interval,
#: 15 s; the autoscaler ignores a cpu reading of a pod ready for less than one window).
WINDOW = "1s"


def _meta(obj: dict[str, Any], now: str) -> ObjectMeta:
    """The metrics' metadata: the object's name, namespace and labels, made now (as metrics-server's)."""
    meta = obj.get("metadata") or {}
    return ObjectMeta(name=meta.get("name"), namespace=meta.get("namespace"), labels=meta.get("labels"), creation_timestamp=now)


def _store(registry: Registry, plural: str) -> Store:
    store = registry.store("", plural)
    if store is None:
        raise errors.unavailable(f"{plural} are not served, so their metrics are not either")
    return store


async def _object(registry: Registry, plural: str, namespace: str, name: str) -> dict[str, Any]:
    """The pod or node ``name``; 404 naming its metrics when there is none."""
    try:
        return (await _store(registry, plural).get(RequestContext(resource=plural, namespace=namespace), name)).obj
    except errors.APIError as err:
        if err.code == 404:
            raise errors.not_found(plural, GROUP, name) from None
        raise


async def _objects(registry: Registry, plural: str, namespace: str, opts: ListOptions) -> list[dict[str, Any]]:
    store = _store(registry, plural)
    ctx = RequestContext(resource=plural, namespace=namespace)
    page = await store.list(ctx, ListOptions(label_selector=opts.label_selector, field_selector=opts.field_selector))
    return [stored.obj for stored in page.items]


class PodMetricsREST(Served):
    """``pods.metrics.k8s.io``: one PodMetrics per running pod."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    @staticmethod
    def metrics(pod: dict[str, Any], now: str) -> PodMetrics:
        containers = [ContainerMetrics(name=name, usage=usage.wire(used)) for name, used in usage.pod_usage(pod)]
        return PodMetrics(metadata=_meta(pod, now), timestamp=now, window=WINDOW, containers=containers)

    async def get(self, ctx: RequestContext, name: str) -> PodMetrics:
        pod = await _object(self.registry, "pods", ctx.namespace, name)
        if not usage.reported(pod):
            raise errors.not_found("pods", GROUP, name)
        return self.metrics(pod, clock.now())

    async def list(self, ctx: RequestContext, opts: ListOptions) -> ListPage:
        now = clock.now()
        pods = await _objects(self.registry, "pods", ctx.namespace, opts)
        return ListPage([self.metrics(pod, now) for pod in pods if usage.reported(pod)], "")


class NodeMetricsREST(Served):
    """``nodes.metrics.k8s.io``: one NodeMetrics per node, the sum of its running pods' usage."""

    def __init__(self, registry: Registry) -> None:
        self.registry = registry

    async def _used_by_node(self) -> dict[str, usage.Usage]:
        used: dict[str, usage.Usage] = defaultdict(lambda: {name: Fraction(0) for name in usage.RESOURCES})
        for pod in await _objects(self.registry, "pods", "", ListOptions()):
            if usage.reported(pod):
                total = used[pod["spec"]["nodeName"]]
                for _, container in usage.pod_usage(pod):
                    for name, amount in container.items():
                        total[name] += amount
        return used

    def _metrics(self, node: dict[str, Any], used: dict[str, usage.Usage], now: str) -> NodeMetrics:
        name = (node.get("metadata") or {}).get("name", "")
        return NodeMetrics(metadata=_meta(node, now), timestamp=now, window=WINDOW, usage=usage.wire(used.get(name, {})))

    async def get(self, ctx: RequestContext, name: str) -> NodeMetrics:
        node = await _object(self.registry, "nodes", "", name)
        return self._metrics(node, await self._used_by_node(), clock.now())

    async def list(self, ctx: RequestContext, opts: ListOptions) -> ListPage:
        now = clock.now()
        nodes = await _objects(self.registry, "nodes", "", opts)
        used = await self._used_by_node()
        return ListPage([self._metrics(node, used, now) for node in nodes], "")
