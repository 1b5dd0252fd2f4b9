"""Least laxity first: the ready context whose next job has the least slack goes first, slack
(laxity) being its deadline minus now minus the GPU work the job still needs.

Source: Mok, "Fundamental Design Problems of Distributed Systems for the Hard-Real-Time
Environment", PhD thesis, MIT, 1983 (the least-laxity-first algorithm, optimal on one processor as
EDF is); for GPUs, XSched's laxity-based policy (Shen et al., OSDI 2025).

The OS does not know a packet's work before it runs, so the work a job still needs is estimated:
the context's mean GPU time per packet so far (measured, ``on_completed`` and ``on_preempted``)
times the packets of the job not yet started (counted from ``on_queued``, ``on_started`` and
``on_preempted``). Before a context's first packet completes its estimate is 0, and its laxity is
its time to the deadline (EDF's order). Contexts without a deadline go after every context with
one, first queued first. Laxity is used to pick only: this policy never preempts.

Settings: none.

Defining property: of two jobs, the one with less slack goes first even when its deadline is the
later one (a frame with much work left and a later deadline goes before a frame with little work
and an earlier deadline, where EDF would take the earlier deadline).
"""

from __future__ import annotations

from collections import Counter

from wddmsim.policies import Policy

NEVER = float("inf")


class LeastLaxity(Policy):
    name = "llf"

    def setup(self):
        self.gpu = Counter()  # context -> GPU ns it has run
        self.done = Counter()  # context -> packets it has completed
        self.waiting = {}  # context -> Counter: job release -> its packets not yet started
        self.running = set()  # (context, seq) of the packets started and not yet ended

    def laxity(self, ctx, now):
        head = ctx.head
        if head.deadline_at is None:
            return NEVER
        per_packet = self.gpu[ctx] / self.done[ctx] if self.done[ctx] else 0
        return head.deadline_at - now - per_packet * self.waiting[ctx][head.release]

    def pick(self, node, now):
        return min(self.os.ready(node), key=lambda ctx: (self.laxity(ctx, now), ctx.head.queued))

    def _count(self, packet, n):
        jobs = self.waiting.setdefault(packet.context, Counter())
        jobs[packet.release] += n
        if jobs[packet.release] <= 0:
            del jobs[packet.release]

    def on_queued(self, packet, now):
        self._count(packet, +1)

    def on_started(self, packet, node, now):
        self.running.add((packet.context, packet.seq))
        self._count(packet, -1)

    def on_preempted(self, packet, node, gpu_ns, now):
        self.gpu[packet.context] += gpu_ns
        if (packet.context, packet.seq) in self.running:  # it had started: it waits again
            self.running.discard((packet.context, packet.seq))
            self._count(packet, +1)

    def on_completed(self, packet, node, gpu_ns, now):
        self.running.discard((packet.context, packet.seq))
        self.gpu[packet.context] += gpu_ns
        self.done[packet.context] += 1
