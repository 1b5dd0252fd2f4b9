"""Utilization partition: each context with a ``utilization`` hint gets at most that fraction of
its node's GPU time in every window; a context at its cap is not picked until the next window.

Source: resource reservations with a budget replenished every period, as in Mercer, Savage and
Tokuda, "Processor Capacity Reserves for Multimedia Operating Systems" (ICMCS 1994) and the
constant bandwidth server of Abeni and Buttazzo (RTSS 1998), here with fixed windows (the budget
refills at each multiple of ``window``). XSched's utilization-partition policy (Shen et al.,
"XSched: Preemptive Scheduling for Diverse XPUs", OSDI 2025; github.com/XpuOS/xsched,
sched/src/policy/up.cpp) gives each queue time slices in proportion to its utilization and skips
the queues with no work; here the hint is a cap, as a reservation's budget is.

In each window a context may run ``utilization x window`` ns (no cap without the hint). Among
the contexts under their caps the first queued goes first. The GPU time of a packet counts in the
window where it runs (a packet that crosses a window's end is split there). Where the driver can
preempt, a timer stops the running context the instant its budget is spent; without preemption
a context overruns by what it had on the hardware queue when its budget ran out. A node whose
ready contexts are all at their caps stays idle until the window ends (a timer is always set for
it); the cap holds even when the GPU would otherwise idle.

Settings: ``window`` (a duration, default 10 ms).

Defining property: a context's GPU time in every window is at most its hint's share of the window
(exactly the share, to the preemption latency, while it stays backlogged).
"""

from __future__ import annotations

from pydantic import BaseModel

from wddmsim.policies import Duration, Policy


class UtilizationPartition(Policy):
    name = "partition"

    class Settings(BaseModel, extra="forbid"):
        window: Duration = 10_000_000

    def setup(self):
        self.used = {}  # context -> GPU ns it ran in the current window (packets ended)
        self.running = {}  # node -> (context, since when it runs in this window)
        self.budget_timer = {}  # node -> the timer that stops the running context at its cap
        self.os.set_timer(self.settings.window, "window")

    def budget(self, ctx):
        return None if ctx.utilization is None else ctx.utilization * self.settings.window

    def spent(self, ctx, now):
        ran = self.running.get(ctx.node)
        return self.used.get(ctx, 0) + (now - ran[1] if ran is not None and ran[0] is ctx else 0)

    def under_cap(self, ctx, now):
        cap = self.budget(ctx)
        return cap is None or self.spent(ctx, now) < cap

    def pick(self, node, now):
        allowed = [ctx for ctx in self.os.ready(node) if self.under_cap(ctx, now)]
        # None: all are capped; the window timer wakes the node when budgets refill.
        return min(allowed, key=lambda ctx: ctx.head.queued) if allowed else None

    # -- accounting -------------------------------------------------------------------------------
    def on_started(self, packet, node, now):
        self.running[node] = (packet.context, now)
        self._arm(node, now)

    def _ended(self, packet, node, now):
        ran = self.running.pop(node, None)
        if ran is not None:
            self.used[ran[0]] = self.used.get(ran[0], 0) + now - ran[1]
        timer = self.budget_timer.pop(node, None)
        if timer is not None:
            self.os.cancel_timer(timer)

    def on_completed(self, packet, node, gpu_ns, now):
        self._ended(packet, node, now)

    def on_preempted(self, packet, node, gpu_ns, now):
        self._ended(packet, node, now)

    def _arm(self, node, now):
        """Where the driver preempts: a timer at the instant the running context's budget is spent."""
        timer = self.budget_timer.pop(node, None)
        if timer is not None:
            self.os.cancel_timer(timer)
        ctx = self.running[node][0]
        cap = self.budget(ctx)
        if cap is not None and self.os.can_preempt:
            at = now + max(0, round(cap - self.spent(ctx, now)))
            self.budget_timer[node] = self.os.set_timer(at, node)

    def on_timer(self, token, now):
        if token == "window":
            self.used = {}
            for node, (ctx, _) in list(self.running.items()):
                self.running[node] = (ctx, now)  # what it ran before now counted in the last window
                self._arm(node, now)
            self.os.set_timer(now + self.settings.window, "window")
        else:
            self.budget_timer.pop(token, None)
            ran = self.running.get(token)
            if ran is not None and not self.under_cap(ran[0], now):
                self.os.preempt(token)
