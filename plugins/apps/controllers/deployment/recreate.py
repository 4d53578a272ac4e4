"""The Recreate strategy (``recreate.go``): every old pod gone before the new ones start."""

from __future__ import annotations

from kplane.api import ownership as own, spec_replicas
from kplane.plugins.apps.controllers.deployment.objects import Obj, active, status
from kplane.plugins.apps.controllers.deployment.progress import Progress
from kplane.plugins.apps.controllers.deployment.status import complete


class Recreate(Progress):
    async def _rollout_recreate(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj], pods: dict[str, list[Obj]]) -> None:
        """Recreate: old ReplicaSets to 0, wait until none of their pods runs, then the new one to full size."""
        all_rss = [*old_rss, *([new_rs] if new_rs is not None else [])]
        scaled_down = False
        for rs in active(old_rss):
            scaled_down = await self._scale_and_record(d, rs, 0) or scaled_down
        if scaled_down or old_pods_running(new_rs, old_rss, pods):
            await self._sync_rollout_status(d, new_rs, all_rss)
            return
        if new_rs is None:
            new_rs = await self._create_new_rs(d, old_rss)
            all_rss.append(new_rs)
        await self._scale_and_record(d, new_rs, spec_replicas(d))
        if complete(d, status(d)):
            await self._cleanup(d, old_rss)
        await self._sync_rollout_status(d, new_rs, all_rss)


def old_pods_running(new_rs: Obj | None, old_rss: list[Obj], pods: dict[str, list[Obj]]) -> bool:
    """Any old pod not finished (Succeeded/Failed), terminating ones included."""
    if sum(status(rs).get("replicas") or 0 for rs in old_rss):
        return True
    new_uid = own.uid(new_rs) if new_rs is not None else None
    return any(status(pod).get("phase") not in ("Succeeded", "Failed")
               for uid, owned in pods.items() if uid != new_uid for pod in owned)
