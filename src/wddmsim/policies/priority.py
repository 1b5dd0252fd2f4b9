"""Strict priority: the ready context of the highest priority goes first; FIFO among equals; a
context that becomes ready preempts a lower-priority one running, where the driver can preempt.

Source: fixed-priority preemptive scheduling as in the Windows CPU scheduler ("Scheduling
Priorities", learn.microsoft.com/windows/win32/procthread/scheduling-priorities) and XSched's
highest-priority-first policy (Shen et al., "XSched: Preemptive Scheduling for Diverse XPUs", OSDI
2025; github.com/XpuOS/xsched, sched/src/policy/hpf.cpp), without Windows' quantum and starvation
boost (compare the OS's own ``strict_priority`` and ``windows``). The priority is the effective one
WDDM gives: process class x 16 + the context's own (D3DKMTSetContextSchedulingPriority).

Settings: ``preempt`` (default true): preempt a lower priority that runs while a higher one is
ready (only with ``os.can_preempt``).

Defining property: while a context of a higher priority has work, no packet of a lower priority
is picked; with preemption a lower-priority packet running is stopped at the engine's preemption
granularity, so the higher one waits at most that granularity (plus the OS's preemption work),
not a whole packet. A lower priority starves as long as a higher one keeps the node busy.
"""

from __future__ import annotations

from pydantic import BaseModel

from wddmsim.policies import Policy


class Priority(Policy):
    name = "priority"

    class Settings(BaseModel, extra="forbid"):
        preempt: bool = True

    def pick(self, node, now):
        # Highest priority; the oldest head packet among equals.
        return min(self.os.ready(node), key=lambda ctx: (-ctx.priority, ctx.head.queued))

    # A lower priority runs while a higher one waits: it became ready, or the lower one's packet
    # (picked while the higher had nothing) just reached the bottom of the hardware queue.
    def on_ready(self, ctx, now):
        self._check(ctx.node)

    def on_started(self, packet, node, now):
        self._check(node)

    def _check(self, node):
        running = self.os.running(node)
        if (running is not None and self.settings.preempt and self.os.can_preempt
                and any(ctx.priority > running.priority for ctx in self.os.ready(node))):
            self.os.preempt(node)
