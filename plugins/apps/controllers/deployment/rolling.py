"""The RollingUpdate strategy (``rolling.go``): the new ReplicaSet up and the old ones down,
step by step, within ``maxSurge`` and ``maxUnavailable``."""

from __future__ import annotations

from kplane.api import spec_replicas
from kplane.plugins.apps.controllers.deployment.objects import Obj, active, available, created, status
from kplane.plugins.apps.controllers.deployment.progress import Progress
from kplane.plugins.apps.controllers.deployment.scaling import max_unavailable, new_rs_replicas
from kplane.plugins.apps.controllers.deployment.status import complete


class RollingUpdate(Progress):
    async def _rollout_rolling(self, d: Obj, new_rs: Obj | None, old_rss: list[Obj]) -> None:
        """One step of a RollingUpdate: scale the new ReplicaSet up, or the old ones down, within the fenceposts."""
        if new_rs is None:
            new_rs = await self._create_new_rs(d, old_rss)
        all_rss = [*old_rss, new_rs]
        if not await self._reconcile_new_rs(d, new_rs, all_rss) and not await self._reconcile_old_rss(d, new_rs, old_rss, all_rss):
            if complete(d, status(d)):
                await self._cleanup(d, old_rss)
        await self._sync_rollout_status(d, new_rs, all_rss)

    async def _reconcile_new_rs(self, d: Obj, new_rs: Obj, all_rss: list[Obj]) -> bool:
        if spec_replicas(new_rs) > spec_replicas(d):
            return await self._scale_and_record(d, new_rs, spec_replicas(d))
        return await self._scale_and_record(d, new_rs, new_rs_replicas(d, all_rss, new_rs))

    async def _reconcile_old_rss(self, d: Obj, new_rs: Obj, old_rss: list[Obj], all_rss: list[Obj]) -> bool:
        """Scale old ReplicaSets down as far as ``maxUnavailable`` allows, their unready pods first."""
        active_old = active(old_rss)
        if not active_old:
            return False
        min_available = spec_replicas(d) - max_unavailable(d)
        new_unavailable = spec_replicas(new_rs) - available(new_rs)
        most = sum(spec_replicas(rs) for rs in all_rss) - min_available - new_unavailable
        if most <= 0:
            return False
        active_old.sort(key=created)
        cleaned = await self._scale_down_unhealthy(d, active_old, most)
        return await self._scale_down_old(d, [*active_old, new_rs], active_old) + cleaned > 0

    async def _scale_down_unhealthy(self, d: Obj, old_rss: list[Obj], most: int) -> int:
        """Drop old pods that are not available anyway, up to ``most`` (``cleanupUnhealthyReplicas``)."""
        total = 0
        for rs in old_rss:
            if total >= most:
                break
            unhealthy = spec_replicas(rs) - available(rs)
            if unhealthy == 0:
                continue
            count = min(most - total, unhealthy)
            await self._scale_and_record(d, rs, spec_replicas(rs) - count)
            total += count
        return total

    async def _scale_down_old(self, d: Obj, all_rss: list[Obj], old_rss: list[Obj]) -> int:
        """Scale old ReplicaSets down, oldest first, while more than ``replicas - maxUnavailable`` stay available."""
        min_available = spec_replicas(d) - max_unavailable(d)
        surplus = sum(available(rs) for rs in all_rss) - min_available
        total = 0
        for rs in old_rss:
            if total >= surplus:
                break
            if spec_replicas(rs) == 0:
                continue
            count = min(spec_replicas(rs), surplus - total)
            await self._scale_and_record(d, rs, spec_replicas(rs) - count)
            total += count
        return total
