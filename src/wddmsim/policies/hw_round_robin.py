"""Round robin on the GPU (hardware scheduling): the runnable contexts of an engine take it in turn,
one slice each, whatever their bands and priorities.

Source: time-slice round robin (Silberschatz, Galvin and Gagne, *Operating System Concepts*,
"Round-Robin Scheduling"), the band rules' quantum without bands, priorities or grace periods.

The turn goes to the runnable context started least recently; contexts never started go first, in
the order they became runnable. When a slice ends and another context is runnable, the firmware
preempts; when none is, the context keeps the engine and the next one to become runnable takes it
at once (its slice is over).

Settings: ``slice`` (default 2ms).

Defining property: while n contexts stay runnable on an engine, each holds it for one slice in
turn (plus the engine's preemption latency), so each gets 1/n of it; a band (focus, realtime) or
an in-process priority buys nothing.
"""

from __future__ import annotations

from pydantic import BaseModel, Field

from wddmsim.policies import Duration, HwPolicy


class RoundRobin(HwPolicy):
    name = "round_robin"

    class Settings(BaseModel, extra="forbid"):
        slice: Duration = Field(default=2_000_000, gt=0)

    def setup(self):
        self.turn = 0
        self.served = {}  # context -> the turn it was last started in
        self.timers = {}  # engine -> the timer of its running context's slice
        self.over = set()  # engines whose running context's slice is over

    def pick(self, node, now):
        # min() keeps the first of equals: of the never started, the one runnable longest.
        ctx = min(self.os.ready(node), key=lambda c: self.served.get(c, -1))
        self.turn += 1
        self.served[ctx] = self.turn
        return ctx

    def on_started(self, ctx, node, now):
        self.timers[node] = self.os.set_timer(now + self.settings.slice, node)

    def on_timer(self, node, now):
        del self.timers[node]
        if len(self.os.ready(node)) > 1:
            self.os.preempt(node)  # another context is waiting: its turn
        else:
            self.over.add(node)  # alone: it keeps the engine until someone else can run

    def on_ready(self, ctx, now):
        if ctx.node in self.over:
            self.over.discard(ctx.node)
            self.os.preempt(ctx.node)

    def on_stopped(self, ctx, node, gpu_ns, now):
        self.over.discard(node)
        timer = self.timers.pop(node, None)
        if timer is not None:
            self.os.cancel_timer(timer)

    on_preempted = on_stopped
