"""Scheduling policies: which ready context's next packet goes to a node's hardware queue.

A context is *ready* on its node while its software queue holds packets. The scheduler tells the
policy when a context becomes ready or idle, and asks it to :meth:`pick` whenever the node's
hardware queue has a free slot. Packets of one context always leave in order; a policy only
chooses between contexts.

- :class:`StrictPriority`: the highest effective priority (process class, then context priority)
  wins; equal priorities take turns packet by packet. A low-priority context starves while a
  higher one has work; that is the point of the policy.
- :class:`PriorityQuantum`: Windows-like. Equal priorities take turns by *quantum*, round robin:
  the context holding the node keeps it while it has work, for up to ``quantum`` ns of virtual
  time, then it goes to the back of its priority's ready list and the next ready context of that
  priority gets its turn, so with n ready contexts of one priority none waits more than about
  (n - 1) quanta plus one packet. Higher priorities still win, but a ready context that has
  waited ``starvation`` ns (default 10 quanta) without running is boosted above everyone for one
  pick, and the boost buys it real GPU time: once it runs, nothing preempts it for one quantum
  (or until its turn ends), so nothing starves forever. With a preempting driver the starved
  context also preempts the node the instant it has starved (:meth:`PriorityQuantum.preempt_candidate`),
  so the boost does not wait for a free hardware-queue slot and the packets queued there.

Windows' CPU scheduler, which the GPU scheduler's priority classes mirror, behaves the same way:
"Scheduling Priorities" (https://learn.microsoft.com/windows/win32/procthread/scheduling-priorities)
assigns time slices round-robin to the threads of the highest priority, and "Priority Boosts"
(https://learn.microsoft.com/windows/win32/procthread/priority-boosts) gives a starved thread a
boost that lets it run.

The documentation leaves the legacy scheduler's policy open (quantum length, priority boost, how
it picks the next context, when it decides to preempt); the quantum, the turn taking and the
starvation boost here are the model's decisions, recorded in docs/scheduling.md.
"""

from __future__ import annotations

from collections import deque


class Policy:
    """Base class: per node, a deque of ready contexts for each effective priority."""

    name = "base"

    def __init__(self):
        self._levels: dict[int, dict[int, deque]] = {}

    def _node(self, node: int) -> dict[int, deque]:
        levels = self._levels.get(node)
        if levels is None:
            levels = self._levels[node] = {}
        return levels

    def ready(self, ctx, now: int) -> None:
        """``ctx`` has packets queued now."""
        levels = self._node(ctx.node)
        q = levels.get(ctx.effective_priority)
        if q is None:
            q = levels[ctx.effective_priority] = deque()
        q.append(ctx)
        ctx.ready_since = now

    def idle(self, ctx) -> None:
        """``ctx`` has no packet left in its software queue."""
        levels = self._node(ctx.node)
        q = levels[ctx.effective_priority]
        q.remove(ctx)
        if not q:
            del levels[ctx.effective_priority]

    def has_ready(self, node: int) -> bool:
        return bool(self._levels.get(node))

    def pick(self, node: int, now: int):
        """The context whose next packet goes to ``node`` now, or None."""
        raise NotImplementedError

    #: ns a context may hold a node while an equal-priority context waits (None: no limit)
    quantum: int | None = None
    #: ns a context may wait without running before it is boosted above higher priorities (None: never)
    starvation: int | None = None

    @staticmethod
    def waiting_since(ctx) -> int | None:
        """Since when ``ctx`` has waited without running, for the starvation boost: from when its
        wait began (``wait_since``: it has work the scheduler could run, and none of it runs) or,
        if later, from when a packet of it was last picked; None while it is not waiting (it runs,
        or something other than the GPU holds it back)."""
        since = ctx.wait_since
        if since < 0:
            return None
        return since if since >= ctx.last_dispatch else ctx.last_dispatch

    def preempt_candidate(self, node: int, running, run_since: int, now: int):
        """``(context, when)``: the ready context that should preempt ``running`` on ``node`` now
        (a higher effective priority, or an equal one once ``running`` has held the node for a
        quantum since ``run_since``), else ``(None, the instant to look again or None)``."""
        levels = self._levels.get(node)
        if not levels:
            return None, None
        top = max(levels)
        mine = running.effective_priority
        if top > mine:
            return levels[top][0], None
        if top < mine or self.quantum is None:
            return None, None
        for ctx in levels[top]:
            if ctx is not running:
                end = run_since + self.quantum
                return (ctx, None) if now >= end else (None, end)
        return None, None

    def preempting(self, running, cand) -> None:
        """The scheduler asked to preempt ``running`` so that ``cand`` runs next."""

    def shielded(self, node: int, running, run_since: int, now: int) -> int | None:
        """The instant until which ``running`` (on ``node`` since ``run_since``) may not be
        preempted, or None."""
        return None

    def started(self, node: int, ctx) -> None:
        """A packet of ``ctx`` began to run on ``node``."""

    def reprioritize(self, contexts, change) -> None:
        """``change()`` alters the effective priority of ``contexts``
        (D3DKMTSetContextSchedulingPriority, D3DKMTSetProcessSchedulingPriorityClass). A ready
        context leaves its old level and joins the back of its new one; its packets and their order
        are untouched, and the time it has been ready (what the starvation boost counts) is kept."""
        moved = []
        for ctx in contexts:
            levels = self._node(ctx.node)
            old = ctx.effective_priority
            q = levels.get(old)
            if q is not None and ctx in q:
                q.remove(ctx)
                if not q:
                    del levels[old]
                moved.append(ctx)
        change()
        for ctx in moved:
            levels = self._node(ctx.node)
            new = levels.get(ctx.effective_priority)
            if new is None:
                new = levels[ctx.effective_priority] = deque()
            new.append(ctx)
            ctx.turn_start = -1


