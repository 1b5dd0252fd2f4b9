"""FIFO: the ready context whose next packet was queued first goes first.

Source: the Linux DRM GPU scheduler's default run-queue policy, ``DRM_SCHED_POLICY_FIFO``
(drivers/gpu/drm/scheduler/sched_main.c, ``drm_sched_rq_select_entity_fifo``: the entity whose
oldest job has the earliest submit timestamp; the scheduler's ``sched_policy`` module
parameter chooses it or round robin).

Settings: none.

Defining property: packets of a node start in the order they were queued (a packet preempted and
put back keeps its place: its queue time is when it was first queued). Work is never held back
and nothing is preempted, so one long packet delays everything queued after it.
"""

from __future__ import annotations

from wddmsim.policies import Policy


class Fifo(Policy):
    name = "fifo"

    def pick(self, node, now):
        # min() keeps the first of equals: ties go to the context ready longest.
        return min(self.os.ready(node), key=lambda ctx: ctx.head.queued)
