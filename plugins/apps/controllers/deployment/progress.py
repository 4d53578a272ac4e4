"""A rollout's progress (``progress.go``): the Progressing and ReplicaFailure conditions after a
rollout step, and a look again once the progress deadline would pass."""

from __future__ import annotations

import time

from kplane.api import clock, get_condition, object_key, remove_condition, replace_condition, set_condition
from kplane.plugins.apps.controllers.deployment.objects import Obj, name, status
from kplane.plugins.apps.controllers.deployment.status import (
    NEW_RS_AVAILABLE, PROGRESSING, REPLICA_FAILURE, RS_UPDATED, TIMED_OUT, calculate_status, complete, new_condition,
    progress_deadline, progressing, replica_failure, status_differs, timed_out,
)
from kplane.plugins.apps.controllers.deployment.sync import Sync


class Progress(Sync):
    async def _sync_rollout_status(self, d: Obj, new_rs: Obj | None, all_rss: list[Obj]) -> None:
        """Counters and conditions, with the progress estimate (``syncRolloutStatus``)."""
        calculated = calculate_status(d, new_rs, all_rss)
        deadline = progress_deadline(d)
        current = get_condition(status(d), PROGRESSING)
        if deadline is None:
            remove_condition(calculated, PROGRESSING)
        finished = (calculated["replicas"] == calculated["updatedReplicas"] and current is not None
                    and current.get("reason") == NEW_RS_AVAILABLE)
        subject = f'ReplicaSet "{name(new_rs)}"' if new_rs is not None else f'Deployment "{name(d)}"'
        if deadline is not None and not finished:
            if complete(d, calculated):
                set_condition(calculated, new_condition(PROGRESSING, "True", NEW_RS_AVAILABLE, f"{subject} has successfully progressed."))
            elif progressing(d, calculated):
                # Progress refreshes lastUpdateTime even with the same reason: the deadline counts from it.
                condition = new_condition(PROGRESSING, "True", RS_UPDATED, f"{subject} is progressing.")
                if current is not None and current.get("status") == "True":
                    condition["lastTransitionTime"] = current.get("lastTransitionTime")
                replace_condition(calculated, condition)
            elif timed_out(calculated, deadline):
                set_condition(calculated, new_condition(PROGRESSING, "False", TIMED_OUT, f"{subject} has timed out progressing."))
        failure = replica_failure(new_rs, all_rss)
        if failure is not None:
            set_condition(calculated, failure)
        else:
            remove_condition(calculated, REPLICA_FAILURE)
        if status_differs(status(d), calculated):
            await self._write_status(d, calculated)  # the informer's echo of this write syncs again
        else:
            self._requeue_if_stuck(d, calculated)

    def _requeue_if_stuck(self, d: Obj, calculated: Obj) -> None:
        """Look again just after the progress deadline would pass, if nothing happens before."""
        current = get_condition(status(d), PROGRESSING)
        deadline = progress_deadline(d)
        if deadline is None or current is None or complete(d, calculated) or current.get("reason") == TIMED_OUT:
            return
        # lastUpdateTime has whole seconds: one more second is surely past the deadline.
        after = clock.epoch(current.get("lastUpdateTime")) + deadline - time.time()
        self.queue.add_after(object_key(d), max(after, 0.0) + 1.0)
