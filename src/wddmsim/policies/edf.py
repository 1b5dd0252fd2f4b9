"""Earliest deadline first: the ready context whose next job has the earliest absolute deadline goes
first; a context that becomes ready with an earlier deadline than the work on the node preempts it,
where the driver can preempt.

Source: Liu and Layland, "Scheduling Algorithms for Multiprogramming in a Hard-Real-Time
Environment", JACM 20(1), 1973 (the deadline-driven scheduling algorithm, optimal on one processor:
a set of periodic tasks with deadlines equal to their periods is schedulable if and only if its
utilization is at most 1); for GPUs, XSched's EDF policy (Shen et al., "XSched: Preemptive
Scheduling for Diverse XPUs", OSDI 2025; github.com/XpuOS/xsched, sched/src/policy/kedf.cpp).

A job is a frame of a ``frame_loop`` (its packets share the frame's release) or a packet; its
absolute deadline is its release plus the context's ``deadline`` hint (its ``period`` when only
that is given): ``ctx.next_deadline``. Contexts without a deadline go after every context with
one, first queued first. A preemption takes back everything on the hardware queue, so a context
preempts when any packet there has a later deadline (or none) than its own.

Settings: ``preempt`` (default true): preempt for an earlier deadline (only with
``os.can_preempt``).

Defining property: periodic contexts whose utilization (work / period, summed) is at most 1 miss
no deadline, when the engine preempts finely enough (``preemption = "interval"`` or
``"instruction"``) for the OS's preemption work to fit in the slack; a policy blind to deadlines
(``fifo``, ``windows``) misses on the same set.
"""

from __future__ import annotations

from pydantic import BaseModel

from wddmsim.policies import Policy

NEVER = float("inf")


def _deadline(ctx):
    d = ctx.next_deadline
    return NEVER if d is None else d


class Edf(Policy):
    name = "edf"

    class Settings(BaseModel, extra="forbid"):
        preempt: bool = True

    def pick(self, node, now):
        return min(self.os.ready(node), key=lambda ctx: (_deadline(ctx), ctx.head.queued))

    # A later deadline is on the hardware queue while an earlier one waits: a job was released, or
    # a packet picked before it reached the bottom of the hardware queue.
    def on_ready(self, ctx, now):
        self._check(ctx.node)

    def on_started(self, packet, node, now):
        self._check(node)

    def _check(self, node):
        if not (self.settings.preempt and self.os.can_preempt):
            return
        waiting = min((_deadline(ctx) for ctx in self.os.ready(node)), default=NEVER)
        if waiting < NEVER and any(_later(p.deadline_at, waiting) for p in self.os.queued_on_hardware(node)):
            self.os.preempt(node)


def _later(deadline, than):
    return deadline is None or deadline > than
