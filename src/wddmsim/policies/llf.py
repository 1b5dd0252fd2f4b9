"""Least laxity first: the ready context whose next job has the least slack goes first, slack
(laxity) being the job's deadline minus now minus the GPU work it still needs; a context that
becomes ready with less slack than the work on the node preempts it, where the driver can.

Source: Mok, "Fundamental Design Problems of Distributed Systems for the Hard-Real-Time
Environment", PhD thesis, MIT, 1983 (the least-laxity-first algorithm, optimal on one processor
as EDF is); for GPUs, XSched's laxity policy (Shen et al., "XSched: Preemptive Scheduling for
Diverse XPUs", OSDI 2025; github.com/XpuOS/xsched, sched/src/policy/lax.cpp).

The OS does not know a packet's work before it runs, so the work a job still needs is estimated:
the context's mean GPU time per packet so far (measured through ``on_completed`` and
``on_preempted``) times the job's packets, less the GPU time the job has had (its packet running
included, so a running job's slack holds still). Before a context's first packet completes the
estimate is 0 and its laxity is its time to the deadline (EDF's order). Contexts without a
deadline go after every context with one, first queued first. Laxity is compared when a context
becomes ready and when a packet starts, never while packets run, so two jobs do not trade the GPU
back and forth (the thrashing of continuous LLF).

Settings: ``preempt`` (default true): preempt for less laxity (only with ``os.can_preempt``).

Defining property: of two jobs, the one with less slack goes first even when its deadline is the
later one: a frame with much work left and a later deadline goes before a frame with little work
and an earlier deadline (where EDF takes the earlier deadline), until their slacks cross.
"""

from __future__ import annotations

from collections import Counter

from pydantic import BaseModel

from wddmsim.policies import Policy

NEVER = float("inf")


class LeastLaxity(Policy):
    name = "llf"

    class Settings(BaseModel, extra="forbid"):
        preempt: bool = True

    def setup(self):
        self.gpu = Counter()  # context -> GPU ns it has run
        self.done = Counter()  # context -> packets it has completed
        self.jobs = {}  # context -> {job release: [packets queued, packets completed, GPU ns run]}
        self.running = {}  # node -> (context, job release, since when) of the packet running there

    def laxity(self, packet, now):
        """The slack of ``packet``'s job: its deadline, less now, less the work it still needs."""
        if packet.deadline_at is None:
            return NEVER
        ctx = packet.context
        queued, _, ran = self._job(packet)
        run = self.running.get(ctx.node)
        if run is not None and run[0] is ctx and run[1] == packet.release:
            ran += now - run[2]  # running now: its slack holds still
        per_packet = self.gpu[ctx] / self.done[ctx] if self.done[ctx] else 0
        return packet.deadline_at - now - max(0, per_packet * queued - ran)

    def pick(self, node, now):
        return min(self.os.ready(node), key=lambda ctx: (self.laxity(ctx.head, now), ctx.head.queued))

    # -- the estimate -----------------------------------------------------------------------------
    def _job(self, packet):
        return self.jobs.setdefault(packet.context, {}).setdefault(packet.release, [0, 0, 0])

    def on_queued(self, packet, now):
        self._job(packet)[0] += 1

    def on_started(self, packet, node, now):
        self.running[node] = (packet.context, packet.release, now)
        self._check(node, now)

    def on_completed(self, packet, node, gpu_ns, now):
        self._ran(packet, node, gpu_ns)
        ctx = packet.context
        self.gpu[ctx] += gpu_ns
        self.done[ctx] += 1
        job = self._job(packet)
        job[1] += 1
        if job[1] >= job[0]:
            del self.jobs[ctx][packet.release]

    def on_preempted(self, packet, node, gpu_ns, now):
        self._ran(packet, node, gpu_ns)
        self.gpu[packet.context] += gpu_ns

    def _ran(self, packet, node, gpu_ns):
        self.running.pop(node, None)
        self._job(packet)[2] += gpu_ns

    # -- preemption -------------------------------------------------------------------------------
    def on_ready(self, ctx, now):
        self._check(ctx.node, now)

    def _check(self, node, now):
        if not (self.settings.preempt and self.os.can_preempt):
            return
        waiting = min((self.laxity(ctx.head, now) for ctx in self.os.ready(node)), default=NEVER)
        if waiting < NEVER and any(self.laxity(p, now) > waiting for p in self.os.queued_on_hardware(node)):
            self.os.preempt(node)
