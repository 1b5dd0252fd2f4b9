"""Multilevel feedback queue: contexts that use much GPU time sink to lower levels, the highest
level with work goes first, round robin within a level, and a periodic boost lifts every context
back to the top.

Source: Corbató, Merwin-Daggett and Daley, "An Experimental Time-Sharing System" (AFIPS 1962),
in the form of Arpaci-Dusseau and Arpaci-Dusseau, *Operating Systems: Three Easy Pieces*, chapter
"Scheduling: The Multi-Level Feedback Queue" (its rules: the higher level runs; round robin
within a level; a new job starts at the top; once a job has used its allotment at a level, however
it spread it, it moves down; after a period S every job moves to the top); for GPUs, XSched's MLFQ
policy (github.com/XpuOS/xsched, sched/src/policy/mlfq.cpp).

Settings: ``levels`` (default 3), ``quanta`` (the GPU time a context may use at each level before
it sinks one, one duration per level; default 2 ms, 8 ms, 32 ms, ... four times longer each level
down; the last level keeps its contexts), ``boost`` (a duration, default 100 ms; 0: no boost),
``preempt`` (default true: where the driver can, a context running below the highest level with
work waiting is preempted).

A context's use is charged as it runs: when a packet ends, and, mid-packet, by a timer at the
instant its quantum runs out, so a long packet sinks its context when the quantum ends, not when
the packet does.

Defining property: a context of short, sparse packets never uses its quantum, so it stays at the
top and waits at most for the packet running (or less, with preemption) while a batch hog sunk
below waits behind it. The boost bounds starvation: every ``boost`` all contexts return to the
top, so a sunk context waits at most until the next boost (and then for its turn in the top
level's round), however busy the levels above it keep the node.
"""

from __future__ import annotations

from collections import deque

from pydantic import BaseModel, Field, field_validator

from wddmsim.policies import Duration, Policy


class Mlfq(Policy):
    name = "mlfq"

    class Settings(BaseModel, extra="forbid"):
        levels: int = Field(3, ge=1)
        quanta: list[Duration] | None = Field(None, validate_default=True)
        boost: Duration = 100_000_000
        preempt: bool = True

        @field_validator("quanta")
        @classmethod
        def _one_per_level(cls, quanta, info):
            levels = info.data.get("levels", 3)
            if quanta is None:
                return [2_000_000 * 4**i for i in range(levels)]  # 2 ms, 8 ms, 32 ms, ...
            if len(quanta) != levels:
                raise ValueError(f"give one per level ({levels} levels), got {len(quanta)}")
            return quanta

    def setup(self):
        self.level = {}  # context -> its level (0: the top)
        self.used = {}  # context -> GPU ns used at its level
        self.queues = {}  # node -> one deque of ready contexts per level
        self.running = {}  # node -> [context running, since when its run is not charged yet]
        self.timers = {}  # node -> the timer at which the running context's quantum runs out
        if self.settings.boost:
            self.os.set_timer(self.settings.boost, "boost")

    def _levels(self, node):
        return self.queues.setdefault(node, [deque() for _ in range(self.settings.levels)])

    def pick(self, node, now):
        q = next(q for q in self._levels(node) if q)
        ctx = q[0]
        q.rotate(-1)  # one packet, then the next of its level
        return ctx

    def on_ready(self, ctx, now):
        self._levels(ctx.node)[self.level.setdefault(ctx, 0)].append(ctx)
        self._check(ctx.node)

    def on_idle(self, ctx, now):
        self._levels(ctx.node)[self.level[ctx]].remove(ctx)

    # -- charging GPU time ------------------------------------------------------------------------
    def on_started(self, packet, node, now):
        self.running[node] = [packet.context, now]
        self._arm(node, now)
        self._check(node)

    def on_completed(self, packet, node, gpu_ns, now):
        self._charge(node, now)
        self.running.pop(node, None)

    def on_preempted(self, packet, node, gpu_ns, now):
        self._charge(node, now)
        self.running.pop(node, None)

    def _charge(self, node, now):
        run = self.running.get(node)
        if run is None:
            return
        ctx, since = run
        run[1] = now
        self.used[ctx] = self.used.get(ctx, 0) + now - since
        level = self.level.get(ctx, 0)
        if level + 1 < self.settings.levels and self.used[ctx] >= self.settings.quanta[level]:
            self._move(ctx, level + 1)

    def _move(self, ctx, level):
        queues = self._levels(ctx.node)
        if ctx in queues[self.level[ctx]]:
            queues[self.level[ctx]].remove(ctx)
            queues[level].append(ctx)
        self.level[ctx] = level
        self.used[ctx] = 0

    def _arm(self, node, now):
        timer = self.timers.pop(node, None)
        if timer is not None:
            self.os.cancel_timer(timer)
        ctx = self.running[node][0]
        level = self.level.get(ctx, 0)
        if level + 1 < self.settings.levels:
            left = self.settings.quanta[level] - self.used.get(ctx, 0)
            self.timers[node] = self.os.set_timer(now + max(0, left), node)

    def _check(self, node):
        """Preempt a context running below the highest level with work waiting (ready, or on the
        hardware queue behind it)."""
        run = self.running.get(node)
        if run is None or not (self.settings.preempt and self.os.can_preempt):
            return
        waiting = [self.level.get(c, 0) for c in self.os.ready(node)]
        waiting += [self.level.get(p.context, 0) for p in self.os.queued_on_hardware(node)[1:]]
        if waiting and min(waiting) < self.level.get(run[0], 0):
            self.os.preempt(node)

    def on_timer(self, token, now):
        if token == "boost":
            for node in self.running:
                self._charge(node, now)
            for ctx in list(self.level):
                self._move(ctx, 0)
            self.os.set_timer(now + self.settings.boost, "boost")
        else:  # the running context's quantum ran out on node ``token``: it sinks
            self.timers.pop(token, None)
            self._charge(token, now)
        for node in self.running:
            self._arm(node, now)
            self._check(node)
