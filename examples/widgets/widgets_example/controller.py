"""The widget controller: writes each Widget's status from its spec.

It follows the Widgets through an informer (a cached list kept up to date by a watch), queues
the key of every Widget that changes, and for each key computes the status the Widget should
have; if that differs from what is stored, it writes it through the ``status`` subresource.
"""

from typing import Any

from kplane.api import Handlers, RESTClient, SharedInformerFactory, WorkQueue, clock, object_key, work

from widgets_example.types import GROUP


def desired_status(widget: dict[str, Any]) -> dict[str, Any]:
    """The status a Widget should have: its area, and Ready for the generation it describes."""
    generation = widget["metadata"].get("generation")
    size = (widget.get("spec") or {}).get("size") or {}
    conditions = (widget.get("status") or {}).get("conditions") or []
    ready_since = next((c.get("lastTransitionTime") for c in conditions if c.get("type") == "Ready"), None)
    return {
        "observedGeneration": generation,
        "area": (size.get("width") or 0) * (size.get("height") or 0),
        "conditions": [{"type": "Ready", "status": "True", "observedGeneration": generation,
                        "lastTransitionTime": ready_since or clock.now(), "reason": "Measured", "message": ""}],
    }


class WidgetController:
    def __init__(self, client: RESTClient, informers: SharedInformerFactory) -> None:
        self.client = client
        self.informers = informers
        self.widgets = informers.informer(GROUP, "v1", "widgets")
        self.queue: WorkQueue[str] = WorkQueue()

    async def run(self) -> None:
        self.widgets.add_handlers(Handlers(on_add=self.enqueue, on_update=lambda old, new: self.enqueue(new)))
        self.informers.start()
        try:
            await self.widgets.synced.wait()
            await work(self.queue, self.sync, name="widgets")
        finally:
            self.queue.shutdown()

    def enqueue(self, widget: dict[str, Any]) -> None:
        self.queue.add(object_key(widget))  # "namespace/name"

    async def sync(self, key: str) -> None:
        widget = self.widgets.indexer.get(key)
        if widget is None:
            return  # deleted meanwhile: nothing to do
        status = desired_status(widget)
        if widget.get("status") != status:
            namespace = widget["metadata"]["namespace"]
            widgets = self.client.resource(GROUP, "v1", "widgets", namespace)
            await widgets.update_status({**widget, "status": status})