class StrictPriority(Policy):
    """Highest priority first; round robin packet by packet within a priority."""

    name = "strict_priority"

    def pick(self, node: int, now: int):
        levels = self._levels.get(node)
        if not levels:
            return None
        q = levels[max(levels)]
        ctx = q[0]
        q.rotate(-1)
        return ctx


class PriorityQuantum(Policy):
    """Priority with turns of ``quantum`` ns within a priority and a starvation boost."""

    name = "priority_quantum"

    def __init__(self, quantum: int = 2_000_000, starvation: int | None = None):
        super().__init__()
        if quantum <= 0:
            raise ValueError("quantum must be positive")
        self.quantum = quantum
        self.starvation = starvation if starvation is not None else 10 * quantum
        self.boosts = 0
        #: per node: the context the last starvation boost was for, and whether it has run since
        self._boosted: dict[int, list] = {}

    def preempting(self, running, cand) -> None:
        """A preemption for ``cand`` ends ``running``'s turn (``running`` None: the preempted work is
        back in the queues): ``cand`` is first in line at its level. When the two share a priority
        the turn ended by quantum, and ``running`` goes to the back of the line (round robin), so
        every ready context of the priority gets its turn before ``running`` comes again."""
        levels = self._levels.get(cand.node, {})
        if running is not None:
            running.turn_start = -1
            if running.effective_priority == cand.effective_priority:
                mine = levels.get(running.effective_priority)
                if mine is not None and running in mine:
                    mine.remove(running)
                    mine.append(running)
        q = levels.get(cand.effective_priority)
        if q is not None and cand in q:
            q.remove(cand)
            q.appendleft(cand)
            cand.turn_start = -1

    def _starving(self, levels: dict, below: int, now: int):
        """``(context, None)``: the ready context below priority ``below`` that has waited longest
        without running, once that is ``starvation`` ns or more; else ``(None, the instant the
        first of them will have waited that long, or None)``. A boosted packet preempted before it
        ran does not count as running: its wait goes on."""
        starving = None
        at = None
        limit = self.starvation
        for prio, q in levels.items():
            if prio >= below:
                continue
            for c in q:
                since = self.waiting_since(c)
                if since is None:
                    continue
                waited = now - since
                if waited >= limit:
                    if starving is None or waited > starving[0]:
                        starving = (waited, c)
                elif at is None or since + limit < at:
                    at = since + limit
        return (starving[1], None) if starving is not None else (None, at)

    def preempt_candidate(self, node: int, running, run_since: int, now: int):
        """As :meth:`Policy.preempt_candidate`, and a ready context of lower priority than
        ``running`` that has starved (waited ``starvation`` ns without running) preempts it: the
        boost picks it ahead of higher priorities, and it runs now, not after the packets of
        ``running`` already on the hardware queue."""
        cand, when = super().preempt_candidate(node, running, run_since, now)
        if cand is not None:
            return cand, when
        levels = self._levels.get(node)
        if not levels:
            return None, when
        starving, at = self._starving(levels, running.effective_priority, now)
        if starving is not None:
            return starving, None
        if at is not None and (when is None or at < when):
            when = at
        return None, when

    def shielded(self, node: int, running, run_since: int, now: int) -> int | None:
        """A boosted context, once running, keeps the node for one quantum."""
        b = self._boosted.get(node)
        if b is None or b[0] is not running:
            return None
        end = run_since + self.quantum
        return end if now < end else None

    def started(self, node: int, ctx) -> None:
        """The boost ends when another context runs after the boosted one did."""
        b = self._boosted.get(node)
        if b is None:
            return
        if b[0] is ctx:
            b[1] = True
        elif b[1]:
            del self._boosted[node]

    def pick(self, node: int, now: int):
        levels = self._levels.get(node)
        if not levels:
            return None
        top = max(levels)
        # Starvation boost: the longest-waiting ready context below the top, if it waited too long.
        if len(levels) > 1:
            starving, _at = self._starving(levels, top, now)
            if starving is not None:
                self.boosts += 1
                ctx = starving
                ctx.last_dispatch = now
                self._boosted[node] = [ctx, False]
                return ctx
        q = levels[top]
        ctx = q[0]
        if ctx.turn_start < 0 or now - ctx.turn_start >= self.quantum:
            if ctx.turn_start >= 0 and len(q) > 1:
                # Quantum used up: the next context of this priority takes its turn.
                ctx.turn_start = -1
                q.rotate(-1)
                ctx = q[0]
            ctx.turn_start = now
        ctx.last_dispatch = now
        return ctx

    def idle(self, ctx) -> None:
        super().idle(ctx)
        ctx.turn_start = -1

    def ready(self, ctx, now: int) -> None:
        super().ready(ctx, now)
        ctx.turn_start = -1


def make_policy(name: str, quantum: int = 2_000_000) -> Policy:
    """A policy by its scenario name."""
    if name == "strict_priority":
        return StrictPriority()
    if name == "priority_quantum":
        return PriorityQuantum(quantum)
    raise ValueError(f"unknown scheduling policy {name!r}; use strict_priority or priority_quantum")
