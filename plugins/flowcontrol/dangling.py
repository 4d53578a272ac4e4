"""The ``Dangling`` condition of FlowSchemas, as kube-apiserver's configuration consumer
(``apiserver/pkg/util/flowcontrol/apf_controller.go``) keeps it: ``True`` (``NotFound``) while the
PriorityLevelConfiguration a FlowSchema names does not exist, ``False`` (``Found``) once it does;
written through ``/status`` only when it differs from the stored one. kplane classifies no
requests by these objects (its max-in-flight limits stay), so this is all of the consumer it runs."""

from __future__ import annotations

from typing import Any

from kplane.api import ApiError, Handlers, Informer, RESTClient, WorkQueue, Workers, clock
from kplane.plugins.flowcontrol.types import DANGLING, GROUP

FIELD_MANAGER = "api-priority-and-fairness-config-consumer-v1"
Obj = dict[str, Any]


def desired(fs: Obj, level_exists: bool) -> Obj:
    """The Dangling condition ``fs`` should have, without its time."""
    if level_exists:
        return {"type": DANGLING, "status": "False", "reason": "Found",
                "message": "This FlowSchema references an existing PriorityLevelConfiguration object"}
    name = (fs.get("spec") or {}).get("priorityLevelConfiguration", {}).get("name", "")
    return {"type": DANGLING, "status": "True", "reason": "NotFound",
            "message": f'This FlowSchema references the PriorityLevelConfiguration object named "{name}" but there is no such object'}


class DanglingController:
    def __init__(self, schemas: Informer, levels: Informer, client: RESTClient) -> None:
        self.schemas = schemas
        self.levels = levels
        self.client = client
        self.queue: WorkQueue[str] = WorkQueue()
        schemas.add_handlers(Handlers(on_add=self._enqueue, on_update=lambda old, new: self._enqueue(new)))
        levels.add_handlers(Handlers(on_add=self._level_changed, on_delete=self._level_changed))

    def _enqueue(self, fs: Obj) -> None:
        self.queue.add(fs["metadata"]["name"])

    def _level_changed(self, level: Obj) -> None:
        """A level made or gone: the FlowSchemas naming it (few, so a scan of the cache)."""
        name = level["metadata"]["name"]
        for fs in self.schemas.indexer.list():
            if (fs.get("spec") or {}).get("priorityLevelConfiguration", {}).get("name") == name:
                self._enqueue(fs)

    async def run(self) -> None:
        async with Workers(self.queue) as workers:
            await self.schemas.synced.wait()
            await self.levels.synced.wait()
            workers.start(1, self.sync, name="flowschema dangling")
            await workers.wait()

    async def sync(self, name: str) -> None:
        fs = self.schemas.indexer.get(name)
        if fs is None:
            return
        level = (fs.get("spec") or {}).get("priorityLevelConfiguration", {}).get("name", "")
        want = desired(fs, self.levels.indexer.get(level) is not None)
        conditions = (fs.get("status") or {}).get("conditions") or []
        current = next((c for c in conditions if c.get("type") == DANGLING), None)
        if current is not None and all(current.get(k) == want[k] for k in ("status", "reason", "message")):
            return
        want["lastTransitionTime"] = clock.now()
        status = {"conditions": [*(c for c in conditions if c.get("type") != DANGLING), want]}
        try:
            await self.client.resource(GROUP, "v1", "flowschemas").update({**fs, "status": status}, subresource="status",
                                                                   fieldManager=FIELD_MANAGER)
        except ApiError as err:
            if err.code != 404:
                raise
