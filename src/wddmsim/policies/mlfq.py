"""Multilevel feedback queue: contexts that use much GPU time sink to lower levels, the highest
level with work goes first, round robin within a level, and a periodic boost lifts every context
back to the top.

Source: Corbató, Merwin-Daggett and Daley, "An Experimental Time-Sharing System" (AFIPS 1962),
in the form of Arpaci-Dusseau and Arpaci-Dusseau, *Operating Systems: Three Easy Pieces*, chapter
"Scheduling: The Multi-Level Feedback Queue" (its rules 1-5: the higher level runs; round robin
within a level; a new job starts at the top; once a job has used its allotment at a level it
moves down; after a period S every job moves to the top).

Settings: ``levels`` (default 3), ``quanta`` (the GPU time a context may use at each level before
it sinks one, one duration per level; default 2 ms, 8 ms, 32 ms; the last level keeps its
contexts), ``boost`` (a duration, default 100 ms; none: no boost), ``preempt`` (default true: a
context that becomes ready above the level of the one running preempts it, where the driver can).

Defining property: a context of short, sparse packets never uses its quantum, so it stays at the
top and waits at most for the packet running (or less, with preemption) while a batch hog sunk
below waits behind it; the boost bounds starvation: a sunk context runs again within ``boost`` of
its last run, however busy the levels above it keep the node.
"""

from __future__ import annotations

from collections import deque

from pydantic import BaseModel, model_validator

from wddmsim.policies import Duration, Policy


class Mlfq(Policy):
    name = "mlfq"

    class Settings(BaseModel, extra="forbid"):
        levels: int = 3
        quanta: list[Duration] = [2_000_000, 8_000_000, 32_000_000]
        boost: Duration | None = 100_000_000
        preempt: bool = True

        @model_validator(mode="after")
        def _one_quantum_per_level(self):
            if self.levels < 1 or len(self.quanta) != self.levels:
                raise ValueError(f"quanta: give one per level ({self.levels} levels), got {len(self.quanta)}")
            return self

    def setup(self):
        self.level = {}  # context -> its level (0: the top)
        self.used = {}  # context -> GPU ns used at its level
        self.queues = {}  # node -> one deque of ready contexts per level
        if self.settings.boost:
            self.os.set_timer(self.settings.boost, "boost")

    def _levels(self, node):
        return self.queues.setdefault(node, [deque() for _ in range(self.settings.levels)])

    def on_ready(self, ctx, now):
        level = self.level.setdefault(ctx, 0)
        self._levels(ctx.node)[level].append(ctx)
        self._check(ctx.node)

    def on_started(self, packet, node, now):
        self._check(node)

    def _check(self, node):
        """Preempt a context running below the highest level with work (OSTEP's rule 1)."""
        running = self.os.running(node)
        if running is None or not (self.settings.preempt and self.os.can_preempt):
            return
        top = next((i for i, q in enumerate(self._levels(node)) if q), None)
        if top is not None and top < self.level.get(running, 0):
            self.os.preempt(node)

    def on_idle(self, ctx, now):
        self._levels(ctx.node)[self.level[ctx]].remove(ctx)

    def pick(self, node, now):
        q = next(q for q in self._levels(node) if q)
        ctx = q[0]
        q.rotate(-1)  # one packet, then the next of its level
        return ctx

    def _charge(self, packet, gpu_ns):
        ctx = packet.context
        self.used[ctx] = self.used.get(ctx, 0) + gpu_ns
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

    def on_completed(self, packet, node, gpu_ns, now):
        self._charge(packet, gpu_ns)

    def on_preempted(self, packet, node, gpu_ns, now):
        self._charge(packet, gpu_ns)

    def on_timer(self, token, now):
        for ctx in list(self.level):
            self._move(ctx, 0)
        self.os.set_timer(now + self.settings.boost, "boost")
