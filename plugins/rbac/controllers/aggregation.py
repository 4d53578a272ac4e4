"""The ClusterRole aggregation controller (kube-controller-manager's ``clusterrole-aggregation``,
``pkg/controller/clusterroleaggregation``): a ClusterRole with ``aggregationRule`` holds the
union of the rules of the ClusterRoles its selectors match.

Any ClusterRole that changes may be selected by any aggregated one, so every change queues every
aggregated ClusterRole. A sync gathers the rules of the selected roles (by name within each
selector, each rule once, the role itself left out) and writes them when they differ, guarded by
the resourceVersion it read: a conflict is retried with the fresh copy.
"""

from __future__ import annotations

from typing import Any

from kplane.api import (
    APIError, ApiError, Handlers, LabelSelector, RESTClient, SharedInformerFactory, WorkQueue, Workers, build,
    label_selector_from_internal, wait_synced,
)
from kplane.plugins.rbac.types import GROUP

Obj = dict[str, Any]
FIELD_MANAGER = "clusterrole-aggregation-controller"


def _selects(selector: Obj, labels: dict[str, str] | None) -> bool:
    """``metav1.LabelSelectorAsSelector`` of a wire-form selector; a malformed one selects nothing."""
    expressions = [{"key": e.get("key", ""), "operator": e.get("operator", ""), "values": e.get("values")}
                   for e in selector.get("matchExpressions") or ()]
    internal = build(LabelSelector, {"match_labels": selector.get("matchLabels"), "match_expressions": expressions})
    try:
        return label_selector_from_internal(internal).matches(labels)
    except APIError:  # an invalid selector selects nothing
        return False


def aggregated_rules(role: Obj, roles: list[Obj]) -> list[Obj]:
    """The union of the rules of the roles ``role``'s selectors pick, in kube's order."""
    gathered: list[Obj] = []
    name = role["metadata"]["name"]
    for selector in (role.get("aggregationRule") or {}).get("clusterRoleSelectors") or ():
        for other in sorted(roles, key=lambda r: r["metadata"]["name"]):
            if other["metadata"]["name"] == name or not _selects(selector, other["metadata"].get("labels")):
                continue
            gathered += [r for r in other.get("rules") or () if r not in gathered]
    return gathered


class ClusterRoleAggregationController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory) -> None:
        self.client = client
        self.informers = informers
        self.roles = informers.informer(GROUP, "v1", "clusterroles")
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        self.roles.add_handlers(Handlers.for_any(lambda _: self._enqueue_aggregated()))
        self.informers.start()
        async with Workers(self.queue) as workers:
            await wait_synced(self.roles)
            workers.start(1, self.sync, name="clusterrole-aggregation")
            await workers.wait()

    def _enqueue_aggregated(self) -> None:
        for role in self.roles.indexer.list():
            if role.get("aggregationRule") is not None:
                self.queue.add(role["metadata"]["name"])

    async def sync(self, name: str) -> None:
        role = self.roles.indexer.get(name)
        if role is None or role.get("aggregationRule") is None:
            return
        rules = aggregated_rules(role, self.roles.indexer.list())
        if rules == (role.get("rules") or []):
            return
        updated = {**role, "apiVersion": f"{GROUP}/v1", "kind": "ClusterRole", "rules": rules}
        try:
            await self.client.resource(GROUP, "v1", "clusterroles").update(updated, fieldManager=FIELD_MANAGER)
        except ApiError as err:
            if err.code == 404:
                return
            raise  # a conflict: retried with the queue's backoff, on the informer's newer copy
