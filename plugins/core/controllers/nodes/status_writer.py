"""Writing a pod's status the way the kubelet and the scheduler do: from what they last saw,
again on a fresh read after a conflict, never onto another pod of the same name."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from kplane.api import ApiError, RESTClient
from kplane.api import ownership as own

Obj = dict[str, Any]


async def write_status(client: RESTClient, pod: Obj, desired: Callable[[Obj], Obj]) -> bool:
    """PUT ``desired(pod)`` as the pod's status with its resourceVersion, again on a fresh read
    after a 409; False when there was nothing to write."""
    pods = client.resource("", "v1", "pods", pod["metadata"]["namespace"])
    for attempt in range(3):
        status = desired(pod)
        if status == pod.get("status"):
            return False
        try:
            await pods.update_status({**pod, "status": status})
            return True
        except ApiError as err:
            if err.code == 404:
                return False
            if err.code != 409 or attempt == 2:
                raise
        fresh = await pods.get(pod["metadata"]["name"])
        if own.uid(fresh) != own.uid(pod) or own.spec(fresh).get("nodeName", "") != own.spec(pod).get("nodeName", ""):
            return False  # another pod by that name, or bound meanwhile: its own sync handles it
        pod = fresh
    return False
