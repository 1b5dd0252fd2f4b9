"""Weighted fair share by virtual GPU runtime: the ready context that has had the least GPU time
for its weight goes next.

Source: the Completely Fair Scheduler of Linux (vruntime, min_vruntime; kernel/sched/fair.c and
Documentation/scheduler/sched-design-CFS.rst), after the virtual time of fair queueing (Stoica et
al., "A Proportional Share Resource Allocation Algorithm for Real-Time, Time-Shared Systems",
RTSS 1996); for GPUs, XSched's CFS policy (Shen et al., "XSched: Preemptive Scheduling for Diverse
XPUs", OSDI 2025; github.com/XpuOS/xsched, sched/src/policy/cfs.cpp).

Each context has a virtual runtime: every GPU ns it gets (a packet completed, or taken back by a
preemption) adds ``gpu_ns / weight``, ``weight`` being its hint (1 when not given). A pick takes
the least virtual runtime. A context that becomes ready starts at no less than the least virtual
runtime of its node (the ready contexts' and the running one's), so time spent idle is not credit
it can spend later to shut the others out.

Settings: ``slice`` (a duration, default none): where the driver can preempt, the context running
is preempted once it has run a slice while another ready one has less virtual runtime; without it
(or without preemption) shares are kept packet by packet.

Defining property: over a span in which every context stays backlogged, each one's GPU time is its
weight's share of the node, within a packet or two (a packet is charged when it ends, and a
hardware queue slot holds one picked ahead).
"""

from __future__ import annotations

from pydantic import BaseModel

from wddmsim.policies import Duration, Policy


class FairShare(Policy):
    name = "fair"

    class Settings(BaseModel, extra="forbid"):
        slice: Duration | None = None

    def setup(self):
        self.vruntime = {}  # context -> GPU ns / weight
        self.floor = {}  # node -> min vruntime seen (never goes back)
        self.timers = {}  # node -> (context, slice timer)
        self.started = {}  # node -> when the packet running there started

    def _charge(self, packet, gpu_ns):
        ctx = packet.context
        self.vruntime[ctx] = self.vruntime.get(ctx, 0.0) + gpu_ns / ctx.weight

    def _min(self, node, but):
        """The least virtual runtime of ``node``'s contexts ready or running, ``but`` aside; it never
        goes back (CFS's min_vruntime)."""
        others = [c for c in self.os.ready(node) + [self.os.running(node)] if c is not None and c is not but]
        low = self.floor.get(node, 0.0)
        if others:
            low = self.floor[node] = max(low, min(self.vruntime.get(c, 0.0) for c in others))
        return low

    def on_ready(self, ctx, now):
        if any(p.context is ctx for p in self.os.queued_on_hardware(ctx.node)):
            return  # it never stopped: its last packets were picked and are still on the GPU
        self.vruntime[ctx] = max(self.vruntime.get(ctx, 0.0), self._min(ctx.node, but=ctx))

    def pick(self, node, now):
        return min(self.os.ready(node), key=lambda ctx: self.vruntime.get(ctx, 0.0))

    def on_completed(self, packet, node, gpu_ns, now):
        self._charge(packet, gpu_ns)

    def on_preempted(self, packet, node, gpu_ns, now):
        self._charge(packet, gpu_ns)

    # -- the slice (preemption) -------------------------------------------------------------------
    def on_started(self, packet, node, now):
        self.started[node] = now
        if self.settings.slice is None or not self.os.can_preempt:
            return
        held = self.timers.get(node)
        if held is not None and held[0] is packet.context:
            return  # the same context goes on: its slice keeps counting
        if held is not None:
            self.os.cancel_timer(held[1])
        self.timers[node] = (packet.context, self.os.set_timer(now + self.settings.slice, node))

    def on_timer(self, node, now):
        ctx, _ = self.timers.pop(node)
        if self.os.running(node) is not ctx:
            return
        others = [self.vruntime.get(c, 0.0) for c in self.os.ready(node) if c is not ctx]
        mine = self.vruntime.get(ctx, 0.0) + (now - self.started[node]) / ctx.weight  # with its run so far
        if others and min(others) < mine:
            self.os.preempt(node)
        else:
            self.timers[node] = (ctx, self.os.set_timer(now + self.settings.slice, node))
